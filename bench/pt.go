package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/machine"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"github.com/ptsghmc/ptsghmc/train"
)

// Settings are one bench configuration. PT reads Arch, Replicas, Batch,
// Steps, DType, Every, ExchangeTest, XBatch, SharedStart and Engine; Model
// reads Model, Engine, Shards, Batch, Steps and DType. Peak is the float32
// GEMM peak the results are compared with (0: measured, machine.GEMMPeak).
type Settings struct {
	Arch         string // MLP widths, input to output (PT)
	Replicas     int    // rungs (PT; 1: one SGNHT chain)
	Batch        int    // minibatch size
	Steps        int    // timed steps, after 5 warm-up steps (3 for Model)
	DType        string // float32 or float64
	Every        int    // steps between exchange rounds (PT; 0: none)
	ExchangeTest string // the swap test (PT), as train's --exchange-test: barker or resghmc ("": train's default)
	XBatch       int    // an exchange test's first batch (PT), as train's --xbatch (0: train's default)
	SharedStart  bool   // every replica starts from one initialisation (PT; else each its own)
	Peak         float64
	Model        string // a registered model (nn.Models), for Model
	Engine       string // with Model: compiled (""), or graph; for PT's MLP: compiled (""), or plan (train's engine plan: the compiled graph too)
	Shards       int    // with Model: gradient shards (0: one per core, up to 4)
	// NullSpace, with Model, times the model under train's
	// --null-space-prior of this scale (0: none), fitted to noise images
	// (nullspace.FitModel): a ConvNet's graph computes its first kernel
	// K' A at every pass, which costs the same whatever A holds.
	NullSpace float64
}

