package datasets_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// ExampleBatches iterates over one epoch of minibatches; the last batch holds
// the remainder.
func ExampleBatches() {
	rng := rand.New(rand.NewPCG(1, 2))
	b, _ := datasets.NewBatches(10, 4, rng)
	for i := 0; i < 3; i++ {
		fmt.Println(len(b.Next(rng)))
	}
	// Output:
	// 4
	// 4
	// 2
}
