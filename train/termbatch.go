package train

import (
	"github.com/ptsghmc/ptsghmc/nn"
)

// termBatch returns the batch of the exchange tests' evaluators.
func termBatch(m nn.Model) int {
	if m.MLP != nil {
		return 1024
	}
	return 128
}
