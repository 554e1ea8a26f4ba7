package autodiff_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestPotentialMinibatch checks that Gradient evaluates the minibatch it is
// given (the evaluator's gradient on those examples and that scale), draws
// from its own order only when given none, and refuses minibatches it
// cannot evaluate with a message saying why.
func TestPotentialMinibatch(t *testing.T) {
	model, d, ev := linearSetup(t)
	theta := []float64{0.3, -0.7, 1.1, 0.2}
	idx := []int{1, 5, 9, 20, 29}
	want := make([]float64, 4)
	wantU, err := ev.Eval(theta, d, idx, 6, want, nil)
	if err != nil {
		t.Fatal(err)
	}
	own, err := autodiff.NewPotential(model, d, ev, 5, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	bare := &autodiff.Potential{Model: model, Data: d, Eval: ev}
	cases := []struct {
		name string
		pot  *autodiff.Potential
		mb   sampler.Minibatch
		err  string // "" when it must evaluate idx at scale 6
	}{
		{"given", bare, sampler.Minibatch{Index: idx, Scale: 6}, ""},
		{"given, own order unused", own, sampler.Minibatch{Index: idx, Scale: 6}, ""},
		{"none and no order", bare, sampler.Minibatch{}, "no minibatch given"},
		{"zero scale", bare, sampler.Minibatch{Index: idx}, "scale"},
		{"too large", bare, sampler.Minibatch{Index: make([]int, 9), Scale: 1}, "exceeds"},
	}
	for _, c := range cases {
		grad := make([]float64, 4)
		u, err := c.pot.Gradient(theta, grad, c.mb, rand.New(rand.NewPCG(2, 2)))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if u != wantU {
			t.Errorf("%s: U %v, want %v", c.name, u, wantU)
		}
		for i := range grad {
			if grad[i] != want[i] {
				t.Errorf("%s: gradient %v, want %v", c.name, grad, want)
				break
			}
		}
	}
	// none given: the next minibatch of its own order
	grad := make([]float64, 4)
	if _, err := own.Gradient(theta, grad, sampler.Minibatch{}, rand.New(rand.NewPCG(2, 2))); err != nil {
		t.Fatal(err)
	}
	if own.Batches.Pos != 5 {
		t.Errorf("own order at position %d after one minibatch of 5, want 5", own.Batches.Pos)
	}
}