// Result is what PT measures of one configuration.
type Result struct {
	Arch        string  `json:"arch"`
	Engine      string  `json:"engine"` // the MLP's evaluators: plan or compiled
	Replicas    int     `json:"replicas"`
	Batch       int     `json:"batch"`
	DType       string  `json:"dtype"`
	BLAS        string  `json:"blas"` // the arithmetic's ID (autodiff.CurrentArithmetic)
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

// Gradient times the potential's gradient.
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

// ptSetup is what PT times: the sampler, its potentials, its state after
// the warm-up, and the gradients' timer.
type ptSetup struct {
	pt     *driver.Driver
	pots   []sampler.Potential
	first  *autodiff.Potential
	st     *tempering.PTState
	gradNS *atomic.Int64
	params int
	sizes  []int
	engine autodiff.Engine
}

// benchConfig returns the run settings of the sampler s times: train's
// defaults, sgnht replicas (one: a single SGNHT chain) on a geometric
// ladder to T = 10, train's exchange test unless s names one.
func benchConfig(s Settings) runspec.Config {
	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Batch, cfg.Exchange, cfg.TMax = s.Arch, s.Batch, s.Every, 10
	if s.ExchangeTest != "" {
		cfg.XTest = s.ExchangeTest
	}
	if s.XBatch != 0 {
		cfg.XBatch = s.XBatch
	}
	cfg.Sampler, cfg.Replicas = "sgnht", 1
	if s.Replicas > 1 {
		cfg.Sampler, cfg.Replicas = runspec.PTSGHMC, s.Replicas
	}
	return cfg
}

// batchOrders returns a minibatch order of batches of batch of n examples
// per rung of st, each drawn from the rung's stream.
func batchOrders(st *tempering.PTState, n, batch int) ([]sampler.BatchOrder, error) {
	orders := make([]sampler.BatchOrder, len(st.Rungs))
	for j := range orders {
		o, err := datasets.NewBatches(n, batch, st.Streams[j].Rand)
		if err != nil {
			return nil, err
		}
		orders[j] = o
	}
	return orders, nil
}

// newPTSetup builds the sampler a training run of s steps (train.NewDriver:
// sgnht replicas on a geometric ladder to T = 10, train's exchange test) on
// 10,000 noise images (datasets.NoiseImages), its potentials on s.Engine
// (compiled; plan is train's name of the same engine), and steps it 5
// times.
func newPTSetup(s Settings) (*ptSetup, error) {
	sizes, err := nn.ParseArch(s.Arch)
	if err != nil {
		return nil, err
	}
	if s.Replicas < 1 || s.Batch < 1 || s.Steps < 1 {
		return nil, fmt.Errorf("bench: replicas, batch and steps must be positive (got %d, %d, %d)", s.Replicas, s.Batch, s.Steps)
	}
	spec := nn.Spec{Sizes: sizes, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	model, err := spec.Model()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data, err := datasets.NoiseImages(10000, sizes[0], sizes[len(sizes)-1], rng)
	if err != nil {
		return nil, err
	}
	pt, err := train.NewDriver(runspec.DefaultSetup(), benchConfig(s), data.N)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	engine := autodiff.Engine(s.Engine)
	switch engine {
	case "": // what train runs
		engine = autodiff.EngineCompiled
	case autodiff.EnginePlan, autodiff.EngineCompiled:
	default:
		return nil, fmt.Errorf("bench: engine %q: an MLP runs on plan or compiled", s.Engine)
	}
	b := &ptSetup{pt: pt, gradNS: new(atomic.Int64), params: spec.NumParams(), sizes: sizes, engine: engine}
	b.pots = make([]sampler.Potential, len(pt.PT.Temps))
	for j := range b.pots {
		ev, err := autodiff.NewFor(engine, model, s.Batch, autodiff.DType(s.DType))
		if err != nil {
			return nil, err
		}
		p, err := autodiff.NewPotential(model, data, ev, s.Batch, rng)
		if err != nil {
			return nil, err
		}
		if j == 0 {
			b.first = p
			// as in train: exchange tests evaluate both configurations in
			// parallel on batches of 1024
			if err := p.ParallelTermsOn(engine, 2, 1024, autodiff.DType(s.DType)); err != nil {
				return nil, err
			}
		}
		b.pots[j] = newTimedPotential(p, b.gradNS)
	}
	starts := make([][]float64, len(pt.PT.Temps))
	if s.SharedStart {
		starts = starts[:1]
	}
	for j := range starts {
		starts[j] = make([]float64, spec.NumParams())
		spec.Init(starts[j], rng)
	}
	if b.st, err = pt.Init(starts, 1); err != nil {
		return nil, err
	}
	// as in train: each rung's minibatch order is the run's state and PT
	// hands the kernel its minibatch (what lets a step draw its noise ahead)
	if b.st.Orders, err = batchOrders(b.st, data.N, s.Batch); err != nil {
		return nil, err
	}
	if err := pt.Run(b.pots, b.first, b.st, 5, nil); err != nil {
		return nil, err
	}
	return b, nil
}

// PT times s.Steps full PT-SGHMC steps of the MLP s.Arch (one SGNHT chain
// for one replica), after 5 warm-up steps, with one BLAS thread per call
// when replicas step in parallel (as a run sets it).
func PT(s Settings) (Result, error) {
	if s.Replicas > 1 {
		defer autodiff.WithBLASThreads(1)()
	}
	b, err := newPTSetup(s)
	if err != nil {
		return Result{}, err
	}
	pt, st := b.pt, b.st
	b.gradNS.Store(0)
	prop0, grown0, exact0, early0 := sum(st.Stats.Proposed), st.Stats.Grown, st.Stats.Exact, st.Stats.Early
	var exNS int64
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	// train's loop, driver.Driver.RunUntil, timed after every step: a step
	// that ends in an exchange round adds its time to exNS
	start := time.Now()
	t0 := start
	timer := func(st *tempering.PTState) error {
		if every := pt.PT.Every; every > 0 && st.Steps%every == 0 {
			exNS += int64(time.Since(t0))
		}
		t0 = time.Now()
		return nil
	}
	if err := pt.RunUntil(context.Background(), b.pots, b.first, st, st.Steps+s.Steps, timer); err != nil {
		return Result{}, err
	}
	wall := time.Since(start).Seconds()
	runtime.ReadMemStats(&ms1)
	res := b.result(s, wall, exNS)
	res.AllocsPerStep = float64(ms1.Mallocs-ms0.Mallocs) / float64(s.Steps)
	res.Exchanges = sum(st.Stats.Proposed) - prop0
	res.ExchangesGrown, res.ExchangesExact, res.ExchangesEarly = st.Stats.Grown-grown0, st.Stats.Exact-exact0, st.Stats.Early-early0
	return res, nil
}

// result turns the timed steps' wall time and exchange steps' time exNS
// into the phases' times and their bounds.
func (b *ptSetup) result(s Settings, wall float64, exNS int64) Result {
	temps := b.pt.PT.Temps
	workers := min(runtime.GOMAXPROCS(0), len(temps))
	res := Result{Arch: s.Arch, Engine: string(b.engine), Replicas: len(temps), Batch: s.Batch, DType: s.DType, BLAS: autodiff.CurrentArithmetic().ID(), Steps: s.Steps}
	res.StepsPerSec = float64(s.Steps) / wall
	res.GradientSec = float64(b.gradNS.Load()) / 1e9 / float64(workers) / float64(s.Steps)
	// exchange steps also contain a gradient phase: approximate the exchange
	// itself as the excess of those steps over the mean non-exchange step.
	res.ExchangeSec = float64(exNS) / 1e9 / float64(s.Steps)
	nEx := 0.0
	if b.pt.PT.Every > 0 && len(temps) > 1 {
		nEx = float64(s.Steps / b.pt.PT.Every)
	}
	if nEx > 0 && nEx < float64(s.Steps) {
		meanStep := (wall - float64(exNS)/1e9) / (float64(s.Steps) - nEx)
		res.ExchangeSec = (float64(exNS)/1e9 - nEx*meanStep) / float64(s.Steps)
	} else if nEx == 0 {
		res.ExchangeSec = 0
	}
	res.UpdateSec = 1/res.StepsPerSec - res.GradientSec - res.ExchangeSec
	flops := machine.GradientFLOPs(b.sizes, s.Batch) * float64(len(temps))
	res.GradGFLOPS = flops / res.GradientSec / 1e9
	res.PeakGFLOPS = s.Peak
	if res.PeakGFLOPS == 0 {
		res.PeakGFLOPS = machine.GEMMPeak()
	}
	res.PeakShare = res.GradGFLOPS / res.PeakGFLOPS
	res.UpdateBytes = 40 * float64(b.params) * float64(len(temps))
	res.PeakRSSMiB = machine.PeakRSS() // before the bandwidth test's buffers
	res.CopyGBs = machine.CopyBandwidth(workers)
	res.UpdateBoundSec = res.UpdateBytes / (res.CopyGBs * 1e9)
	return res
}

// sum returns the sum of xs.
func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// SweepReplicas and SweepBatches are the configurations Sweep times:
// replicas at the settings' batch, and batch sizes at its replicas.
var (
	SweepReplicas = []int{1, 2, 4, 10, 20}
	SweepBatches  = []int{32, 128, 512}
)

// Sweep times PT at each of SweepReplicas (at s.Batch) and each of
// SweepBatches (at s.Replicas), the GEMM peak measured once.
func Sweep(s Settings) (byReplicas, byBatch []Result, err error) {
	if s.Peak == 0 {
		s.Peak = machine.GEMMPeak()
	}
	for _, r := range SweepReplicas {
		c := s
		c.Replicas = r
		res, err := PT(c)
		if err != nil {
			return nil, nil, err
		}
		byReplicas = append(byReplicas, res)
	}
	for _, b := range SweepBatches {
		c := s
		c.Batch = b
		res, err := PT(c)
		if err != nil {
			return nil, nil, err
		}
		byBatch = append(byBatch, res)
	}
	return byReplicas, byBatch, nil
}
