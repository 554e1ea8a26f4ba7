package driver

import (
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestStepNoAllocs: a PT step of several rungs on two workers allocates
// nothing once its scratch exists (a closure and a goroutine per rung did).
func TestStepNoAllocs(t *testing.T) {
	target := sampler.StdGaussian{D: 300}
	for _, workers := range []int{1, 2} {
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.05, Diffusion: 1}, Temps: []float64{1, 2, 4, 8}, Workers: workers})
		starts := [][]float64{make([]float64, target.D)}
		st, err := pt.Init(starts, 1)
		if err != nil {
			t.Fatal(err)
		}
		pots := []sampler.Potential{target, target, target, target}
		step := func() {
			if err := pt.Step(pots, nil, st); err != nil {
				t.Fatal(err)
			}
		}
		step()
		if n := testing.AllocsPerRun(50, step); n != 0 {
			t.Errorf("%d workers: %v allocations per step", workers, n)
		}
	}
}

// TestStepsEveryRung: the rungs' steps on a pool of workers give each
// rung the chain it has alone on one worker, bit for bit.
func TestStepsEveryRung(t *testing.T) {
	target := sampler.StdGaussian{D: 50}
	run := func(workers int) *tempering.PTState {
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.05, Diffusion: 1}, Temps: []float64{1, 1.5, 2, 3, 5}, Workers: workers})
		st, err := pt.Init([][]float64{make([]float64, target.D)}, 7)
		if err != nil {
			t.Fatal(err)
		}
		pots := []sampler.Potential{target, target, target, target, target}
		for range 30 {
			if err := pt.Step(pots, nil, st); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	one, two := run(1), run(2)
	for j := range one.Rungs {
		for i, v := range one.Rungs[j].Theta {
			if two.Rungs[j].Theta[i] != v {
				t.Fatalf("rung %d coordinate %d: %v on one worker, %v on two", j, i, v, two.Rungs[j].Theta[i])
			}
		}
	}
}
