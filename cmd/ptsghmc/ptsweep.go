package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// sweepSettings are the settings shared by every case of a tempering sweep.
type sweepSettings struct {
	target                         string
	budget, replicas, burnin, thin int
	every                          int
	tmax, h, diffusion             float64
	fractions                      []float64
}

// steps returns the steps per replica (or chain) that the budget pays for.
func (o sweepSettings) steps() int { return o.budget / o.replicas }

// checkpoints returns the step at which each budget fraction is spent.
func (o sweepSettings) checkpoints() []int {
	c := make([]int, len(o.fractions))
	for i, f := range o.fractions {
		c[i] = int(math.Round(f * float64(o.steps())))
	}
	return c
}

func (o sweepSettings) validate() error {
	switch {
	case o.replicas < 3:
		return fmt.Errorf("tempering-sweep: %d replicas: the adaptive ladder needs at least 3", o.replicas)
	case o.thin <= 0 || o.every <= 0:
		return fmt.Errorf("tempering-sweep: --thin %d and --exchange %d must be positive", o.thin, o.every)
	case len(o.fractions) == 0:
		return fmt.Errorf("tempering-sweep: no budget fractions")
	}
	for i, c := range o.checkpoints() {
		if c <= o.burnin || c > o.steps() || (i > 0 && c <= o.checkpoints()[i-1]) {
			return fmt.Errorf("tempering-sweep: budget fraction %v is step %d of %d per replica: the fractions must increase, end by 1 and fall after the burn-in of %d steps (lower --burnin or raise --budget)",
				o.fractions[i], c, o.steps(), o.burnin)
		}
	}
	return nil
}

// modeCounts are the kept samples nearest each mode at each checkpoint.
type modeCounts [][]float64

