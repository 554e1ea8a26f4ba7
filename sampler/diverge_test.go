package sampler

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// badCoordinate is a potential whose gradient is finite except at one
// coordinate, where it is v (NaN or ±Inf).
type badCoordinate struct {
	d, at int
	v     float64
}

func (b badCoordinate) Dim() int { return b.d }
func (b badCoordinate) Gradient(theta, grad []float64, _ Minibatch, rng *rand.Rand) (float64, error) {
	for i := range grad {
		grad[i] = theta[i]
	}
	grad[b.at] = b.v
	return 0, nil
}

// TestDivergenceAnyCoordinate checks that every stochastic-gradient kernel
// reports ErrDiverged when a coordinate other than the first goes
// non-finite, and not when all stay finite.
func TestDivergenceAnyCoordinate(t *testing.T) {
	kernels := []Kernel{
		SGHMC{StepSize: 0.01, Friction: 1},
		SGLD{StepSize: 0.01},
		SGNHT{StepSize: 0.01, Diffusion: 1, Inertia: 1},
	}
	for _, k := range kernels {
		for _, c := range []struct {
			name string
			pot  badCoordinate
			want error
		}{
			{"finite", badCoordinate{d: 1000, at: 0, v: 0.5}, nil},
			{"NaN at the last coordinate", badCoordinate{d: 1000, at: 999, v: math.NaN()}, ErrDiverged},
			{"+Inf in the middle", badCoordinate{d: 1000, at: 500, v: math.Inf(1)}, ErrDiverged},
		} {
			rng := rand.New(rand.NewPCG(1, 2))
			s := NewState(make([]float64, c.pot.d))
			k.Init(s, rng)
			err := k.Step(s, c.pot, Minibatch{}, At(1), rng)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Errorf("%s, %s: error %v, want %v", k.Name(), c.name, err, c.want)
			}
		}
	}
}
