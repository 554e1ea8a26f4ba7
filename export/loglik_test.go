package export

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestExampleLogLikUnclipped: a draw whose logits are (0, 0, -1000) on
// every image gives an image of label 2 the log-likelihood -1000 - log 2,
// not the log(1e-300) = -690.8 a clipped probability gives, and an image
// of label 0 -log 2.
func TestExampleLogLikUnclipped(t *testing.T) {
	cfg := runspec.DefaultConfig()
	cfg.Arch = "16-8-3"
	m, err := cfg.BuildModel(runspec.DefaultSetup().Models)
	if err != nil {
		t.Fatal(err)
	}
	data := &datasets.Dataset{N: 2, D: 16, X: make([]float32, 32), Classes: 3, Labels: []int{2, 0}}
	ens, err := evaluate.NewModelEnsembleOn(cfg.RunEngine(m), m, data)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, m.NumParams()) // zero weights: the logits are b1
	for _, l := range m.Layout {
		if l.Name == "b1" {
			copy(theta[l.Offset:], []float64{0, 0, -1000})
		}
	}
	ll, err := exampleLogLik(ens, theta)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-1000 - math.Log(2), -math.Log(2)}
	for i := range want {
		if math.Abs(ll[i]-want[i]) > 1e-9 {
			t.Errorf("image %d (label %d): log-likelihood %v, want %v", i, data.Labels[i], ll[i], want[i])
		}
	}
}
