//go:build ignore

// noisetrend runs a train run (make run's recipe by default) and writes,
// every -every steps, one JSON line per block of steps: each of the 64
// index groups' and each layer's kinetic temperature (mean q_i^2 over the
// mean over all coordinates, every 16th step, from the momentum); the
// kernel's own per-coordinate gradient-noise estimate over the block
// (sampler.State.SumNoise: during burn-in the noise correction's window
// sums, adapt.NoiseEstimate; after burn-in the per-coordinate health
// watch's, health.CoordWatch, per group only); at the block's end, the
// minibatch gradient noise measured directly at the chain's position,
// (h c_g)^2 Var[g~_i] per step (c_g the temperature's gradient factor),
// over -m random minibatches of the run's batch size; and after burn-in
// the noise the correction estimated at the end of burn-in and the
// variance it still injects, per group and layer. It is issue 60's
// diagnostic: does the gradient noise grow after burn-in, or are the
// estimates not comparable? Run from the repository root:
//
//	go run scripts/noisetrend.go -out DIR [-every 2500] [-m 400] -- TRAIN_FLAGS
//
// with TRAIN_FLAGS those of ptsghmc train (make run's RUN_FLAGS and --data).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"github.com/ptsghmc/ptsghmc/train"
)

// groups is the per-coordinate watch's number of index groups.
const groups = 64

// region is a range of coordinates [lo, hi) with a name.
type region struct {
	Name   string
	Lo, Hi int
}

// block is one output line.
type block struct {
	From, Step int
	Phase      string
	// TempG and TempR are the groups' and regions' kinetic temperatures
	// relative to the mean over all coordinates.
	TempG []float64
	TempR map[string]float64
	// NoiseG and NoiseR are the kernel's noise estimate per step and
	// coordinate over the block (NoiseR during burn-in only).
	NoiseG []float64          `json:",omitempty"`
	NoiseR map[string]float64 `json:",omitempty"`
	// DirectG and DirectR are the minibatch noise measured at the block's
	// end, per step and coordinate.
	DirectG []float64          `json:",omitempty"`
	DirectR map[string]float64 `json:",omitempty"`
	// EstG, EstR: the correction's estimate at the end of burn-in
	// (inj (1 - InjScale^2)); InjG, InjR: the variance still injected.
	EstG, InjG []float64          `json:",omitempty"`
	EstR, InjR map[string]float64 `json:",omitempty"`
	Xi         float64
}

func main() {
	fs := flag.NewFlagSet("noisetrend", flag.ExitOnError)
	out := fs.String("out", "", "run directory (overwritten)")
	every := fs.Int("every", 2500, "block length in steps")
	m := fs.Int("m", 400, "minibatches for the direct noise measurement")
	stride := fs.Int("stride", 16, "steps between the temperature's momentum reads")
	fs.Parse(os.Args[1:])
	cfg := runspec.DefaultConfig()
	tf := flag.NewFlagSet("train", flag.ExitOnError)
	if err := cfg.BindFlags(tf); err != nil {
		fail(err)
	}
	tf.Parse(fs.Args())
	if err := run(*out, cfg, *every, *m, *stride); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "noisetrend:", err)
	os.Exit(1)
}

func run(out string, cfg runspec.Config, every, m, stride int) error {
	setup := runspec.DefaultSetup()
	ch, err := train.NewChains(out, cfg, true, setup)
	if err != nil {
		return err
	}
	defer ch.Close()
	r := ch.Runs[0]
	drv, err := train.NewDriver(setup, r.Cfg, r.Data.N)
	if err != nil {
		return err
	}
	h, a := drv.Kernel.(sampler.Frictional).Dynamics()
	dim := r.Model.NumParams()
	ev, err := autodiff.NewFor(cfg.RunEngine(r.Model), r.Model, cfg.Batch, cfg.DTypeValue())
	if err != nil {
		return err
	}
	tr := &tracer{cfg: cfg, run: r, every: every, m: m, stride: stride, dim: dim,
		inj: sampler.InjectedVariance(a, h), k: h * gradFactor(cfg), regs: regionsOf(r, dim),
		pot: &autodiff.Potential{Model: r.Model, Data: r.Data, Eval: ev}, rng: rand.New(rand.NewPCG(7, 11)),
		enc: json.NewEncoder(os.Stdout), kin: make([]float64, dim)}
	tr.win0, tr.win1 = adapt.Noise{Correct: true, BurnIn: cfg.BurnIn, Precondition: cfg.PreconditionValue()}.Window()
	fmt.Fprintf(os.Stderr, "noisetrend: D %d, h %g, A h %g, injected %g per step, gradient factor %g\n", dim, h, a*h, tr.inj, gradFactor(cfg))
	if err := r.Train(context.Background(), tr.progress); err != nil {
		return err
	}
	if tr.err != nil {
		return tr.err
	}
	return ch.Finish()
}

