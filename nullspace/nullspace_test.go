package nullspace

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// subspaceData returns n inputs of d values that span exactly the first k
// coordinates rotated by a fixed random orthogonal-ish mixing (the last d-k
// directions carry nothing), and the mixing's rows.
func subspaceData(n, d, k int, rng *rand.Rand) *datasets.Dataset {
	mix := make([]float64, k*d)
	for i := range mix {
		mix[i] = rng.NormFloat64()
	}
	x := make([]float32, n*d)
	for e := 0; e < n; e++ {
		for j := 0; j < k; j++ {
			c := rng.NormFloat64() * float64(j+1)
			for i := 0; i < d; i++ {
				x[e*d+i] += float32(c * mix[j*d+i])
			}
		}
	}
	return &datasets.Dataset{N: n, D: d, X: x}
}

func TestFitFindsTheDirectionsTheDataLeaveOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ d, k int }{{6, 3}, {10, 1}, {12, 9}} {
		data := subspaceData(500, tc.d, tc.k, rng)
		p, err := Fit(data, 1-1e-9, 5) // every direction the data have
		if err != nil {
			t.Fatal(err)
		}
		if p.K != tc.k {
			t.Errorf("d %d, data of rank %d: span of %d kept", tc.d, tc.k, p.K)
			continue
		}
		// every input is orthogonal to every direction left out
		left := tc.d - tc.k
		for e := 0; e < data.N; e++ {
			x := data.Row(e)
			for j := 0; j < left; j++ {
				dot, norm := 0.0, 0.0
				for i := 0; i < tc.d; i++ {
					dot += float64(x[i]) * p.V[j*tc.d+i]
					norm += float64(x[i]) * float64(x[i])
				}
				if math.Abs(dot) > 1e-5*math.Sqrt(norm) {
					t.Fatalf("d %d rank %d: input %d has %g along direction %d left out", tc.d, tc.k, e, dot, j)
				}
			}
		}
		// and the directions left out are orthonormal
		for a := 0; a < left; a++ {
			for b := 0; b < left; b++ {
				dot := 0.0
				for i := 0; i < tc.d; i++ {
					dot += p.V[a*tc.d+i] * p.V[b*tc.d+i]
				}
				want := 0.0
				if a == b {
					want = 1
				}
				if math.Abs(dot-want) > 1e-9 {
					t.Fatalf("directions %d and %d: dot %g, want %g", a, b, dot, want)
				}
			}
		}
	}
}

// The folded first layer on raw inputs is the sampled one on mapped inputs:
// (A w')^T x = w'^T (A x).
func TestFoldWeightsIsTheNetworkOfTheMappedInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d, out = 9, 4
	train := subspaceData(300, d, 5, rng)
	p, err := Fit(train, 0.999, 7)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, d*out)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	folded := append([]float64(nil), w...)
	if err := p.FoldWeights(folded, out); err != nil {
		t.Fatal(err)
	}
	// inputs off the data too: uniform noise
	raw := &datasets.Dataset{N: 20, D: d, X: make([]float32, 20*d)}
	for i := range raw.X {
		raw.X[i] = float32(rng.Float64())
	}
	mapped := &datasets.Dataset{N: raw.N, D: d, X: append([]float32(nil), raw.X...)}
	if err := p.Inputs(mapped); err != nil {
		t.Fatal(err)
	}
	for e := 0; e < raw.N; e++ {
		for j := 0; j < out; j++ {
			var a, b float64
			for i := 0; i < d; i++ {
				a += folded[i*out+j] * float64(raw.Row(e)[i])
				b += w[i*out+j] * float64(mapped.Row(e)[i])
			}
			if math.Abs(a-b) > 1e-5*(1+math.Abs(a)) {
				t.Fatalf("input %d unit %d: folded weights give %g, mapped inputs %g", e, j, a, b)
			}
		}
	}
	// the training inputs are (nearly) unchanged: they lie in the span
	m := &datasets.Dataset{N: train.N, D: d, X: append([]float32(nil), train.X...)}
	if err := p.Inputs(m); err != nil {
		t.Fatal(err)
	}
	for i, v := range m.X {
		if math.Abs(float64(v-train.X[i])) > 1e-4*(1+math.Abs(float64(train.X[i]))) {
			t.Fatalf("training value %d moved from %g to %g", i, train.X[i], v)
		}
	}
}

// The prior's variance off the span is Scale^2 times its variance on it:
// folding isotropic draws w' gives w whose projection on a direction left
// out has Scale times the spread.
func TestFoldWeightsWidensThePriorOffTheSpan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const d, out, scale = 8, 4000, 6.0
	p, err := Fit(subspaceData(400, d, 4, rng), 0.999, scale)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, d*out)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	if err := p.FoldWeights(w, out); err != nil {
		t.Fatal(err)
	}
	ss := 0.0
	for j := 0; j < out; j++ {
		dot := 0.0
		for i := 0; i < d; i++ {
			dot += p.V[i] * w[i*out+j]
		}
		ss += dot * dot
	}
	if sd := math.Sqrt(ss / out); math.Abs(sd-scale) > 0.05*scale {
		t.Errorf("sd along a direction left out %.3f, want %.1f", sd, scale)
	}
}

func TestFitAndFoldRefuseBadInput(t *testing.T) {
	data := subspaceData(50, 4, 2, rand.New(rand.NewPCG(7, 8)))
	for _, tc := range []struct {
		keep, scale float64
		want        string
	}{
		{0, 2, "keep 0 outside (0, 1)"},
		{1, 2, "keep 1 outside (0, 1)"},
		{0.99, 0, "scale 0 must be positive"},
		{0.99, math.Inf(1), "must be positive and finite"},
	} {
		if _, err := Fit(data, tc.keep, tc.scale); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Fit(keep %v, scale %v): error %v, want one saying %q", tc.keep, tc.scale, err, tc.want)
		}
	}
	if _, err := Fit(&datasets.Dataset{}, 0.99, 2); err == nil {
		t.Error("Fit of no inputs: no error")
	}
	if _, err := FitModel(nn.Model{Name: "empty"}, data, 0.99, 2); err == nil || !strings.Contains(err.Error(), "model empty has no learnables") {
		t.Errorf("FitModel of a model of no learnables: %v", err)
	}
	if _, err := FitModel(nn.Model{Name: "empty"}, nil, 0.99, 2); err == nil || !strings.Contains(err.Error(), "no training inputs") {
		t.Errorf("FitModel of no data: %v", err)
	}
	p, err := Fit(data, 0.99, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.FoldWeights(make([]float64, 10), 3); err == nil || !strings.Contains(err.Error(), "not 4 inputs by 3 units") {
		t.Errorf("FoldWeights of 10 values by 3 units: %v", err)
	}
	if err := p.Inputs(&datasets.Dataset{N: 1, D: 5, X: make([]float32, 5)}); err == nil || !strings.Contains(err.Error(), "inputs of 5 values") {
		t.Errorf("Inputs of 5 values: %v", err)
	}
}

func TestDigestNamesThePrior(t *testing.T) {
	data := subspaceData(80, 5, 2, rand.New(rand.NewPCG(9, 10)))
	a, _ := Fit(data, 0.999, 3)
	b, _ := Fit(data, 0.999, 3)
	c, _ := Fit(data, 0.999, 4)
	if a.Digest() != b.Digest() {
		t.Error("two fits of the same data and scale differ")
	}
	if a.Digest() == c.Digest() {
		t.Error("scales 3 and 4 share a digest")
	}
}
