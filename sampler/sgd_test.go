package sampler

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// quadratic is U(theta) = sum_i a_i (theta_i - m_i)^2 / 2, exactly (no
// noise): its minimum is m.
type quadratic struct{ a, m []float64 }

func (q quadratic) Dim() int { return len(q.a) }
func (q quadratic) Gradient(theta, grad []float64, _ Minibatch, rng *rand.Rand) (float64, error) {
	u := 0.0
	for i := range theta {
		d := theta[i] - q.m[i]
		grad[i] = q.a[i] * d
		u += 0.5 * q.a[i] * d * d
	}
	return u, nil
}

// TestSGD checks momentum SGD converges to the minimum of a quadratic at
// any temperature (it ignores it), and reports ErrDiverged when its step
// is too large for the curvature.
func TestSGD(t *testing.T) {
	q := quadratic{a: []float64{1, 4, 0.25}, m: []float64{1, -2, 3}}
	for _, c := range []struct {
		name  string
		k     SGD
		temp  float64
		steps int
		want  error // nil: converged to the minimum within 1e-6
	}{
		{"converges", SGD{StepSize: 0.1, Friction: 1}, 1, 5000, nil},
		{"ignores the temperature", SGD{StepSize: 0.1, Friction: 1}, 100, 5000, nil},
		{"heavy friction", SGD{StepSize: 0.05, Friction: 10}, 1, 20000, nil},
		{"step too large diverges", SGD{StepSize: 2, Friction: 0.1}, 1, 5000, ErrDiverged},
	} {
		rng := rand.New(rand.NewPCG(1, 1))
		s := NewState(make([]float64, q.Dim()))
		for i := range s.P {
			s.P[i] = 1 // Init must clear it
		}
		c.k.Init(s, rng)
		for _, v := range s.P {
			if v != 0 {
				t.Fatalf("%s: Init left momentum %v, want 0", c.name, s.P)
			}
		}
		var err error
		for n := 0; n < c.steps && err == nil; n++ {
			err = c.k.Step(s, q, Minibatch{}, At(c.temp), rng)
		}
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
			continue
		}
		if c.want != nil {
			continue
		}
		for i, v := range s.Theta {
			if math.Abs(v-q.m[i]) > 1e-6 {
				t.Errorf("%s: theta %v, want the minimum %v", c.name, s.Theta, q.m)
				break
			}
		}
		if s.U > 1e-12 {
			t.Errorf("%s: U = %g at the end, want 0", c.name, s.U)
		}
	}
}

// TestSGDDivergence checks the sgd baseline's kernel reports a
// non-finite coordinate anywhere, not only the first.
func TestSGDDivergence(t *testing.T) {
	k := SGD{StepSize: 0.01, Friction: 0.1}
	for _, at := range []int{-1, 0, 499, 999} {
		pot := nanAt{d: 1000, at: at}
		s := NewState(make([]float64, pot.d))
		err := k.Step(s, pot, Minibatch{}, At(1), rand.New(rand.NewPCG(1, 1)))
		if (at >= 0) != errors.Is(err, ErrDiverged) {
			t.Errorf("NaN gradient at %d: error %v", at, err)
		}
	}
}

type nanAt struct{ d, at int }

func (p nanAt) Dim() int { return p.d }
func (p nanAt) Gradient(theta, grad []float64, _ Minibatch, rng *rand.Rand) (float64, error) {
	for i := range grad {
		grad[i] = 1
	}
	if p.at >= 0 {
		grad[p.at] = math.NaN()
	}
	return 0, nil
}
