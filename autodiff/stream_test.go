package autodiff_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/autodifftest"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// unstreamed hides a potential's GradientStream, so kernels take Gradient.
type unstreamed struct{ sampler.Potential }

// TestStreamedGradientSameChain checks that SGNHT and SGHMC on an MLP
// give the same chain, bit for bit, whether the evaluator streams its
// gradient into the update or writes it whole, for the plan, the compiled
// graph and the compiled graph in two shards, for both dtypes and for
// layers whose sizes are not multiples of the stream's chunk; and that the
// streamed path is the one taken.
func TestStreamedGradientSameChain(t *testing.T) {
	spec := nn.Spec{Sizes: []int{20, 37, 300, 3}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{2, 0.5, 1}}
	model, err := spec.Model()
	if err != nil {
		t.Fatal(err)
	}
	data, err := datasets.SyntheticImages(200, 20, 3, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	engines := []struct {
		name string
		new  func(dt autodiff.DType) (autodiff.Evaluator, error)
	}{
		{"plan", func(dt autodiff.DType) (autodiff.Evaluator, error) { return autodifftest.NewPlan(spec, 16, dt) }},
		{"compiled", func(dt autodiff.DType) (autodiff.Evaluator, error) {
			return autodiff.NewFor(autodiff.EngineCompiled, model, 16, dt)
		}},
		{"compiled-2-shards", func(dt autodiff.DType) (autodiff.Evaluator, error) {
			return autodiff.NewShardedFor(autodiff.EngineCompiled, model, 16, dt, 2)
		}},
	}
	for _, eng := range engines {
		for _, dt := range []autodiff.DType{autodiff.Float32, autodiff.Float64} {
			for _, k := range []sampler.Kernel{sampler.SGNHT{StepSize: 0.01, Diffusion: 1}, sampler.SGHMC{StepSize: 0.01, Friction: 1}} {
				t.Run(fmt.Sprintf("%s/%s/%s", eng.name, dt, k.Name()), func(t *testing.T) {
					var states [2]*tempering.PTState
					for i, stream := range []bool{false, true} {
						ev, err := eng.new(dt)
						if err != nil {
							t.Fatal(err)
						}
						p, err := autodiff.NewPotential(model, data, ev, 16, rand.New(rand.NewPCG(2, 2)))
						if err != nil {
							t.Fatal(err)
						}
						if !p.CanStream() {
							t.Fatalf("%s with a Gaussian prior cannot stream", eng.name)
						}
						var pot sampler.Potential = unstreamed{p}
						if stream {
							pot = p
						}
						h, _ := k.(sampler.Frictional).Dynamics()
						pt := driver.Chain(k, h)
						theta := make([]float64, spec.NumParams())
						spec.Init(theta, rand.New(rand.NewPCG(3, 3)))
						if states[i], err = pt.Init([][]float64{theta}, 4); err != nil {
							t.Fatal(err)
						}
						if err := pt.Run([]sampler.Potential{pot}, nil, states[i], 30, nil); err != nil {
							t.Fatal(err)
						}
					}
					a, b := states[0].Rungs[0], states[1].Rungs[0]
					if a.Xi != b.Xi || a.U != b.U || a.Kinetic != b.Kinetic {
						t.Fatalf("written: xi %v U %v kinetic %v; streamed: %v %v %v", a.Xi, a.U, a.Kinetic, b.Xi, b.U, b.Kinetic)
					}
					for i := range a.Theta {
						if a.Theta[i] != b.Theta[i] || a.P[i] != b.P[i] {
							t.Fatalf("coordinate %d: written (%v, %v), streamed (%v, %v)", i, a.Theta[i], a.P[i], b.Theta[i], b.P[i])
						}
					}
					// the streamed run never wrote the gradient vector
					if b.Grad != nil && !allZero(b.Grad) {
						t.Fatal("the streamed run wrote its gradient vector: it did not stream")
					}
				})
			}
		}
	}
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return true
}

// TestStreamRefused checks that a plan with a Student-t prior reports it
// cannot stream (the kernels then take Gradient) and that EvalStream
// refuses.
func TestStreamRefused(t *testing.T) {
	spec := nn.Spec{Sizes: []int{4, 3, 2}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}, PriorDF: 3}
	ev, err := autodifftest.NewPlan(spec, 4, autodiff.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if ev.CanStream() {
		t.Fatal("a Student-t prior can stream")
	}
	data, _ := datasets.SyntheticImages(8, 4, 2, rand.New(rand.NewPCG(1, 1)))
	theta := make([]float64, spec.NumParams())
	if _, err := ev.EvalStream(theta, data, []int{0, 1}, 1, func(int, []float64) {}); err == nil {
		t.Fatal("EvalStream with a Student-t prior accepted")
	}
}

// BenchmarkStreamedStep times one SGNHT step of a single chain on
// 784-400-400-10 at batch 128, float32 (train's default model), with the
// gradient written whole then read by the update, and streamed into it, on
// the plan, the compiled graph and the compiled graph in two shards (train's
// compiled MLP on two cores; its BLAS then gets one thread a shard).
func BenchmarkStreamedStep(b *testing.B) {
	spec := nn.Spec{Sizes: []int{784, 400, 400, 10}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	model, err := spec.Model()
	if err != nil {
		b.Fatal(err)
	}
	data, err := datasets.SyntheticImages(10000, 784, 10, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	threads := autodiff.BLASThreads()
	for _, eng := range []string{"plan", "compiled", "compiled-2-shards"} {
		for _, stream := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/streamed=%v", eng, stream), func(b *testing.B) {
				var ev autodiff.Evaluator
				var err error
				switch eng {
				case "plan":
					ev, err = autodifftest.NewPlan(spec, 128, autodiff.Float32)
				case "compiled":
					ev, err = autodiff.NewFor(autodiff.EngineCompiled, model, 128, autodiff.Float32)
				default:
					autodiff.SetBLASThreads(1)
					defer autodiff.SetBLASThreads(threads)
					ev, err = autodiff.NewShardedFor(autodiff.EngineCompiled, model, 128, autodiff.Float32, 2)
				}
				if err != nil {
					b.Fatal(err)
				}
				p, err := autodiff.NewPotential(model, data, ev, 128, rand.New(rand.NewPCG(3, 4)))
				if err != nil {
					b.Fatal(err)
				}
				var pot sampler.Potential = unstreamed{p}
				if stream {
					pot = p
				}
				pt := driver.Chain(sampler.SGNHT{StepSize: 1e-3, Diffusion: 10}, 1e-3)
				theta := make([]float64, spec.NumParams())
				spec.Init(theta, rand.New(rand.NewPCG(5, 6)))
				st, err := pt.Init([][]float64{theta}, 1)
				if err != nil {
					b.Fatal(err)
				}
				if err := pt.Run([]sampler.Potential{pot}, nil, st, 5, nil); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				if err := pt.Run([]sampler.Potential{pot}, nil, st, b.N, nil); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
