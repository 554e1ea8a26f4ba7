package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/machine"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"github.com/ptsghmc/ptsghmc/train"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

// BenchResult is the output of ptsghmc bench.
type BenchResult struct {
	Arch        string  `json:"arch"`
	Replicas    int     `json:"replicas"`
	Batch       int     `json:"batch"`
	DType       string  `json:"dtype"`
	BLAS        string  `json:"blas"`
	Steps       int     `json:"steps"`
	StepsPerSec float64 `json:"steps_per_sec"`
	GradientSec float64 `json:"gradient_sec_per_step"` // wall time of the parallel gradient phase, per step
	UpdateSec   float64 `json:"update_sec_per_step"`   // SGNHT updates with noise, per step
	ExchangeSec float64 `json:"exchange_sec_per_step"` // exchange rounds, per step
	GradGFLOPS  float64 `json:"gradient_gflops"`       // gradientFLOPs * replicas / gradient time
	PeakGFLOPS  float64 `json:"gemm_peak_gflops"`      // measured float32 GEMM peak on all cores
	PeakShare   float64 `json:"gradient_share_of_peak"`
	// The update phase against its memory-bandwidth bound: bytes an update
	// must move per step (theta and p read and written, the gradient read:
	// 40 bytes per parameter per replica, float64 state), over the copy
	// bandwidth measured in the same process on as many goroutines as
	// replicas step at once.
	UpdateBytes    float64 `json:"update_bytes_per_step"`
	CopyGBs        float64 `json:"copy_gb_per_sec"`
	UpdateBoundSec float64 `json:"update_bound_sec_per_step"`
	PeakRSSMiB     float64 `json:"peak_rss_mib"`
	AllocsPerStep  float64 `json:"allocs_per_step"`
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
	*streamTimer
}

// newTimedPotential returns p timed into ns.
func newTimedPotential(p *autodiff.Potential, ns *atomic.Int64) timedPotential {
	t := &streamTimer{ns: ns}
	t.consumeTimed = t.consumeFirst
	return timedPotential{p, ns, t}
}

func (t timedPotential) Gradient(theta, grad []float64, mb sampler.Minibatch, rng *rand.Rand) (float64, error) {
	start := time.Now()
	u, err := t.Potential.Gradient(theta, grad, mb, rng)
	t.ns.Add(int64(time.Since(start)))
	return u, err
}

// GradientStream times the gradient streamed into the update (what train
// runs for an MLP): up to its first chunk it is the gradient's time, from
// there on the update's (the stream's conversion of the gradient to float64
// with the prior's term, a pass the update used to read back, included).
func (t timedPotential) GradientStream(theta []float64, mb sampler.Minibatch, rng *rand.Rand, consume func(lo int, g []float64)) (float64, error) {
	t.start, t.first, t.consume = time.Now(), true, consume
	defer func() { t.consume = nil }()
	return t.Potential.GradientStream(theta, mb, rng, t.consumeTimed)
}

// streamTimer is a timedPotential's state within one streamed gradient,
// kept with it so that a step allocates no closure (bench reports
// allocations per step).
type streamTimer struct {
	ns           *atomic.Int64
	start        time.Time
	first        bool
	consume      func(lo int, g []float64)
	consumeTimed func(lo int, g []float64) // consumeFirst, bound once
}

// consumeFirst adds the time to the first chunk to the gradient's and
// hands the chunk on.
func (t *streamTimer) consumeFirst(lo int, g []float64) {
	if t.first {
		t.ns.Add(int64(time.Since(t.start)))
		t.first = false
	}
	t.consume(lo, g)
}

