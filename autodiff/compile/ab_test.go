package compile_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestLeNetKernelsAB times a compiled LeNet float32 gradient at batch 128
// (two shards on one BLAS thread each, as train runs them) with the
// reference kernels (A) and the current ones (B), alternating one gradient
// of each (ABBA order), and prints the ratio of their total wall-clock and
// process CPU times and the median of the pairs' wall-clock ratios: an A/B
// within one process, the figure that means something on a shared machine.
// Set LENET_AB=pairs to run it (about pairs * 0.2 s on an idle machine);
// LENET_AB_REF=columns, pooling, poolrelu, relupool, biassums, biaspool,
// edges, rows, scatter or session2 (the last five together) runs only those kernels as
// the reference (default: all of them); LENET_AB_STEP=1 times
// whole SGNHT steps instead; LENET_AB_MODEL=cnn3 times nn.CNN3 instead of
// LeNet.
func TestLeNetKernelsAB(t *testing.T) {
	pairs := 0
	fmt.Sscan(os.Getenv("LENET_AB"), &pairs)
	if pairs <= 0 {
		t.Skip("set LENET_AB=pairs to run the A/B timing")
	}
	model, data, theta, idx := compile.LeNetSetup(t, 128)
	what := "LeNet"
	if os.Getenv("LENET_AB_MODEL") == "cnn3" { // the other registered CNN
		model, data, theta, idx = compile.CNN3Setup(t, 128)
		what = "CNN3"
	}
	threads := autodiff.BLASThreads()
	autodiff.SetBLASThreads(1)
	defer autodiff.SetBLASThreads(threads)
	ev, err := autodiff.NewShardedFor(autodiff.EngineCompiled, model, 128, autodiff.Float32, 2)
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, len(theta))
	ref := compile.AllFast
	switch os.Getenv("LENET_AB_REF") {
	case "columns":
		ref = compile.FastColumns
	case "pooling":
		ref = compile.FastPooling
	case "poolrelu":
		ref = compile.FastPoolRelu
	case "relupool":
		ref = compile.FastReluPool
	case "biassums":
		ref = compile.FastBiasSums
	case "biaspool":
		ref = compile.FastBiasPool
	case "edges":
		ref = compile.FastEdges
	case "rows":
		ref = compile.FastRows
	case "scatter":
		ref = compile.FastPoolScatter
	case "session2":
		ref = compile.FastBiasSums | compile.FastBiasPool | compile.FastEdges | compile.FastRows | compile.FastPoolScatter
	}
	// With LENET_AB_STEP=1, a whole SGNHT step (the gradient, the prior and
	// the update with its noise) rather than the gradient alone.
	wholeStep := os.Getenv("LENET_AB_STEP") == "1"
	pot := &autodiff.Potential{Model: model, Data: data, Eval: ev}
	stream := sampler.NewStream(9, 1)
	kernel := sampler.SGNHT{StepSize: 1e-5, Diffusion: 10}
	state := sampler.NewState(append([]float64(nil), theta...))
	kernel.Init(state, stream.Rand)
	mb := sampler.Minibatch{Index: idx, Scale: 60000.0 / 128}
	timeIt := func(ref compile.KernelSet) (wall, cpu time.Duration) {
		defer compile.SetReferenceKernels(ref)()
		start, cpu0 := time.Now(), cpuTime()
		if wholeStep {
			if err := kernel.Step(state, pot, mb, sampler.Hyper{StepSize: 1e-5, Temp: 1}, stream.Rand); err != nil {
				t.Fatal(err)
			}
		} else if _, err := ev.Eval(theta, data, idx, 60000.0/128, grad, nil); err != nil {
			t.Fatal(err)
		}
		return time.Since(start), cpuTime() - cpu0
	}
	for i := 0; i < 3; i++ {
		timeIt(ref)
		timeIt(0)
	}
	var wallA, wallB, cpuA, cpuB time.Duration
	var ratios []float64
	for r := 0; r < pairs; r++ {
		var wa, ca, wb, cb time.Duration
		if r%2 == 0 {
			wa, ca = timeIt(ref)
			wb, cb = timeIt(0)
		} else {
			wb, cb = timeIt(0)
			wa, ca = timeIt(ref)
		}
		wallA, wallB, cpuA, cpuB = wallA+wa, wallB+wb, cpuA+ca, cpuB+cb
		ratios = append(ratios, wb.Seconds()/wa.Seconds())
	}
	if wholeStep {
		what += " SGNHT step"
	} else {
		what += " gradient"
	}
	fmt.Printf("%s, batch 128, float32, 2 shards, reference %s, %d A/B pairs (contended machine, A/B ratio): "+
		"current/reference wall %.3f (median of pairs %.3f), CPU %.3f\n",
		what, os.Getenv("LENET_AB_REF"), pairs, wallB.Seconds()/wallA.Seconds(), median(ratios), cpuB.Seconds()/cpuA.Seconds())
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