// gradFactor returns the temperature's factor on the gradient, c_g.
func gradFactor(cfg runspec.Config) float64 {
	switch {
	case cfg.Temperature == 0 || cfg.Temperature == 1:
		return 1
	case cfg.Tempering == "gradient":
		return 1 / cfg.Temperature
	}
	return 1 / math.Sqrt(cfg.Temperature)
}

// regionsOf returns the model's layers as regions, the last index group
// g63 and the parts of layers that g63 cuts.
func regionsOf(r *train.Run, dim int) []region {
	var regs []region
	for _, p := range r.Model.Layout {
		regs = append(regs, region{p.Name, p.Offset, p.Offset + p.Size()})
	}
	g63 := region{"g63", (groups - 1) * dim / groups, dim}
	regs = append(regs, g63)
	for _, p := range r.Model.Layout {
		lo, hi := max(p.Offset, g63.Lo), min(p.Offset+p.Size(), g63.Hi)
		if lo < hi && hi-lo < p.Size() {
			regs = append(regs, region{p.Name + "-in-g63", lo, hi})
		}
	}
	return regs
}

// tracer writes the blocks of a run from its progress calls.
type tracer struct {
	cfg              runspec.Config
	run              *train.Run
	every, m, stride int
	dim              int
	inj, k           float64 // the injected variance per step; h c_g
	regs             []region
	pot              *autodiff.Potential
	rng              *rand.Rand
	enc              *json.Encoder
	win0, win1       int       // the noise correction's estimation window
	kin              []float64 // q_i^2 summed over the block's reads
	reads, start     int
	noisePrev        []float64 // the burn-in window's sums at the block's start
	countPrev        int
	coordPrev        []float64 // the coordinate watch's noise sums at the block's start
	coordStepsPrev   int
	err              error
}

// progress is the run's progress callback.
func (tr *tracer) progress(s train.Status) {
	st := tr.run.State()
	t := s.Step
	if t%tr.stride == 0 {
		for i, q := range st.Rungs[0].P {
			tr.kin[i] += q * q
		}
		tr.reads++
	}
	// the noise correction's window sums are cleared at its end: read
	// them one step before
	last := t == tr.win1-1 || t%tr.every == 0 && t > tr.win0 && t < tr.win1-1
	switch {
	case t > tr.win0 && last && tr.cfg.NoiseCorrection && len(st.Noise) > 0:
		tr.emit(tr.burnInWindow(st, t), st)
	case t%tr.every == 0 || t == tr.cfg.Steps || t == tr.cfg.BurnIn:
		b, err := tr.sample(st, t)
		if err != nil {
			tr.err = err
			return
		}
		tr.emit(b, st)
	}
}

// emit fills in b's temperatures, writes it and starts the next block.
func (tr *tracer) emit(b block, st *tempering.PTState) {
	fill(&b, tr.kin, tr.reads, tr.regs, tr.dim, st)
	if err := tr.enc.Encode(b); err != nil {
		tr.err = err
	}
	tr.start, tr.reads = b.Step, 0
	clear(tr.kin)
}

// burnInWindow returns the block ending at step t within the noise
// correction's window: its estimate's sums over the block.
func (tr *tracer) burnInWindow(st *tempering.PTState, t int) block {
	e := st.Noise[0]
	b := block{From: tr.start, Step: t, Phase: "burnin-window"}
	if tr.noisePrev == nil {
		tr.noisePrev = make([]float64, tr.dim)
	}
	diff := make([]float64, tr.dim)
	n := float64(e.Count - tr.countPrev)
	for i := range diff {
		diff[i] = (e.Sum[i] - tr.noisePrev[i]) / n
	}
	b.NoiseG, b.NoiseR = byGroup(diff, tr.dim), byRegion(diff, tr.regs)
	copy(tr.noisePrev, e.Sum)
	tr.countPrev = e.Count
	return b
}