// benchConfig is one bench configuration.
type benchConfig struct {
	arch         string
	replicas     int
	batch, steps int
	dtype        string
	every        int
	sharedStart  bool
	peak         float64 // measured GEMM peak (0: measure)
	model        string  // a registered model (nn.Models): benchModel
	engine       string  // with model: compiled or graph
	shards       int     // with model: gradient shards (0: one per core, up to 4)
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c benchConfig
	fs.StringVar(&c.arch, "arch", "784-400-400-10", "architecture")
	fs.IntVar(&c.replicas, "replicas", 10, "replicas")
	fs.IntVar(&c.batch, "batch", 128, "minibatch size")
	fs.IntVar(&c.steps, "steps", 50, "timed steps (after 5 warm-up steps; 3 with --model)")
	fs.StringVar(&c.dtype, "dtype", "float32", "float32 or float64")
	fs.IntVar(&c.every, "exchange", 10, "steps between exchange rounds (0: none; no exchange with one replica)")
	fs.BoolVar(&c.sharedStart, "shared-start", false, "start every replica from one initialisation (default: each replica its own, as in the PyTorch script)")
	fs.StringVar(&c.model, "model", "", "time one SGNHT step (minibatch gradient and update) of this registered model instead (lenet, cnn3)")
	fs.StringVar(&c.engine, "engine", "compiled", "with --model: compiled (the graph compiler) or graph (Gorgonia's VM)")
	fs.IntVar(&c.shards, "grad-shards", 0, "with --model: split each gradient over this many graphs in parallel (0: one per core, up to 4)")
	arith := fs.String("arithmetic", autodiff.ArithmeticPinned, "matrix products: pinned (the same bits on every machine) or native (the BLAS library's kernel for this CPU)")
	ahead := fs.Bool("noise-ahead", true, "draw a streamed step's injected noise on another goroutine while its gradient is computed (the same variates; false: in the update, to time the difference)")
	asJSON := fs.Bool("json", false, "print JSON")
	sweep := fs.Bool("sweep", false, "time replicas 1, 2, 4, 10, 20 at --batch, and batch 32, 128, 512 at --replicas; print a table")
	plotPath := fs.String("plot", "", "with --sweep: write the scaling plot to this PNG file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc bench [--arch A] [--replicas R] [--batch B] [--exchange N] [--steps N] [--dtype float32|float64] [--json] [--sweep [--plot p.png]]\n       ptsghmc bench --model lenet [--engine compiled|graph] [--grad-shards N] [--batch B] [--steps N] [--dtype float32|float64] [--json]\n\nTimes full PT-SGHMC steps of an MLP, or one SGNHT step of a registered model, on MNIST-shaped synthetic data.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *plotPath != "" && !*sweep {
		return fmt.Errorf("bench: --plot needs --sweep")
	}
	sampler.NoiseAhead.Store(*ahead)
	if err := autodiff.UseArithmetic(*arith); err != nil {
		return fmt.Errorf("--arithmetic: %w", err)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "arithmetic: %s\n", autodiff.CurrentArithmetic())
	}
	if c.model != "" {
		if *sweep {
			return fmt.Errorf("bench: --sweep times MLPs; drop it with --model")
		}
		res, err := benchModel(c)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, res)
		}
		printModelBench(stdout, res)
		return nil
	}
	if !*sweep {
		res, err := benchOnce(c)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, res)
		}
		printBench(stdout, res)
		return nil
	}
	c.peak = machine.GEMMPeak()
	var byReplicas, byBatch []BenchResult
	for _, v := range []struct {
		replicas, batch int
	}{{1, 0}, {2, 0}, {4, 0}, {10, 0}, {20, 0}, {0, 32}, {0, 128}, {0, 512}} {
		cc := c
		if v.replicas > 0 {
			cc.replicas = v.replicas
		} else {
			cc.batch = v.batch
		}
		res, err := benchOnce(cc)
		if err != nil {
			return err
		}
		if v.replicas > 0 {
			byReplicas = append(byReplicas, res)
		} else {
			byBatch = append(byBatch, res)
		}
	}
	if *asJSON {
		return writeJSON(stdout, map[string][]BenchResult{"replicas": byReplicas, "batch": byBatch})
	}
	fmt.Fprintf(stdout, "PT-SGHMC %s, %s, arithmetic %s, exchange every %d steps, %d timed steps each\n\n", c.arch, c.dtype, autodiff.CurrentArithmetic().ID(), c.every, c.steps)
	fmt.Fprintln(stdout, "| replicas | batch | steps/s | replica-steps/s | gradient ms | update ms | exchange ms | GFLOP/s | process peak RSS so far MiB |")
	fmt.Fprintln(stdout, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range append(append([]BenchResult(nil), byReplicas...), byBatch...) {
		fmt.Fprintf(stdout, "| %d | %d | %.2f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f |\n", r.Replicas, r.Batch, r.StepsPerSec,
			r.StepsPerSec*float64(r.Replicas), r.GradientSec*1e3, r.UpdateSec*1e3, r.ExchangeSec*1e3, r.GradGFLOPS, r.PeakRSSMiB)
	}
	if *plotPath != "" {
		return plotScaling(*plotPath, byReplicas, byBatch)
	}
	return nil
}