// maxError returns, at checkpoint c, the largest |weight - true weight| over
// the modes of the samples counted in all of cs (1 with no samples).
func maxError(b *sampler.MixtureBlock, c int, cs ...modeCounts) float64 {
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

// errorsAt returns maxError at every checkpoint.
func errorsAt(b *sampler.MixtureBlock, cs ...modeCounts) []float64 {
	e := make([]float64, len(cs[0]))
	for c := range e {
		e[c] = maxError(b, c, cs...)
	}
	return e
}

// runSweepChains runs pt from starts for o.steps() steps with seed and
// returns, at each checkpoint, rung 1's samples kept after burn-in so far
// (every o.thin steps) counted by nearest mode, and the final state.
func runSweepChains(pt *tempering.PT, b *sampler.MixtureBlock, o sweepSettings, starts [][]float64, seed uint64) (modeCounts, *tempering.PTState, error) {
	st, err := pt.Init(starts, seed)
	if err != nil {
		return nil, nil, err
	}
	pots := make([]sampler.Potential, len(pt.Temps))
	for i := range pots {
		pots[i] = b
	}
	cps := o.checkpoints()
	out := make(modeCounts, len(cps))
	cur := make([]float64, len(b.Mix.Weights))
	next := 0
	m := b.Mix.Dim()
	err = pt.Run(pots, b, st, o.steps(), func(s *tempering.PTState) error {
		if s.Steps > o.burnin && s.Steps%o.thin == 0 {
			cur[b.Mix.NearestMode(s.Rungs[0].Theta[:m])]++
		}
		if next < len(cps) && s.Steps == cps[next] {
			out[next] = append([]float64(nil), cur...)
			next++
		}
		return nil
	})
	return out, st, err
}

// sweepCase runs the three methods on the mixture plus a d-dimensional
// Gaussian block with one seed, at equal gradient cost: PT with the
// adapted ladder, the same ladder with swaps off, and R independent chains.
func sweepCase(o sweepSettings, d int, seed uint64) (map[string][]float64, *tempering.PTState, error) {
	b, err := sampler.NewMixtureBlock(o.target, d)
	if err != nil {
		return nil, nil, err
	}
	kernel := sampler.SGNHT{StepSize: o.h, Diffusion: o.diffusion}
	errs := map[string][]float64{}
	// (a) PT: the ladder adapted during burn-in with fixed ends 1..tmax.
	temps, err := tempering.GeometricLadder(o.replicas, o.tmax)
	if err != nil {
		return nil, nil, err
	}
	corr, err := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	if err != nil {
		return nil, nil, err
	}
	pt := &tempering.PT{Kernel: kernel, Temps: temps, Every: o.every, Workers: 1, BurnIn: o.burnin,
		Exchange: &tempering.Exchanger{Batch: 16, Correction: corr}, Adapt: &tempering.LadderAdaptation{}}
	c, st, err := runSweepChains(pt, b, o, [][]float64{b.Start()}, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("pt, block dimension %d, seed %d: %w", d, seed, err)
	}
	errs["pt"] = errorsAt(b, c)
	// (b) the adapted ladder as an explicit list, exchanges off.
	off := &tempering.PT{Kernel: kernel, Temps: append([]float64(nil), st.Temps...), Workers: 1, BurnIn: o.burnin}
	if c, _, err = runSweepChains(off, b, o, [][]float64{b.Start()}, seed); err != nil {
		return nil, nil, fmt.Errorf("swaps off, block dimension %d, seed %d: %w", d, seed, err)
	}
	errs["swaps-off"] = errorsAt(b, c)
	// (c) R independent chains at T = 1, started apart: each chain's
	// mixture coordinates uniform over the box of the means widened by 3,
	// the block at 0; their samples pooled.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, mu := range b.Mix.Means {
		for _, v := range mu {
			lo, hi = math.Min(lo, v-3), math.Max(hi, v+3)
		}
	}
	rng := sampler.NewStream(seed, 1<<20).Rand
	one := &tempering.PT{Kernel: kernel, Temps: []float64{1}, Workers: 1, BurnIn: o.burnin}
	var pool []modeCounts
	for k := 0; k < o.replicas; k++ {
		x := make([]float64, b.Dim())
		for i := 0; i < b.Mix.Dim(); i++ {
			x[i] = lo + (hi-lo)*rng.Float64()
		}
		if c, _, err = runSweepChains(one, b, o, [][]float64{x}, seed*1000+uint64(k)+1); err != nil {
			return nil, nil, fmt.Errorf("independent chain %d, block dimension %d, seed %d: %w", k+1, d, seed, err)
		}
		pool = append(pool, c)
	}
	errs["independent"] = errorsAt(b, pool...)
	return errs, st, nil
}

