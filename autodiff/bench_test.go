package autodiff

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// BenchmarkGradient times one minibatch gradient of U~ for 784-400-400-10 at
// batch 128, per engine (the plan, the compiled graph, Gorgonia's VM) and
// dtype, on one BLAS thread and on the default.
func BenchmarkGradient(b *testing.B) {
	spec := nn.Spec{Sizes: []int{784, 400, 400, 10}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	rng := rand.New(rand.NewPCG(1, 2))
	data, _ := datasets.SyntheticImages(1024, 784, 10, rng)
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	grad := make([]float64, len(theta))
	idx := rng.Perm(1024)[:128]
	threads := BLASThreads()
	flops := 6.0 * float64(128) * float64(784*400+400*400+400*10)
	for _, engine := range []Engine{EnginePlan, EngineCompiled, EngineGraph} {
		for _, dt := range []DType{Float32, Float64} {
			for _, th := range []int{1, threads} {
				b.Run(fmt.Sprintf("%s/%s/threads=%d", engine, dt, th), func(b *testing.B) {
					SetBLASThreads(th)
					defer SetBLASThreads(threads)
					ev, err := New(engine, spec, 128, dt)
					if err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if _, err := ev.Eval(theta, data, idx, 60000.0/128, grad, nil); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
				if th == threads {
					break
				}
			}
		}
	}
}

// BenchmarkLeNetGradient times one minibatch gradient of U~ for the LeNet
// CNN (nn.LeNet) at batch 128 on Gorgonia's VM and compiled
// (compile.Evaluator), per dtype, on one graph and split over two graphs in
// parallel (ShardedEvaluator), and reports
// wall-clock and process CPU milliseconds per gradient (the CPU figure is
// the steadier one on a shared machine).
func BenchmarkLeNetGradient(b *testing.B) {
	model, err := nn.LeNet(nn.PriorConfig{Precision: 1}).Model("lenet")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data, _ := datasets.SyntheticImages(1024, 784, 10, rng)
	theta := make([]float64, model.NumParams())
	model.Layout.Init(theta, rng)
	grad := make([]float64, len(theta))
	idx := rng.Perm(1024)[:128]
	for _, tc := range []struct {
		engine Engine
		dt     DType
		shards int
	}{{EngineGraph, Float32, 1}, {EngineGraph, Float32, 2}, {EngineGraph, Float64, 1},
		{EngineCompiled, Float32, 1}, {EngineCompiled, Float32, 2}, {EngineCompiled, Float64, 1}} {
		b.Run(fmt.Sprintf("%s/%s/shards=%d", tc.engine, tc.dt, tc.shards), func(b *testing.B) {
			var ev Evaluator
			var err error
			if tc.shards == 1 {
				ev, err = NewFor(tc.engine, model, 128, tc.dt)
			} else {
				// shards in parallel goroutines, one BLAS thread each (as train runs them)
				threads := BLASThreads()
				SetBLASThreads(1)
				defer SetBLASThreads(threads)
				ev, err = NewShardedFor(tc.engine, model, 128, tc.dt, tc.shards)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := ev.Eval(theta, data, idx, 60000.0/128, grad, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/gradient")
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/gradient")
		})
	}
}

// cpuTime returns the CPU time the process has used (user and system, all
// threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
