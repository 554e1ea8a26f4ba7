package bench

import (
	"fmt"
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
	"github.com/ptsghmc/ptsghmc/nullspace"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/train"
)

// ModelResult is what Model measures: one chain's SGNHT step (minibatch
// gradient of U~ and the update with injected noise) of a registered model,
// against the float32 GEMM peak measured in the same process.
type ModelResult struct {
	Model       string  `json:"model"`
	Params      int     `json:"params"`
	Engine      string  `json:"engine"`
	Shards      int     `json:"grad_shards"`
	NullSpace   float64 `json:"null_space_prior,omitempty"` // the null-space prior's scale (Settings.NullSpace)
	Batch       int     `json:"batch"`
	DType       string  `json:"dtype"`
	BLAS        string  `json:"blas"` // the arithmetic's ID (autodiff.CurrentArithmetic)
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

// modelEvaluator returns the evaluator Model times: s.Model of nn.Models
// on s.Engine, its gradient over s.Shards graphs (0: one per core,
// up to autodiff.MaxShards), and the shards it took. With several shards it
// gives BLAS one thread per call, as train does, until restore is called.
func modelEvaluator(s Settings) (ev autodiff.Evaluator, model nn.Model, shards int, restore func(), err error) {
	restore = func() {}
	build, ok := runspec.LookupModel(runspec.DefaultSetup().Models, s.Model)
	if !ok {
		return nil, model, 0, restore, fmt.Errorf("bench: model %q is not registered: expected one of %s, or a FILE.onnx", s.Model, strings.Join(nn.ModelNames(), ", "))
	}
	if s.Batch < 1 || s.Steps < 1 || s.Shards < 0 {
		return nil, model, 0, restore, fmt.Errorf("bench: batch and steps must be positive, shards non-negative (got %d, %d, %d)", s.Batch, s.Steps, s.Shards)
	}
	engine := autodiff.Engine(s.Engine)
	if engine != autodiff.EngineCompiled && engine != autodiff.EngineGraph {
		return nil, model, 0, restore, fmt.Errorf("bench: engine %q: expected compiled or graph", s.Engine)
	}
	if model, err = build(nn.PriorConfig{Precision: 1, FanIn: true}); err != nil {
		return nil, model, 0, restore, err
	}
	if s.NullSpace != 0 {
		if model, err = nullSpaceModel(model, s.NullSpace); err != nil {
			return nil, model, 0, restore, fmt.Errorf("bench: %w", err)
		}
	}
	if engine == autodiff.EngineCompiled {
		if err := compile.Check(model); err != nil {
			return nil, model, 0, restore, fmt.Errorf("bench: %w", err)
		}
	}
	shards = s.Shards
	if shards == 0 {
		shards = min(runtime.GOMAXPROCS(0), autodiff.MaxShards, s.Batch)
	}
	dtype := autodiff.DType(s.DType)
	if shards > 1 {
		restore = autodiff.WithBLASThreads(1) // the shards run in parallel, as train runs them
		ev, err = autodiff.NewShardedFor(engine, model, s.Batch, dtype, shards)
	} else {
		ev, err = autodiff.NewFor(engine, model, s.Batch, dtype)
	}
	return ev, model, shards, restore, err
}

// nullSpaceModel returns model as a run with a null-space prior of scale
// samples it, the prior fitted to noise images of its own stream (not the
// timed steps').
func nullSpaceModel(model nn.Model, scale float64) (nn.Model, error) {
	data, err := datasets.NoiseImages(1024, model.Inputs, model.Outputs, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		return model, err
	}
	prior, err := nullspace.FitModel(model, data, nullspace.DefaultKeep, scale)
	if err != nil {
		return model, err
	}
	return prior.Model(model)
}

// Model times s.Steps SGNHT steps of the registered model s.Model (of
// nn.Models) on 28x28 noise images (datasets.NoiseImages), after 3 warm-up steps.
func Model(s Settings) (ModelResult, error) {
	if s.Engine == "" {
		s.Engine = string(autodiff.EngineCompiled)
	}
	ev, model, shards, restore, err := modelEvaluator(s)
	defer restore()
	if err != nil {
		return ModelResult{}, err
	}
	res := ModelResult{Model: s.Model, Params: model.NumParams(), Engine: s.Engine, Shards: shards, Batch: s.Batch,
		DType: s.DType, Steps: s.Steps, NullSpace: s.NullSpace}
	// The multiply-adds: a compiled plan of one example's, times the batch
	// (a CNN's products all scale with the batch).
	// A model the compiler cannot compile (timed on the VM) has no count.
	if counter, err := autodiff.NewFor(autodiff.EngineCompiled, model, 1, autodiff.DType(s.DType)); err == nil {
		if ce, ok := counter.(*compile.Evaluator); ok {
			res.MACs = ce.MACs() * int64(s.Batch)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data, err := datasets.NoiseImages(max(10*s.Batch, 1024), model.Inputs, model.Outputs, rng)
	if err != nil {
		return res, err
	}
	p, err := autodiff.NewPotential(model, data, ev, s.Batch, rng)
	if err != nil {
		return res, err
	}
	var gradNS atomic.Int64
	pots := []sampler.Potential{newTimedPotential(p, &gradNS)}
	cfg := runspec.DefaultConfig() // the sampler of a training run: one sgnht chain
	cfg.Sampler, cfg.Replicas, cfg.Batch = "sgnht", 1, s.Batch
	pt, err := train.NewDriver(runspec.DefaultSetup(), cfg, data.N)
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
	if err := pt.Run(pots, p, st, s.Steps, nil); err != nil {
		return res, err
	}
	wall, cpu := time.Since(start).Seconds(), machine.CPUTime()-cpu0
	runtime.ReadMemStats(&ms1)
	res.BLAS = autodiff.CurrentArithmetic().ID()
	res.StepMS = wall / float64(s.Steps) * 1e3
	res.CPUMS = cpu.Seconds() / float64(s.Steps) * 1e3
	res.StepsPerSec = float64(s.Steps) / wall
	res.GradientMS = float64(gradNS.Load()) / 1e6 / float64(s.Steps)
	res.GFLOPS = 2 * float64(res.MACs) / (res.StepMS / 1e3) / 1e9
	res.AllocsStep = float64(ms1.Mallocs-ms0.Mallocs) / float64(s.Steps)
	res.PeakRSSMiB = machine.PeakRSS()
	res.PeakGFLOPS = s.Peak
	if res.PeakGFLOPS == 0 {
		res.PeakGFLOPS = machine.GEMMPeak()
	}
	res.FloorMS = 2 * float64(res.MACs) / (res.PeakGFLOPS * 1e9) * 1e3
	if res.MACs == 0 {
		res.GFLOPS, res.FloorMS = 0, 0
	}
	return res, nil
}