// parseList parses a comma-separated list with parse.
func parseList[T any](s, what string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", what, f, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func runTemperingSweep(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tempering-sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o sweepSettings
	fs.StringVar(&o.target, "target", "gauss1d4", "the mixture in the first coordinates: gauss1d4 or gauss2d5")
	dims := fs.String("dims", "10,100,1000,10000", "dimensions of the Gaussian block, comma-separated")
	seeds := fs.String("seeds", "1,2,3", "seeds, comma-separated")
	fs.IntVar(&o.budget, "budget", 500000, "gradient evaluations per method and seed (PT: replicas x steps)")
	fs.IntVar(&o.replicas, "replicas", 10, "PT rungs, and the number of independent chains")
	fs.Float64Var(&o.tmax, "tmax", 10, "PT's top temperature (the ends stay fixed; the interior is adapted)")
	fs.IntVar(&o.burnin, "burnin", 10000, "steps per replica discarded (PT tunes its ladder there)")
	fs.IntVar(&o.thin, "thin", 5, "keep every this many steps")
	fs.IntVar(&o.every, "exchange", 2, "steps between PT's exchange rounds")
	fs.Float64Var(&o.h, "h", 0.2, "SGNHT step size")
	fs.Float64Var(&o.diffusion, "diffusion", 1, "SGNHT diffusion A")
	fracs := fs.String("fractions", "0.25,0.5,1", "budget fractions at which the errors are recorded")
	jsonOut := fs.String("json", "", "write the sweep as JSON here (diagnose/tempering_sweep.json is the one the advice quotes)")
	plotPath := fs.String("plot", "", "write a PNG: each method's error against the block dimension, and PT's Lambda")
	from := fs.String("from", "", "run nothing: print the table (and --plot) of a sweep saved with --json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: ptsghmc tempering-sweep [--dims 10,100] [--seeds 1,2,3] [--budget N] [--json out.json] [--plot out.png]

Where PT earns its cost: the paper's mixture (noisy energies and gradients,
noise variance 0.25) in the first coordinates plus a d-dimensional standard
Gaussian block with the same gradient noise. For each d and seed, at the same
number of gradient evaluations: (a) PT-SGHMC, its ladder (fixed ends 1..tmax)
adapted during burn-in, from the lowest-weight mode as in the paper; (b) the
same adapted ladder with exchanges off, same start; (c) as many independent
SGNHT chains at T = 1 as PT has rungs, started uniformly over the modes' box,
samples pooled. Prints a markdown table of the largest mode-weight error
(median and range over seeds) with PT's measured barrier Lambda.

flags:`)
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *from != "" {
		b, err := os.ReadFile(*from)
		if err != nil {
			return err
		}
		var sw diagnose.PTSweep
		if err := json.Unmarshal(b, &sw); err != nil {
			return fmt.Errorf("read %s: %w", *from, err)
		}
		if err := writeSweepTable(stdout, &sw); err != nil {
			return err
		}
		if *plotPath != "" {
			return plotSweep(*plotPath, &sw)
		}
		return nil
	}
	ds, err := parseList(*dims, "block dimension", strconv.Atoi)
	if err != nil {
		return err
	}
	ss, err := parseList(*seeds, "seed", func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) })
	if err != nil {
		return err
	}
	if o.fractions, err = parseList(*fracs, "budget fraction", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	sw := &diagnose.PTSweep{Command: "ptsghmc tempering-sweep " + strings.Join(args, " "), Target: o.target, Budget: o.budget,
		Replicas: o.replicas, TMax: o.tmax, BurnIn: o.burnin, Fractions: o.fractions}
	for _, d := range ds {
		row := diagnose.PTSweepRow{Dim: d, Seeds: ss, Error: map[string][][]float64{}}
		for _, seed := range ss {
			errs, st, err := sweepCase(o, d, seed)
			if err != nil {
				return err
			}
			lambda := 0.0
			for p := range st.Stats.WinProposed {
				lambda += st.Stats.WindowRejection(p)
			}
			tuned, _ := st.TunedBarrier()
			row.Lambda = append(row.Lambda, lambda)
			row.LambdaTuned = append(row.LambdaTuned, tuned)
			row.Ladder = append(row.Ladder, append([]float64(nil), st.Temps...))
			row.RoundTrips = append(row.RoundTrips, st.Stats.WinRoundTrips)
			for _, m := range diagnose.PTSweepMethods {
				row.Error[m] = append(row.Error[m], errs[m])
			}
			fmt.Fprintf(stderr, "d %d seed %d: Lambda %.3g (tuned %.3g), round trips %d; error PT %.3f, swaps off %.3f, independent %.3f\n",
				d, seed, lambda, tuned, st.Stats.WinRoundTrips, errs["pt"][len(o.fractions)-1], errs["swaps-off"][len(o.fractions)-1], errs["independent"][len(o.fractions)-1])
		}
		sw.Rows = append(sw.Rows, row)
	}
	if err := writeSweepTable(stdout, sw); err != nil {
		return err
	}
	if *jsonOut != "" {
		f, err := os.Create(*jsonOut)
		if err != nil {
			return err
		}
		if err := writeJSON(f, sw); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", *jsonOut, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", *jsonOut, err)
		}
	}
	if *plotPath != "" {
		return plotSweep(*plotPath, sw)
	}
	return nil
}

// spread formats values as "median (min-max)".
func spread(x []float64, prec int) string {
	if len(x) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)", prec, diagnose.Median(x), prec, slices.Min(x), prec, slices.Max(x))
}

// writeSweepTable prints the sweep as markdown: per block dimension, PT's
// barrier and each method's error at the full budget, then the medians at
// each budget fraction.
func writeSweepTable(w io.Writer, sw *diagnose.PTSweep) error {
	fmt.Fprintf(w, "%s + d-dimensional Gaussian block; %d gradient evaluations per method and seed (%d steps x %d replicas, burn-in %d); median (min-max) over seeds\n\n",
		sw.Target, sw.Budget, sw.Budget/sw.Replicas, sw.Replicas, sw.BurnIn)
	fmt.Fprintln(w, "| d | seeds | Lambda after burn-in | Lambda tuned | round trips | PT (adapted ladder) | same ladder, swaps off | independent chains | best |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range sw.Rows {
		trips := make([]float64, len(r.RoundTrips))
		for i, t := range r.RoundTrips {
			trips[i] = float64(t)
		}
		best, bestErr := "", math.Inf(1)
		for _, m := range diagnose.PTSweepMethods {
			if e := diagnose.Median(r.Final(m)); e < bestErr {
				best, bestErr = m, e
			}
		}
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", r.Dim, len(r.Seeds), spread(r.Lambda, 2), spread(r.LambdaTuned, 1),
			spread(trips, 0), spread(r.Final("pt"), 3), spread(r.Final("swaps-off"), 3), spread(r.Final("independent"), 3), best)
	}
	fmt.Fprintf(w, "\nmedian error against gradient evaluations\n\n| d | method |")
	for _, f := range sw.Fractions {
		fmt.Fprintf(w, " %d |", int(math.Round(f*float64(sw.Budget))))
	}
	fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---|", len(sw.Fractions)))
	for _, r := range sw.Rows {
		for _, m := range diagnose.PTSweepMethods {
			fmt.Fprintf(w, "| %d | %s |", r.Dim, m)
			for f := range sw.Fractions {
				var e []float64
				for _, s := range r.Error[m] {
					e = append(e, s[f])
				}
				fmt.Fprintf(w, " %.3f |", diagnose.Median(e))
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// plotSweep draws each method's median error at the full budget against
// log10 of the block dimension, and PT's measured Lambda beside it.
func plotSweep(path string, sw *diagnose.PTSweep) error {
	left := plot.New()
	left.Title.Text = fmt.Sprintf("%s + Gaussian block, %d gradient evaluations", sw.Target, sw.Budget)
	left.X.Label.Text = "log10 block dimension"
	left.Y.Label.Text = "largest mode-weight error (median over seeds)"
	for i, m := range diagnose.PTSweepMethods {
		xy := make(plotter.XYs, len(sw.Rows))
		for j, r := range sw.Rows {
			xy[j] = plotter.XY{X: math.Log10(float64(r.Dim)), Y: diagnose.Median(r.Final(m))}
		}
		if err := addLine(left, m, xy, i); err != nil {
			return err
		}
	}
	right := plot.New()
	right.Title.Text = fmt.Sprintf("PT's barrier, %d rungs T = 1..%g", sw.Replicas, sw.TMax)
	right.X.Label.Text = "log10 block dimension"
	right.Y.Label.Text = "Lambda"
	for i, which := range []string{"after burn-in", "tuned (desaturated)"} {
		xy := make(plotter.XYs, len(sw.Rows))
		for j, r := range sw.Rows {
			v := r.Lambda
			if i == 1 {
				v = r.LambdaTuned
			}
			xy[j] = plotter.XY{X: math.Log10(float64(r.Dim)), Y: diagnose.Median(v)}
		}
		if err := addLine(right, which, xy, i); err != nil {
			return err
		}
	}
	return saveRow(path, left, right)
}
