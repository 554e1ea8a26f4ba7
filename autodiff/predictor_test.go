package autodiff

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/nn"
)

// TestPredictorFit checks a predictor's validation fit against the
// evaluator's own per-example log-likelihoods (the same softmax, computed
// by the plan's backward pass) and against the accuracy of the logits'
// largest class, on more examples than one predictor batch holds (the
// batches' seam is crossed), for both activations.
func TestPredictorFit(t *testing.T) {
	for _, act := range []nn.Activation{nn.ReLU, nn.Tanh} {
		t.Run(act.String(), func(t *testing.T) {
			pot, spec, rng := toyPotential(t, 11, act, 37)
			theta := make([]float64, spec.NumParams())
			spec.Init(theta, rng)
			model, err := spec.Model()
			if err != nil {
				t.Fatal(err)
			}
			ev, err := NewPredictorFor(EnginePlan, model, 8, Float64) // 37 examples: 5 batches
			if err != nil {
				t.Fatal(err)
			}
			p := &Predictor{Eval: ev}
			logLik, acc, err := p.Fit(theta, pot.Data)
			if err != nil {
				t.Fatal(err)
			}
			idx := make([]int, pot.Data.N)
			for i := range idx {
				idx[i] = i
			}
			ll := make([]float64, pot.Data.N)
			if err := pot.LogLik(theta, idx, ll); err != nil {
				t.Fatal(err)
			}
			want := 0.0
			for _, v := range ll {
				want += v
			}
			want /= float64(pot.Data.N)
			if math.Abs(logLik-want) > 1e-12*math.Abs(want) {
				t.Errorf("Fit's log-likelihood %.15g, the evaluator's %.15g", logLik, want)
			}
			right, seen := 0, 0
			err = p.Each(theta, pot.Data, func(i int, z []float64) {
				if i != seen {
					t.Fatalf("Each: example %d after %d", i, seen)
				}
				seen++
				if ArgMax(z) == pot.Data.Labels[i] {
					right++
				}
			})
			if err != nil || seen != pot.Data.N {
				t.Fatalf("Each saw %d of %d examples: %v", seen, pot.Data.N, err)
			}
			if wantAcc := float64(right) / float64(pot.Data.N); acc != wantAcc {
				t.Errorf("Fit's accuracy %g, the logits' %g", acc, wantAcc)
			}
		})
	}
}

// TestLogSumExpArgMax checks the two helpers on values that overflow a
// naive sum and on ties.
func TestLogSumExpArgMax(t *testing.T) {
	cases := []struct {
		z    []float64
		lse  float64
		best int
	}{
		{[]float64{0, 0}, math.Log(2), 0},
		{[]float64{1000, 1000, 999}, 1000 + math.Log(2+math.Exp(-1)), 0},
		{[]float64{-3, 5, 5}, 5 + math.Log(2+math.Exp(-8)), 1},
		{[]float64{-1000}, -1000, 0},
	}
	for _, c := range cases {
		if got := LogSumExp(c.z); math.Abs(got-c.lse) > 1e-12*math.Abs(c.lse) {
			t.Errorf("LogSumExp(%v) = %.15g, want %.15g", c.z, got, c.lse)
		}
		if got := ArgMax(c.z); got != c.best {
			t.Errorf("ArgMax(%v) = %d, want %d", c.z, got, c.best)
		}
	}
}