// sample returns the block ending at step t outside the window: the
// coordinate watch's noise after burn-in, the correction's estimate and
// injection, and the noise measured directly at the chain's position.
func (tr *tracer) sample(st *tempering.PTState, t int) (block, error) {
	rung := st.Rungs[0]
	b := block{From: tr.start, Step: t, Phase: "sample"}
	if t <= tr.cfg.BurnIn {
		b.Phase = "burnin"
	}
	if t > tr.cfg.BurnIn && len(st.Stats.Health) > 0 {
		c := st.Stats.Health[0].Coords
		if tr.coordPrev == nil {
			tr.coordPrev = make([]float64, len(c.N))
		}
		b.NoiseG = make([]float64, len(c.N))
		for u := range c.N {
			v := c.NoiseSum[u] + c.NoiseB[u]
			b.NoiseG[u] = (v - tr.coordPrev[u]) / float64(c.Steps-tr.coordStepsPrev) / float64(c.N[u])
			tr.coordPrev[u] = v
		}
		tr.coordStepsPrev = c.Steps
	}
	if sc := rung.InjScale; sc != nil {
		est, in := make([]float64, tr.dim), make([]float64, tr.dim)
		for i, v := range sc {
			est[i], in[i] = tr.inj*(1-v*v), tr.inj*v*v
		}
		b.EstG, b.EstR, b.InjG, b.InjR = byGroup(est, tr.dim), byRegion(est, tr.regs), byGroup(in, tr.dim), byRegion(in, tr.regs)
	}
	v, err := direct(tr.pot, rung.Theta, tr.cfg.Batch, tr.m, tr.k, tr.rng)
	if err != nil {
		return b, err
	}
	b.DirectG, b.DirectR = byGroup(v, tr.dim), byRegion(v, tr.regs)
	return b, nil
}

// fill sets b's temperatures from the block's momentum sums and its
// thermostat.
func fill(b *block, kin []float64, reads int, regs []region, dim int, st *tempering.PTState) {
	b.Xi = st.Rungs[0].Xi
	if reads == 0 {
		return
	}
	all := 0.0
	for _, v := range kin {
		all += v
	}
	all /= float64(dim)
	rel := make([]float64, dim)
	for i, v := range kin {
		rel[i] = v / all
	}
	b.TempG, b.TempR = byGroup(rel, dim), byRegion(rel, regs)
}

// direct returns each coordinate's minibatch gradient noise per step,
// k^2 Var[g~_i] over m random minibatches of size batch at theta.
func direct(pot *autodiff.Potential, theta []float64, batch, m int, k float64, rng *rand.Rand) ([]float64, error) {
	dim := len(theta)
	sum, sq, g := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	n := pot.Data.N
	for range m {
		idx := rng.Perm(n)[:batch]
		if _, err := pot.Gradient(theta, g, sampler.Minibatch{Index: idx, Scale: float64(n) / float64(batch)}, rng); err != nil {
			return nil, err
		}
		for i, v := range g {
			sum[i] += v
			sq[i] += v * v
		}
	}
	out := make([]float64, dim)
	for i := range out {
		mean := sum[i] / float64(m)
		out[i] = k * k * (sq[i] - float64(m)*mean*mean) / float64(m-1)
	}
	return out, nil
}

// byGroup returns v's mean over each of the 64 index groups (the
// per-coordinate watch's units without a mass).
func byGroup(v []float64, dim int) []float64 {
	out := make([]float64, groups)
	for k := range out {
		lo, hi := k*dim/groups, (k+1)*dim/groups
		for _, x := range v[lo:hi] {
			out[k] += x
		}
		out[k] /= float64(hi - lo)
	}
	return out
}

// byRegion returns v's mean over each region.
func byRegion(v []float64, regs []region) map[string]float64 {
	out := map[string]float64{}
	for _, r := range regs {
		s := 0.0
		for _, x := range v[r.Lo:r.Hi] {
			s += x
		}
		out[r.Name] = s / float64(r.Hi-r.Lo)
	}
	return out
}
