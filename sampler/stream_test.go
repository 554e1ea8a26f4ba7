package sampler

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// badStream streams StdGaussian's gradient with a fault.
type badStream struct {
	StdGaussian
	fault string
}

func (b badStream) CanStream() bool { return true }

func (b badStream) GradientStream(theta []float64, _ Minibatch, rng *rand.Rand, consume func(lo int, g []float64)) (float64, error) {
	g := append([]float64(nil), theta...)
	switch b.fault {
	case "gap":
		consume(0, g[:3])
		consume(4, g[4:])
	case "short":
		consume(0, g[:len(g)-1])
	case "overrun":
		consume(0, append(g, 0))
	default:
		consume(0, g[:5])
		consume(5, g[5:])
	}
	return 0, nil
}

// TestStreamContract checks that a streaming potential whose chunks skip,
// fall short or overrun makes the step fail with an error naming it, and
// that a well-formed stream gives the step of Gradient.
func TestStreamContract(t *testing.T) {
	for _, fault := range []string{"gap", "short", "overrun", ""} {
		for _, k := range []Kernel{SGNHT{StepSize: 0.1, Diffusion: 1}, SGHMC{StepSize: 0.1, Friction: 1}} {
			pot := badStream{StdGaussian{D: 10}, fault}
			theta := make([]float64, 10)
			for i := range theta {
				theta[i] = float64(i)
			}
			a, b := NewState(theta), NewState(theta)
			k.Init(a, rand.New(rand.NewPCG(1, 1)))
			k.Init(b, rand.New(rand.NewPCG(1, 1)))
			err := k.Step(a, pot, Minibatch{}, At(1), rand.New(rand.NewPCG(2, 2)))
			if fault != "" {
				if err == nil || !strings.Contains(err.Error(), "streamed gradient") {
					t.Errorf("%s, fault %s: error %v", k.Name(), fault, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Step(b, pot.StdGaussian, Minibatch{}, At(1), rand.New(rand.NewPCG(2, 2))); err != nil {
				t.Fatal(err)
			}
			for i := range a.Theta {
				if a.Theta[i] != b.Theta[i] || a.P[i] != b.P[i] {
					t.Fatalf("%s: coordinate %d streamed (%v, %v), written (%v, %v)", k.Name(), i, a.Theta[i], a.P[i], b.Theta[i], b.P[i])
				}
			}
		}
	}
}
