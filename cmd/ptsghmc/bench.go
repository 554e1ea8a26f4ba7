package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// BenchResult is the output of ptsghmc bench.
type BenchResult struct {
	Arch          string  `json:"arch"`
	Replicas      int     `json:"replicas"`
	Batch         int     `json:"batch"`
	DType         string  `json:"dtype"`
	BLAS          string  `json:"blas"`
	Steps         int     `json:"steps"`
	StepsPerSec   float64 `json:"steps_per_sec"`
	GradientSec   float64 `json:"gradient_sec_per_step"` // wall time of the parallel gradient phase, per step
	UpdateSec     float64 `json:"update_sec_per_step"`   // SGNHT updates with noise, per step
	ExchangeSec   float64 `json:"exchange_sec_per_step"` // exchange rounds, per step
	GradGFLOPS    float64 `json:"gradient_gflops"`       // 6 * params * batch * replicas / gradient time
	PeakGFLOPS    float64 `json:"gemm_peak_gflops"`      // measured float32 GEMM peak on all cores
	PeakShare     float64 `json:"gradient_share_of_peak"`
	PeakRSSMiB    float64 `json:"peak_rss_mib"`
	AllocsPerStep float64 `json:"allocs_per_step"`
	// Exchange tests in the timed steps, and how they were decided.
	Exchanges      int `json:"exchanges"`
	ExchangesGrown int `json:"exchanges_grown"`
	ExchangesExact int `json:"exchanges_exact"`
	ExchangesEarly int `json:"exchanges_early"`
}

// timedPotential measures the time spent in gradient evaluations.
type timedPotential struct {
	*autodiff.Potential
	ns *atomic.Int64
}