// benchOnce times one configuration.
func benchOnce(c benchConfig) (BenchResult, error) {
	var res BenchResult
	sizes, err := nn.ParseArch(c.arch)
	if err != nil {
		return res, err
	}
	if c.replicas < 1 || c.batch < 1 || c.steps < 1 {
		return res, fmt.Errorf("bench: replicas, batch and steps must be positive (got %d, %d, %d)", c.replicas, c.batch, c.steps)
	}
	spec := nn.Spec{Sizes: sizes, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	model, err := spec.Model()
	if err != nil {
		return res, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data, err := datasets.SyntheticImages(10000, sizes[0], sizes[len(sizes)-1], rng)
	if err != nil {
		return res, err
	}
	// the sampler a training run of these settings steps (train.NewPT):
	// sgnht replicas on a geometric ladder to T = 10, train's exchange test
	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Batch, cfg.Exchange, cfg.TMax = c.arch, c.batch, c.every, 10
	cfg.Sampler, cfg.Replicas = "sgnht", 1
	if c.replicas > 1 {
		cfg.Sampler, cfg.Replicas = runspec.PTSGHMC, c.replicas
	}
	pt, err := train.NewPT(runspec.Setup{}, cfg, data.N)
	if err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	temps := pt.Temps
	threads := autodiff.BLASThreads()
	defer autodiff.SetBLASThreads(threads)
	if c.replicas > 1 {
		autodiff.SetBLASThreads(1)
	}
	var gradNS atomic.Int64
	pots := make([]sampler.Potential, len(temps))
	var first *autodiff.Potential
	for j := range pots {
		ev, err := autodiff.NewPlan(spec, c.batch, autodiff.DType(c.dtype))
		if err != nil {
			return res, err
		}
		p, err := autodiff.NewPotential(model, data, ev, c.batch, rng)
		if err != nil {
			return res, err
		}
		if j == 0 {
			first = p
			// as in train: exchange tests evaluate both configurations in
			// parallel on batches of 1024
			if err := p.ParallelTerms(2, 1024, autodiff.DType(c.dtype)); err != nil {
				return res, err
			}
		}
		pots[j] = newTimedPotential(p, &gradNS)
	}
	starts := make([][]float64, len(temps))
	if c.sharedStart {
		starts = starts[:1]
	}
	for j := range starts {
		starts[j] = make([]float64, spec.NumParams())
		spec.Init(starts[j], rng)
	}
	st, err := pt.Init(starts, 1)
	if err != nil {
		return res, err
	}
	// as in train: each rung's minibatch order is the run's state and PT
	// hands the kernel its minibatch (what lets a step draw its noise ahead)
	st.Orders = make([]sampler.BatchOrder, len(temps))
	for j := range st.Orders {
		o, err := datasets.NewBatches(data.N, c.batch, st.Streams[j].Rand)
		if err != nil {
			return res, err
		}
		st.Orders[j] = o
	}
	if err := pt.Run(pots, first, st, 5, nil); err != nil {
		return res, err
	}
	gradNS.Store(0)
	prop0, grown0, exact0, early0 := sum(st.Stats.Proposed), st.Stats.Grown, st.Stats.Exact, st.Stats.Early
	var exNS int64
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	// train's loop, tempering.PT.RunUntil, with timers for hooks: a step
	// that ends in an exchange round adds its time to exNS
	var t0 time.Time
	timer := tempering.Hooks{
		Before: func(pt *tempering.PT, st *tempering.PTState) error { t0 = time.Now(); return nil },
		After: func(st *tempering.PTState) error {
			if pt.Every > 0 && st.Steps%pt.Every == 0 {
				exNS += int64(time.Since(t0))
			}
			return nil
		},
	}
	start := time.Now()
	if err := pt.RunUntil(context.Background(), pots, first, st, st.Steps+c.steps, timer); err != nil {
		return res, err
	}
	wall := time.Since(start).Seconds()
	runtime.ReadMemStats(&ms1)
	workers := min(runtime.GOMAXPROCS(0), len(temps))
	res = BenchResult{Arch: c.arch, Replicas: len(temps), Batch: c.batch, DType: c.dtype, BLAS: autodiff.CurrentArithmetic().ID(), Steps: c.steps}
	res.StepsPerSec = float64(c.steps) / wall
	res.GradientSec = float64(gradNS.Load()) / 1e9 / float64(workers) / float64(c.steps)
	// exchange steps also contain a gradient phase: approximate the exchange
	// itself as the excess of those steps over the mean non-exchange step.
	res.ExchangeSec = float64(exNS) / 1e9 / float64(c.steps)
	nEx := 0.0
	if pt.Every > 0 && len(temps) > 1 {
		nEx = float64(c.steps / pt.Every)
	}
	if nEx > 0 && nEx < float64(c.steps) {
		meanStep := (wall - float64(exNS)/1e9) / (float64(c.steps) - nEx)
		res.ExchangeSec = (float64(exNS)/1e9 - nEx*meanStep) / float64(c.steps)
	} else if nEx == 0 {
		res.ExchangeSec = 0
	}
	res.UpdateSec = 1/res.StepsPerSec - res.GradientSec - res.ExchangeSec
	flops := machine.GradientFLOPs(sizes, c.batch) * float64(len(temps))
	res.GradGFLOPS = flops / res.GradientSec / 1e9
	res.PeakGFLOPS = c.peak
	if res.PeakGFLOPS == 0 {
		res.PeakGFLOPS = machine.GEMMPeak()
	}
	res.PeakShare = res.GradGFLOPS / res.PeakGFLOPS
	res.UpdateBytes = 40 * float64(spec.NumParams()) * float64(len(temps))
	res.PeakRSSMiB = machine.PeakRSS() // before the bandwidth test's buffers
	res.CopyGBs = machine.CopyBandwidth(workers)
	res.UpdateBoundSec = res.UpdateBytes / (res.CopyGBs * 1e9)
	res.AllocsPerStep = float64(ms1.Mallocs-ms0.Mallocs) / float64(c.steps)
	res.Exchanges = sum(st.Stats.Proposed) - prop0
	res.ExchangesGrown, res.ExchangesExact, res.ExchangesEarly = st.Stats.Grown-grown0, st.Stats.Exact-exact0, st.Stats.Early-early0
	return res, nil
}

func printBench(w io.Writer, res BenchResult) {
	fmt.Fprintf(w, "PT-SGHMC %s, %d replicas, batch %d, %s, arithmetic %s, %d steps\n", res.Arch, res.Replicas, res.Batch, res.DType, res.BLAS, res.Steps)
	fmt.Fprintf(w, "  steps/s            %8.2f\n", res.StepsPerSec)
	fmt.Fprintf(w, "  per step: gradient %7.2f ms, update %7.2f ms, exchange %7.2f ms\n", res.GradientSec*1e3, res.UpdateSec*1e3, res.ExchangeSec*1e3)
	fmt.Fprintf(w, "  gradient phase     %8.1f GFLOP/s = %.0f%% of the measured float32 GEMM peak %.1f GFLOP/s\n", res.GradGFLOPS, 100*res.PeakShare, res.PeakGFLOPS)
	fmt.Fprintf(w, "  update phase       %8.2f ms = %.1fx its memory bound %.2f ms (%.1f MB per step at the measured copy bandwidth %.1f GB/s)\n",
		res.UpdateSec*1e3, res.UpdateSec/res.UpdateBoundSec, res.UpdateBoundSec*1e3, res.UpdateBytes/1e6, res.CopyGBs)
	fmt.Fprintf(w, "  exchange tests     %8d (%d grew their batch, %d exact on all data, %d decided early)\n", res.Exchanges, res.ExchangesGrown, res.ExchangesExact, res.ExchangesEarly)
	fmt.Fprintf(w, "  peak RSS           %8.0f MiB, %.1f allocations per step\n", res.PeakRSSMiB, res.AllocsPerStep)
}

// plotScaling writes steps/s against replicas and against batch size.
func plotScaling(path string, byReplicas, byBatch []BenchResult) error {
	pr, pb := plot.New(), plot.New()
	pr.Title.Text = fmt.Sprintf("batch %d", byReplicas[0].Batch)
	pr.X.Label.Text, pr.Y.Label.Text = "replicas", "steps/s"
	pb.Title.Text = fmt.Sprintf("%d replicas", byBatch[0].Replicas)
	pb.X.Label.Text, pb.Y.Label.Text = "batch", "steps/s"
	var a, ar, b plotter.XYs
	for _, r := range byReplicas {
		a = append(a, plotter.XY{X: float64(r.Replicas), Y: r.StepsPerSec})
		ar = append(ar, plotter.XY{X: float64(r.Replicas), Y: r.StepsPerSec * float64(r.Replicas) / 10})
	}
	for _, r := range byBatch {
		b = append(b, plotter.XY{X: float64(r.Batch), Y: r.StepsPerSec})
	}
	if err := plotutil.AddLinePoints(pr, "PT steps/s", a, "replica-steps/s / 10", ar); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := plotutil.AddLinePoints(pb, "PT steps/s", b); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	pb.X.Scale = plot.LogScale{}
	pb.X.Tick.Marker = plot.LogTicks{}
	return saveRow(path, pr, pb)
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// ModelBenchResult is the output of ptsghmc bench --model: one chain's
// SGNHT step (minibatch gradient of U~ and the update with injected noise)
// of a registered model, against the float32 GEMM peak measured in the same
// process.
type ModelBenchResult struct {
	Model       string  `json:"model"`
	Params      int     `json:"params"`
	Engine      string  `json:"engine"`
	Shards      int     `json:"grad_shards"`
	Batch       int     `json:"batch"`
	DType       string  `json:"dtype"`
	BLAS        string  `json:"blas"`
	Steps       int     `json:"steps"`
	StepMS      float64 `json:"ms_per_step"`
	CPUMS       float64 `json:"cpu_ms_per_step"` // process CPU time a step (all threads): steadier on a shared machine
	GradientMS  float64 `json:"gradient_ms_per_step"`
	MACs        int64   `json:"macs_per_step"` // multiply-adds of the step's products and convolutions
	GFLOPS      float64 `json:"gflops"`        // 2 MACs over the step's time
	PeakGFLOPS  float64 `json:"gemm_peak_gflops"`
	FloorMS     float64 `json:"floor_ms"` // 2 MACs at the GEMM peak
	AllocsStep  float64 `json:"allocs_per_step"`
	PeakRSSMiB  float64 `json:"peak_rss_mib"`
	StepsPerSec float64 `json:"steps_per_sec"`
}

// benchModel times c.steps SGNHT steps of the registered model c.model on
// synthetic 28x28 images, after 3 warm-up steps.
func benchModel(c benchConfig) (ModelBenchResult, error) {
	var res ModelBenchResult
	build, ok := nn.Models[c.model]
	if !ok {
		return res, fmt.Errorf("bench: model %q is not registered: expected one of %s", c.model, strings.Join(nn.ModelNames(), ", "))
	}
	if c.batch < 1 || c.steps < 1 || c.shards < 0 {
		return res, fmt.Errorf("bench: batch and steps must be positive, shards non-negative (got %d, %d, %d)", c.batch, c.steps, c.shards)
	}
	engine := autodiff.Engine(c.engine)
	if engine != autodiff.EngineCompiled && engine != autodiff.EngineGraph {
		return res, fmt.Errorf("bench: engine %q: expected compiled or graph", c.engine)
	}
	model, err := build(nn.PriorConfig{Precision: 1, FanIn: true})
	if err != nil {
		return res, err
	}
	if engine == autodiff.EngineCompiled {
		if err := compile.Check(model); err != nil {
			return res, fmt.Errorf("bench: %w", err)
		}
	}
	shards := c.shards
	if shards == 0 {
		shards = min(runtime.GOMAXPROCS(0), 4, c.batch)
	}
	dtype := autodiff.DType(c.dtype)
	threads := autodiff.BLASThreads()
	defer autodiff.SetBLASThreads(threads)
	var ev autodiff.Evaluator
	if shards > 1 {
		autodiff.SetBLASThreads(1) // the shards run in parallel, as train runs them
		ev, err = autodiff.NewShardedFor(engine, model, c.batch, dtype, shards)
	} else {
		ev, err = autodiff.NewFor(engine, model, c.batch, dtype)
	}
	if err != nil {
		return res, err
	}
	// The multiply-adds: a compiled plan of one example's, times the batch
	// (a CNN's products all scale with the batch).
	// A model the compiler cannot compile (timed on the VM) has no count.
	if counter, err := autodiff.NewFor(autodiff.EngineCompiled, model, 1, dtype); err == nil {
		if ce, ok := counter.(*compile.Evaluator); ok {
			res.MACs = ce.MACs() * int64(c.batch)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data, err := datasets.SyntheticImages(max(10*c.batch, 1024), model.Inputs, model.Outputs, rng)
	if err != nil {
		return res, err
	}
	p, err := autodiff.NewPotential(model, data, ev, c.batch, rng)
	if err != nil {
		return res, err
	}
	var gradNS atomic.Int64
	pots := []sampler.Potential{newTimedPotential(p, &gradNS)}
	cfg := runspec.DefaultConfig() // the sampler of a training run: one sgnht chain
	cfg.Sampler, cfg.Replicas, cfg.Batch = "sgnht", 1, c.batch
	pt, err := train.NewPT(runspec.Setup{}, cfg, data.N)
	if err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	theta := make([]float64, model.NumParams())
	model.Layout.Init(theta, rng)
	st, err := pt.Init([][]float64{theta}, 1)
	if err != nil {
		return res, err
	}
	if err := pt.Run(pots, p, st, 3, nil); err != nil {
		return res, err
	}
	gradNS.Store(0)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start, cpu0 := time.Now(), machine.CPUTime()
	if err := pt.Run(pots, p, st, c.steps, nil); err != nil {
		return res, err
	}
	wall, cpu := time.Since(start).Seconds(), machine.CPUTime()-cpu0
	runtime.ReadMemStats(&ms1)
	res = ModelBenchResult{Model: c.model, Params: model.NumParams(), Engine: c.engine, Shards: shards, Batch: c.batch,
		DType: c.dtype, BLAS: autodiff.CurrentArithmetic().ID(), Steps: c.steps, MACs: res.MACs}
	res.StepMS = wall / float64(c.steps) * 1e3
	res.CPUMS = cpu.Seconds() / float64(c.steps) * 1e3
	res.StepsPerSec = float64(c.steps) / wall
	res.GradientMS = float64(gradNS.Load()) / 1e6 / float64(c.steps)
	res.GFLOPS = 2 * float64(res.MACs) / (res.StepMS / 1e3) / 1e9
	res.AllocsStep = float64(ms1.Mallocs-ms0.Mallocs) / float64(c.steps)
	res.PeakRSSMiB = machine.PeakRSS()
	res.PeakGFLOPS = c.peak
	if res.PeakGFLOPS == 0 {
		res.PeakGFLOPS = machine.GEMMPeak()
	}
	res.FloorMS = 2 * float64(res.MACs) / (res.PeakGFLOPS * 1e9) * 1e3
	if res.MACs == 0 {
		res.GFLOPS, res.FloorMS = 0, 0
	}
	return res, nil
}

func printModelBench(w io.Writer, r ModelBenchResult) {
	fmt.Fprintf(w, "SGNHT step of %s (%d parameters), engine %s, %d gradient shards, batch %d, %s, arithmetic %s, %d steps\n",
		r.Model, r.Params, r.Engine, r.Shards, r.Batch, r.DType, r.BLAS, r.Steps)
	fmt.Fprintf(w, "  ms a step          %8.1f (%.2f steps/s; gradient %.1f ms; process CPU %.1f ms a step)\n", r.StepMS, r.StepsPerSec, r.GradientMS, r.CPUMS)
	if r.MACs == 0 {
		fmt.Fprintf(w, "  multiply-adds      not counted (the graph compiler does not support this model)\n")
		fmt.Fprintf(w, "  float32 GEMM peak  %8.1f GFLOP/s measured now\n", r.PeakGFLOPS)
	} else {
		fmt.Fprintf(w, "  multiply-adds      %8.3g a step (%.3g GFLOP), %.1f GFLOP/s\n", float64(r.MACs), 2*float64(r.MACs)/1e9, r.GFLOPS)
		fmt.Fprintf(w, "  float32 GEMM peak  %8.1f GFLOP/s measured now: floor %.1f ms a step, this step %.2fx the floor\n", r.PeakGFLOPS, r.FloorMS, r.StepMS/r.FloorMS)
	}
	fmt.Fprintf(w, "  peak RSS           %8.0f MiB, %.1f allocations per step\n", r.PeakRSSMiB, r.AllocsStep)
}
