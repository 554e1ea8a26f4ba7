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
	fk := drv.Kernel.(sampler.Frictional)
	h, a := fk.Dynamics()
	inj := sampler.InjectedVariance(a, h)
	gc := 1 / math.Sqrt(cfg.Temperature)
	if cfg.Tempering == "gradient" {
		gc = 1 / cfg.Temperature
	}
	if cfg.Temperature == 0 || cfg.Temperature == 1 {
		gc = 1
	}
	dim := r.Model.NumParams()
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
	ev, err := autodiff.NewFor(cfg.RunEngine(r.Model), r.Model, cfg.Batch, cfg.DTypeValue())
	if err != nil {
		return err
	}
	pot := &autodiff.Potential{Model: r.Model, Data: r.Data, Eval: ev}
	rng := rand.New(rand.NewPCG(7, 11))
	enc := json.NewEncoder(os.Stdout)
	fmt.Fprintf(os.Stderr, "noisetrend: D %d, h %g, A h %g, injected %g per step, gradient factor %g\n", dim, h, a*h, inj, gc)

	kin := make([]float64, dim) // q_i^2 summed over the block's reads
	reads := 0
	var noisePrev []float64 // the burn-in window's sums at the block's start
	countPrev := 0
	var coordPrev []float64 // the coordinate watch's noise sums at the block's start
	coordStepsPrev := 0
	start := 0
	win0, win1 := adapt.Noise{Correct: true, BurnIn: cfg.BurnIn, Precondition: cfg.PreconditionValue()}.Window()
	var encErr error
	progress := func(s train.Status) {
		st := r.State()
		rung := st.Rungs[0]
		t := s.Step
		if t%stride == 0 {
			for i, q := range rung.P {
				kin[i] += q * q
			}
			reads++
		}
		// the noise correction's window sums are cleared at its end: read
		// them one step before
		last := t == win1-1 || t%every == 0 && t > win0 && t < win1-1
		if t > win0 && last && cfg.NoiseCorrection && len(st.Noise) > 0 {
			e := st.Noise[0]
			b := block{From: start, Step: t, Phase: "burnin-window"}
			if noisePrev == nil {
				noisePrev = make([]float64, dim)
			}
			diff := make([]float64, dim)
			n := float64(e.Count - countPrev)
			for i := range diff {
				diff[i] = (e.Sum[i] - noisePrev[i]) / n
			}
			b.NoiseG, b.NoiseR = byGroup(diff, dim), byRegion(diff, regs)
			copy(noisePrev, e.Sum)
			countPrev = e.Count
			fill(&b, kin, reads, regs, dim, st)
			encErr = enc.Encode(b)
			start, reads = t, 0
			clear(kin)
			return
		}
		if t%every != 0 && t != cfg.Steps && t != cfg.BurnIn {
			return
		}
		b := block{From: start, Step: t, Phase: "sample"}
		if t <= cfg.BurnIn {
			b.Phase = "burnin"
		}
		if t > cfg.BurnIn && len(st.Stats.Health) > 0 {
			c := st.Stats.Health[0].Coords
			if coordPrev == nil {
				coordPrev = make([]float64, len(c.N))
			}
			b.NoiseG = make([]float64, len(c.N))
			for u := range c.N {
				v := c.NoiseSum[u] + c.NoiseB[u]
				b.NoiseG[u] = (v - coordPrev[u]) / float64(c.Steps-coordStepsPrev) / float64(c.N[u])
				coordPrev[u] = v
			}
			coordStepsPrev = c.Steps
		}
		if sc := rung.InjScale; sc != nil {
			est, in := make([]float64, dim), make([]float64, dim)
			for i, v := range sc {
				est[i], in[i] = inj*(1-v*v), inj*v*v
			}
			b.EstG, b.EstR, b.InjG, b.InjR = byGroup(est, dim), byRegion(est, regs), byGroup(in, dim), byRegion(in, regs)
		}
		v, err := direct(pot, rung.Theta, cfg.Batch, m, h*gc, rng)
		if err != nil {
			encErr = err
			return
		}
		b.DirectG, b.DirectR = byGroup(v, dim), byRegion(v, regs)
		fill(&b, kin, reads, regs, dim, st)
		encErr = enc.Encode(b)
		start, reads = t, 0
		clear(kin)
	}
	if err := r.Train(context.Background(), progress); err != nil {
		return err
	}
	if encErr != nil {
		return encErr
	}
	return ch.Finish()
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
