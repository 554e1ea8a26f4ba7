package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/tensor"
)

func TestParseArch(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"784-400-400-10", []int{784, 400, 400, 10}, true},
		{"2-1", []int{2, 1}, true},
		{"784", nil, false},
		{"784-x-10", nil, false},
		{"784-0-10", nil, false},
		{"", nil, false},
	}
	for _, c := range cases {
		got, err := ParseArch(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("%q: %v", c.in, got)
			}
		}
	}
}

func TestSpecValidate(t *testing.T) {
	good := Spec{Sizes: []int{3, 4, 2}, PriorPrecision: []float64{1}}
	cases := []struct {
		name string
		mod  func(*Spec)
		ok   bool
	}{
		{"good", func(*Spec) {}, true},
		{"per layer prior", func(s *Spec) { s.PriorPrecision = []float64{1, 2} }, true},
		{"wrong prior count", func(s *Spec) { s.PriorPrecision = []float64{1, 2, 3} }, false},
		{"negative prior", func(s *Spec) { s.PriorPrecision = []float64{-1} }, false},
		{"student-t prior", func(s *Spec) { s.PriorDF = 4 }, true},
		{"negative prior df", func(s *Spec) { s.PriorDF = -1 }, false},
		{"infinite prior df", func(s *Spec) { s.PriorDF = math.Inf(1) }, false},
		{"one output classification", func(s *Spec) { s.Sizes = []int{3, 1} }, false},
		{"gaussian without noise", func(s *Spec) { s.Likelihood = Gaussian }, false},
		{"gaussian", func(s *Spec) { s.Likelihood = Gaussian; s.NoiseSD = 0.1 }, true},
		{"one layer", func(s *Spec) { s.Sizes = []int{3} }, false},
	}
	for _, c := range cases {
		s := good
		s.Sizes = append([]int(nil), good.Sizes...)
		c.mod(&s)
		if err := s.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: err %v", c.name, err)
		}
	}
}

func TestLayoutAndInit(t *testing.T) {
	s := Spec{Sizes: []int{784, 400, 400, 10}, Activation: ReLU, PriorPrecision: []float64{1}}
	if n := s.NumParams(); n != 784*400+400+400*400+400+400*10+10 {
		t.Fatalf("NumParams %d", n)
	}
	ls := s.Layers()
	if ls[1].W != 784*400+400 || ls[2].B+ls[2].Out != s.NumParams() {
		t.Fatalf("layout %+v", ls)
	}
	a := make([]float64, s.NumParams())
	b := make([]float64, s.NumParams())
	s.Init(a, rand.New(rand.NewPCG(1, 2)))
	s.Init(b, rand.New(rand.NewPCG(1, 2)))
	ss := 0.0
	for i := ls[0].W; i < ls[0].B; i++ {
		if a[i] != b[i] {
			t.Fatal("Init is not reproducible from a seed")
		}
		ss += a[i] * a[i]
	}
	sd := math.Sqrt(ss / float64(784*400))
	if math.Abs(sd-math.Sqrt(2.0/784)) > 0.01*math.Sqrt(2.0/784) {
		t.Fatalf("He init sd %v, want %v", sd, math.Sqrt(2.0/784))
	}
}

func TestNewGraphErrors(t *testing.T) {
	s := Spec{Sizes: []int{3, 2}, PriorPrecision: []float64{1}}
	if _, err := NewGraph(s, 0, tensor.Float64); err == nil {
		t.Error("batch 0 accepted")
	}
	if _, err := NewGraph(s, 4, tensor.Int); err == nil {
		t.Error("int dtype accepted")
	}
	if _, err := NewGraph(s, 4, tensor.Float32); err != nil {
		t.Error(err)
	}
}

// TestNegLogPrior checks NegLogPrior against the densities of gonum's
// Normal and StudentsT: differences between two parameter vectors must match,
// since NegLogPrior drops the normalising constant.
func TestNegLogPrior(t *testing.T) {
	for _, df := range []float64{0, 1, 4.5} {
		s := Spec{Sizes: []int{3, 4, 2}, PriorPrecision: []float64{2, 0.5}, PriorDF: df}
		rng := rand.New(rand.NewPCG(3, 4))
		logp := func(theta []float64) float64 {
			lp := 0.0
			for li, l := range s.Layers() {
				sd := 1 / math.Sqrt(s.Precision(li))
				for _, w := range theta[l.W : l.B+l.Out] {
					if df > 0 {
						lp += distuv.StudentsT{Mu: 0, Sigma: sd, Nu: df}.LogProb(w)
					} else {
						lp += distuv.Normal{Mu: 0, Sigma: sd}.LogProb(w)
					}
				}
			}
			return lp
		}
		a, b := make([]float64, s.NumParams()), make([]float64, s.NumParams())
		for i := range a {
			a[i], b[i] = 2*rng.NormFloat64(), 0.3*rng.NormFloat64()
		}
		got := s.NegLogPrior(a) - s.NegLogPrior(b)
		want := logp(b) - logp(a)
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("df %g: NegLogPrior difference %.12g, densities say %.12g", df, got, want)
		}
		grad := make([]float64, len(a))
		s.AddNegLogPriorGrad(a, grad)
		const h = 1e-6
		for i := range a {
			old := a[i]
			a[i] = old + h
			up := s.NegLogPrior(a)
			a[i] = old - h
			dn := s.NegLogPrior(a)
			a[i] = old
			if fd := (up - dn) / (2 * h); math.Abs(fd-grad[i]) > 1e-6*(1+math.Abs(fd)) {
				t.Fatalf("df %g: gradient[%d] %.9g, finite difference %.9g", df, i, grad[i], fd)
			}
		}
	}
}
