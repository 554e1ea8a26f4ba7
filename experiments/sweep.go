package experiments

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// SweepSettings are the settings shared by every case of a tempering sweep.
type SweepSettings struct {
	Target    string    // the mixture in the first coordinates: gauss1d4 or gauss2d5
	Budget    int       // gradient evaluations per method and seed (PT: replicas x steps)
	Replicas  int       // PT rungs, and the number of independent chains
	BurnIn    int       // steps per replica discarded (PT tunes its ladder there)
	Thin      int       // keep every this many steps
	Every     int       // steps between PT's exchange rounds
	TMax      float64   // PT's top temperature
	StepSize  float64   // SGNHT step size h
	Diffusion float64   // SGNHT diffusion A
	Fractions []float64 // budget fractions at which the errors are recorded
}

// Steps returns the steps per replica (or chain) that the budget pays for.
func (o SweepSettings) Steps() int { return o.Budget / o.Replicas }

// Checkpoints returns the step at which each budget fraction is spent.
func (o SweepSettings) Checkpoints() []int {
	c := make([]int, len(o.Fractions))
	for i, f := range o.Fractions {
		c[i] = int(math.Round(f * float64(o.Steps())))
	}
	return c
}

// Validate returns an error naming the setting to change when o cannot run:
// fewer than 3 replicas, a non-positive thinning or exchange interval, or
// budget fractions that do not increase, end by 1 and fall after burn-in.
func (o SweepSettings) Validate() error {
	switch {
	case o.Replicas < 3:
		return fmt.Errorf("tempering-sweep: %d replicas: the adaptive ladder needs at least 3", o.Replicas)
	case o.Thin <= 0 || o.Every <= 0:
		return fmt.Errorf("tempering-sweep: --thin %d and --exchange %d must be positive", o.Thin, o.Every)
	case len(o.Fractions) == 0:
		return fmt.Errorf("tempering-sweep: no budget fractions")
	}
	for i, c := range o.Checkpoints() {
		if c <= o.BurnIn || c > o.Steps() || (i > 0 && c <= o.Checkpoints()[i-1]) {
			return fmt.Errorf("tempering-sweep: budget fraction %v is step %d of %d per replica: the fractions must increase, end by 1 and fall after the burn-in of %d steps (lower --burnin or raise --budget)",
				o.Fractions[i], c, o.Steps(), o.BurnIn)
		}
	}
	return nil
}

// ModeCounts are the kept samples nearest each mode at each checkpoint:
// ModeCounts[c][m] counts mode m at checkpoint c.
type ModeCounts [][]float64

// MaxError returns, at checkpoint c, the largest |weight - true weight| over
// the modes of the samples counted in all of cs (1 with no samples).
func MaxError(b *sampler.MixtureBlock, c int, cs ...ModeCounts) float64 {
	sum := make([]float64, len(b.Mix.Weights))
	n := 0.0
	for _, counts := range cs {
		for m, v := range counts[c] {
			sum[m] += v
			n += v
		}
	}
	if n == 0 {
		return 1
	}
	e := 0.0
	for m, w := range b.Mix.Weights {
		e = math.Max(e, math.Abs(sum[m]/n-w))
	}
	return e
}

// ErrorsAt returns MaxError at every checkpoint.
func ErrorsAt(b *sampler.MixtureBlock, cs ...ModeCounts) []float64 {
	e := make([]float64, len(cs[0]))
	for c := range e {
		e[c] = MaxError(b, c, cs...)
	}
	return e
}

// RunSweepChains runs pt from starts for o.Steps() steps with seed and
// returns, at each checkpoint, rung 1's samples kept after burn-in so far
// (every o.Thin steps) counted by nearest mode, and the final state.
func RunSweepChains(pt *driver.Driver, b *sampler.MixtureBlock, o SweepSettings, starts [][]float64, seed uint64) (ModeCounts, *tempering.PTState, error) {
	out := make(ModeCounts, len(o.Checkpoints()))
	cur := make([]float64, len(b.Mix.Weights))
	m := b.Mix.Dim()
	st, err := runSweep(pt, b, b, o, starts, seed, func(theta []float64) {
		cur[b.Mix.NearestMode(theta[:m])]++
	}, func(c int) {
		out[c] = append([]float64(nil), cur...)
	})
	return out, st, err
}

// runSweep runs pt on pot (every rung) from starts for o.Steps() steps with
// seed, calls keep with rung 1's position every o.Thin steps after burn-in
// and at(c) when checkpoint c is reached, and returns the final state.
func runSweep(pt *driver.Driver, pot sampler.Potential, tp sampler.TermPotential, o SweepSettings, starts [][]float64, seed uint64,
	keep func(theta []float64), at func(c int)) (*tempering.PTState, error) {
	st, err := pt.Init(starts, seed)
	if err != nil {
		return nil, err
	}
	pots := make([]sampler.Potential, len(pt.PT.Temps))
	for i := range pots {
		pots[i] = pot
	}
	cps := o.Checkpoints()
	next := 0
	err = pt.Run(pots, tp, st, o.Steps(), func(s *tempering.PTState) error {
		if s.Steps > o.BurnIn && s.Steps%o.Thin == 0 {
			keep(s.Rungs[0].Theta)
		}
		if next < len(cps) && s.Steps == cps[next] {
			at(next)
			next++
		}
		return nil
	})
	return st, err
}

