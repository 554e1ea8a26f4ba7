package sampler

import (
	"math/rand/v2"
	"testing"
)

// chunkedGaussian streams StdGaussian's gradient in chunks of size (not a
// multiple of the update's noise chunk), and draws nothing from rng when
// given a minibatch, as StreamingPotential asks.
type chunkedGaussian struct {
	StdGaussian
	size int
	g    []float64
}

func (c *chunkedGaussian) CanStream() bool { return true }

func (c *chunkedGaussian) GradientStream(theta []float64, _ Minibatch, _ *rand.Rand, consume func(lo int, g []float64)) (float64, error) {
	if len(c.g) < c.size {
		c.g = make([]float64, c.size)
	}
	g := c.g
	u := 0.0
	for lo := 0; lo < len(theta); lo += c.size {
		hi := min(lo+c.size, len(theta))
		for i := lo; i < hi; i++ {
			g[i-lo] = theta[i]
			u += 0.5 * theta[i] * theta[i]
		}
		consume(lo, g[:hi-lo])
	}
	return u, nil
}

// TestNoiseAheadSameChain runs SGNHT and SGHMC chains whose noise is drawn
// ahead on another goroutine and chains that draw it in the update: the
// same states bit for bit, whatever the stream's chunking, the dimension
// (not a multiple of the noise chunk) and the preconditioner.
func TestNoiseAheadSameChain(t *testing.T) {
	defer NoiseAhead.Store(NoiseAhead.Load())
	const d = 1000
	for _, size := range []int{100, 256, 1000} {
		for _, k := range []Kernel{SGNHT{StepSize: 0.05, Diffusion: 1}, SGHMC{StepSize: 0.05, Friction: 1}} {
			for _, mass := range []bool{false, true} {
				var states [2]*State
				for i, ahead := range []bool{false, true} {
					NoiseAhead.Store(ahead)
					theta := make([]float64, d)
					for j := range theta {
						theta[j] = float64(j%7) - 3
					}
					s := NewState(theta)
					if mass {
						m := make([]float64, d)
						for j := range m {
							m[j] = 1 + float64(j%5)
						}
						if err := s.SetMass(m); err != nil {
							t.Fatal(err)
						}
					}
					rng := rand.New(rand.NewPCG(7, 8))
					k.Init(s, rng)
					pot := &chunkedGaussian{StdGaussian: StdGaussian{D: d}, size: size}
					for step := 0; step < 20; step++ {
						if err := k.Step(s, pot, Minibatch{Index: []int{0}, Scale: 1}, At(1), rng); err != nil {
							t.Fatal(err)
						}
					}
					if ahead && useNoiseAhead() && s.ahead == nil {
						t.Fatal("the noise was not drawn ahead: the test compares nothing")
					}
					states[i] = s
				}
				a, b := states[0], states[1]
				if a.Xi != b.Xi || a.U != b.U {
					t.Fatalf("chunks %d %s mass %v: xi %v U %v in the update, %v %v ahead", size, k.Name(), mass, a.Xi, a.U, b.Xi, b.U)
				}
				for j := range a.Theta {
					if a.Theta[j] != b.Theta[j] || a.P[j] != b.P[j] {
						t.Fatalf("chunks %d %s mass %v: coordinate %d differs", size, k.Name(), mass, j)
					}
				}
			}
		}
	}
}

// TestNoiseAheadNoAllocs: a step that draws its noise ahead allocates
// nothing once its buffers exist.
func TestNoiseAheadNoAllocs(t *testing.T) {
	if !useNoiseAhead() {
		t.Skip("GOMAXPROCS < 2: no noise ahead")
	}
	s := NewState(make([]float64, 600))
	rng := rand.New(rand.NewPCG(1, 2))
	k := SGNHT{StepSize: 0.05, Diffusion: 1}
	k.Init(s, rng)
	pot := &chunkedGaussian{StdGaussian: StdGaussian{D: 600}, size: 256}
	mb := Minibatch{Index: []int{0}, Scale: 1}
	step := func() {
		if err := k.Step(s, pot, mb, At(1), rng); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if n := testing.AllocsPerRun(50, step); n != 0 {
		t.Errorf("%v allocations per step", n)
	}
}
