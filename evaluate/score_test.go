package evaluate

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// TestScoreByHand checks the metrics on three examples computed by hand.
func TestScoreByHand(t *testing.T) {
	probs := []float64{
		0.7, 0.2, 0.1, // label 0: correct, confidence 0.7
		0.1, 0.3, 0.6, // label 1: wrong, confidence 0.6
		0.05, 0.05, 0.9, // label 2: correct, confidence 0.9
	}
	m := mustScore(t, probs, []int{0, 1, 2}, 3)
	acc := 2.0 / 3
	nll := -(math.Log(0.7) + math.Log(0.3) + math.Log(0.9)) / 3
	brier := ((0.09 + 0.04 + 0.01) + (0.01 + 0.49 + 0.36) + (0.0025 + 0.0025 + 0.01)) / 3
	// 15 bins of width 1/15: 0.6 -> bin 9 (0.6, 0.6667], 0.7 -> bin 10, 0.9 -> bin 13;
	// each bin holds one example: ECE = (|1-0.7| + |0-0.6| + |1-0.9|)/3
	ece := (0.3 + 0.6 + 0.1) / 3
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"accuracy", m.Accuracy, acc}, {"nll", m.NLL, nll}, {"brier", m.Brier, brier}, {"ece", m.ECE, ece}} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestLastMeanLogLik checks the held-out log-likelihood of a sample (the
// trace R-hat and ESS are computed from) against the log-softmax of its
// logits, where a label's probability underflows too: it was floored at
// log(1e-300) = -690.8, a confidently wrong sample's -1000 read as
// -690.8.
func TestLastMeanLogLik(t *testing.T) {
	for _, tc := range []struct {
		name   string
		logits [][]float64 // per example; labels 0
		want   float64
	}{
		{"ordinary", [][]float64{{0, 0}, {math.Log(3), 0}}, (math.Log(0.5) + math.Log(0.75)) / 2},
		{"underflow", [][]float64{{0, 1000}, {0, 0}}, (-1000 + math.Log(0.5)) / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.logits)
			e := &Ensemble{Data: &datasets.Dataset{N: n, Classes: 2, Labels: make([]int, n)}, Sum: make([]float64, 2*n), Ent: make([]float64, n),
				Last: make([]float64, 2*n), LastLogLik: make([]float64, n), LogLik: make([]float64, n)}
			for i, z := range tc.logits {
				e.accumulate(i, z)
			}
			if got := e.lastMeanLogLik(); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("mean log-likelihood %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEnsembleNLLUnderflow checks the ensemble's NLL where every sample's
// probability of a label underflows (log-probabilities -1000 and -1200):
// -log of the mean probability from the log-sum-exp of the samples'
// log-probabilities, not -log of Score's floor (690.8); other examples
// as Score computes them.
func TestEnsembleNLLUnderflow(t *testing.T) {
	e := &Ensemble{Data: &datasets.Dataset{N: 2, Classes: 2, Labels: []int{0, 0}}, Sum: make([]float64, 4), Ent: make([]float64, 2),
		Last: make([]float64, 4), LastLogLik: make([]float64, 2), LogLik: make([]float64, 2)}
	for _, z := range [][]float64{{0, 1000, 1, 0}, {0, 1200, 0, 0}} {
		e.accumulate(0, z[:2])
		e.accumulate(1, z[2:])
		e.Count++
	}
	under := 1000 - math.Log1p(math.Exp(-200)) + math.Log(2)
	p1 := (math.E/(1+math.E) + 0.5) / 2
	if got, want := e.Metrics().NLL, (under-math.Log(p1))/2; math.Abs(got-want) > 1e-9 {
		t.Errorf("NLL %v, want %v", got, want)
	}
	// The paired comparison's per-example terms sum to the same NLL.
	f := newExampleFigures(e.Probs(), e.Data.Labels, 2)
	f.unfloor(predictorScores{Probs: e.Probs(), Ens: e}, e.Data.Labels, 2)
	if got, want := f.weighted([]int32{1, 1})[1], e.Metrics().NLL; math.Abs(got-want) > 1e-9 {
		t.Errorf("paired terms: NLL %v, Metrics' %v", got, want)
	}
	// Without an underflow, Metrics' NLL is Score's, bit for bit.
	e.Data.Labels = []int{1, 0}
	if got, want := e.Metrics().NLL, mustScore(t, e.Probs(), e.Data.Labels, 2).NLL; got != want {
		t.Errorf("NLL %v, Score's %v", got, want)
	}
}