// SweepCase runs the three methods on the mixture plus a d-dimensional
// Gaussian block with one seed, at equal gradient cost: PT with the
// adapted ladder ("pt"), the same ladder with swaps off ("swaps-off"), and
// R independent chains ("independent"). It returns each method's ErrorsAt
// by name, and PT's final state (its ladder and exchange statistics).
func SweepCase(o SweepSettings, d int, seed uint64) (map[string][]float64, *tempering.PTState, error) {
	b, err := sampler.NewMixtureBlock(o.Target, d)
	if err != nil {
		return nil, nil, err
	}
	// The independent chains start apart: each chain's mixture coordinates
	// uniform over the box of the means widened by 3, the block at 0.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, mu := range b.Mix.Means {
		for _, v := range mu {
			lo, hi = math.Min(lo, v-3), math.Max(hi, v+3)
		}
	}
	errs := map[string][]float64{}
	st, err := threeMethods(o, seed, [][]float64{b.Start()}, func(_ int, rng *rand.Rand) []float64 {
		x := make([]float64, b.Dim())
		for i := 0; i < b.Mix.Dim(); i++ {
			x[i] = lo + (hi-lo)*rng.Float64()
		}
		return x
	}, func(_ string, pt *driver.Driver, starts [][]float64, seed uint64) (any, *tempering.PTState, error) {
		return RunSweepChains(pt, b, o, starts, seed)
	}, func(method string, rs []any) {
		cs := make([]ModeCounts, len(rs))
		for i, r := range rs {
			cs[i] = r.(ModeCounts)
		}
		errs[method] = ErrorsAt(b, cs...)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("block dimension %d: %w", d, err)
	}
	return errs, st, nil
}

// threeMethods runs the sweep's three methods at equal gradient cost with
// one seed, all SGNHT with o's step size and diffusion: (a) "pt", PT on
// o.Replicas rungs with fixed ends 1..o.TMax whose interior is adapted
// during burn-in, exchanges every o.Every steps (corrected Barker test),
// from start; (b) "swaps-off", PT's adapted ladder as an explicit list with
// no exchanges, from start; (c) "independent", o.Replicas chains at T = 1,
// chain k from indep(k, rng). run runs one of them and returns what it
// recorded; score receives each method's records (one, or one per
// independent chain). It returns PT's final state.
func threeMethods(o SweepSettings, seed uint64, start [][]float64, indep func(k int, rng *rand.Rand) []float64,
	run func(method string, pt *driver.Driver, starts [][]float64, seed uint64) (any, *tempering.PTState, error),
	score func(method string, rs []any)) (*tempering.PTState, error) {
	kernel := sampler.SGNHT{StepSize: o.StepSize, Diffusion: o.Diffusion}
	temps, err := tempering.GeometricLadder(o.Replicas, o.TMax)
	if err != nil {
		return nil, err
	}
	corr, err := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	if err != nil {
		return nil, err
	}
	chains := func(temps []float64, every int, x tempering.ExchangeTest, rec []tempering.Recorder, phases ...driver.Phase) *driver.Driver {
		return &driver.Driver{Kernel: kernel, Schedule: driver.Fixed(kernel, o.StepSize, 1), Workers: 1, BurnIn: o.BurnIn,
			PT: &tempering.PT{Temps: temps, Every: every, Exchange: x, Record: rec}, Phases: driver.Watched(phases...)}
	}
	pt := chains(temps, o.Every, &tempering.Exchanger{Batch: 16, Correction: corr},
		[]tempering.Recorder{tempering.RoundTripRecorder{}}, // the row's round trips
		&driver.LadderTuning{Adapt: &tempering.LadderAdaptation{}})
	r, st, err := run("pt", pt, start, seed)
	if err != nil {
		return nil, fmt.Errorf("pt, seed %d: %w", seed, err)
	}
	score("pt", []any{r})
	off := chains(append([]float64(nil), st.Temps...), 0, nil, nil)
	if r, _, err = run("swaps-off", off, start, seed); err != nil {
		return nil, fmt.Errorf("swaps off, seed %d: %w", seed, err)
	}
	score("swaps-off", []any{r})
	rng := sampler.NewStream(seed, 1<<20).Rand
	one := chains([]float64{1}, 0, nil, nil)
	var pool []any
	for k := 0; k < o.Replicas; k++ {
		if r, _, err = run("independent", one, [][]float64{indep(k, rng)}, seed*1000+uint64(k)+1); err != nil {
			return nil, fmt.Errorf("independent chain %d, seed %d: %w", k+1, seed, err)
		}
		pool = append(pool, r)
	}
	score("independent", pool)
	return st, nil
}