func (t timedPotential) Gradient(theta, grad []float64, rng *rand.Rand) (float64, error) {
	start := time.Now()
	u, err := t.Potential.Gradient(theta, grad, rng)
	t.ns.Add(int64(time.Since(start)))
	return u, err
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	arch := fs.String("arch", "784-400-400-10", "architecture")
	replicas := fs.Int("replicas", 10, "replicas")
	batch := fs.Int("batch", 128, "minibatch size")
	steps := fs.Int("steps", 50, "timed steps (after 5 warm-up steps)")
	dtype := fs.String("dtype", "float32", "float32 or float64")
	every := fs.Int("exchange", 10, "steps between exchange rounds")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc bench [--arch A] [--replicas R] [--batch B] [--steps N] [--dtype float32|float64] [--json]\n\nTimes full PT-SGHMC steps on MNIST-shaped synthetic data.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	sizes, err := nn.ParseArch(*arch)
	if err != nil {
		return err
	}
	spec := nn.Spec{Sizes: sizes, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	rng := rand.New(rand.NewPCG(1, 2))
	data, err := datasets.SyntheticImages(10000, sizes[0], sizes[len(sizes)-1], rng)
	if err != nil {
		return err
	}
	temps := []float64{1}
	if *replicas > 1 {
		if temps, err = sampler.GeometricLadder(*replicas, 10); err != nil {
			return err
		}
		autodiff.SetBLASThreads(1)
	}
	var gradNS atomic.Int64
	pots := make([]sampler.Potential, len(temps))
	var first *autodiff.Potential
	for j := range pots {
		ev, err := autodiff.NewPlan(spec, *batch, autodiff.DType(*dtype))
		if err != nil {
			return err
		}
		p, err := autodiff.NewPotential(spec, data, ev, *batch, rng)
		if err != nil {
			return err
		}
		if j == 0 {
			first = p
		}
		pots[j] = timedPotential{p, &gradNS}
	}
	corr, err := sampler.NewCorrection(1, sampler.CorrectionOptions{})
	if err != nil {
		return err
	}
	pt := &sampler.PT{Kernel: sampler.SGNHT{StepSize: 1e-3, Diffusion: 10}, Temps: temps, Every: *every,
		Exchange: sampler.Exchanger{Batch: *batch, Correction: corr, Margin: 50}}
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	st, err := pt.Init([][]float64{theta}, 1)
	if err != nil {
		return err
	}
	if err := pt.Run(pots, first, st, 5, nil); err != nil {
		return err
	}
	gradNS.Store(0)
	prop0, grown0, exact0, early0 := sum(st.Stats.Proposed), st.Stats.Grown, st.Stats.Exact, st.Stats.Early
	var exNS int64
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	for i := 0; i < *steps; i++ {
		t0 := time.Now()
		exchange := pt.Every > 0 && (st.Steps+1)%pt.Every == 0
		if err := pt.Step(pots, first, st); err != nil {
			return err
		}
		if exchange {
			exNS += int64(time.Since(t0))
		}
	}
	wall := time.Since(start).Seconds()
	runtime.ReadMemStats(&ms1)
	workers := min(runtime.GOMAXPROCS(0), len(temps))
	res := BenchResult{Arch: *arch, Replicas: len(temps), Batch: *batch, DType: *dtype, BLAS: autodiff.BLASName, Steps: *steps}
	res.StepsPerSec = float64(*steps) / wall
	res.GradientSec = float64(gradNS.Load()) / 1e9 / float64(workers) / float64(*steps)
	// exchange steps also contain a gradient phase: approximate the exchange
	// itself as the excess of those steps over the mean non-exchange step.
	res.ExchangeSec = float64(exNS) / 1e9 / float64(*steps)
	nEx := float64(*steps / max(1, pt.Every))
	if nEx > 0 {
		meanStep := (wall - float64(exNS)/1e9) / (float64(*steps) - nEx)
		res.ExchangeSec = (float64(exNS)/1e9 - nEx*meanStep) / float64(*steps)
	}
	res.UpdateSec = 1/res.StepsPerSec - res.GradientSec - res.ExchangeSec
	flops := 6 * float64(spec.NumParams()) * float64(*batch) * float64(len(temps))
	res.GradGFLOPS = flops / res.GradientSec / 1e9
	res.PeakGFLOPS = gemmPeak()
	res.PeakShare = res.GradGFLOPS / res.PeakGFLOPS
	res.PeakRSSMiB = peakRSS()
	res.AllocsPerStep = float64(ms1.Mallocs-ms0.Mallocs) / float64(*steps)
	res.Exchanges = sum(st.Stats.Proposed) - prop0
	res.ExchangesGrown, res.ExchangesExact, res.ExchangesEarly = st.Stats.Grown-grown0, st.Stats.Exact-exact0, st.Stats.Early-early0
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "PT-SGHMC %s, %d replicas, batch %d, %s, BLAS %s, %d steps\n", res.Arch, res.Replicas, res.Batch, res.DType, res.BLAS, res.Steps)
	fmt.Fprintf(stdout, "  steps/s            %8.2f\n", res.StepsPerSec)
	fmt.Fprintf(stdout, "  per step: gradient %7.2f ms, update %7.2f ms, exchange %7.2f ms\n", res.GradientSec*1e3, res.UpdateSec*1e3, res.ExchangeSec*1e3)
	fmt.Fprintf(stdout, "  gradient phase     %8.1f GFLOP/s = %.0f%% of the measured float32 GEMM peak %.1f GFLOP/s\n", res.GradGFLOPS, 100*res.PeakShare, res.PeakGFLOPS)
	fmt.Fprintf(stdout, "  exchange tests     %8d (%d grew their batch, %d exact on all data, %d decided early)\n", res.Exchanges, res.ExchangesGrown, res.ExchangesExact, res.ExchangesEarly)
	fmt.Fprintf(stdout, "  peak RSS           %8.0f MiB, %.1f allocations per step\n", res.PeakRSSMiB, res.AllocsPerStep)
	return nil
}

// gemmPeak measures float32 GEMM GFLOP/s (1024^3, all BLAS threads).
func gemmPeak() float64 {
	threads := autodiff.BLASThreads()
	autodiff.SetBLASThreads(runtime.NumCPU())
	defer autodiff.SetBLASThreads(threads)
	const n = 1024
	a := make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%7) * 0.1
	}
	c := make([]float32, n*n)
	impl := blas32.Implementation()
	impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, a, n, 0, c, n)
	best := 0.0
	for r := 0; r < 5; r++ {
		t := time.Now()
		impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, a, n, 0, c, n)
		best = max(best, 2*n*n*n/time.Since(t).Seconds()/1e9)
	}
	return best
}

// peakRSS returns the process's peak resident set in MiB (Linux).
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(v), "%g", &kb)
			return kb / 1024
		}
	}
	return 0
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
