package evaluate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// The paired comparison of the ensemble with the baseline: is a difference
// between their figures larger than the test set's own sampling noise? Both
// predictors are scored on the same examples, so a bootstrap resample of
// the examples moves both figures together; the spread of the difference
// over resamples is the noise of the comparison on this many examples.
// It says nothing of the training seeds' noise (another seed is another
// predictor), which only several runs measure.

// PairedReplicates is the number of bootstrap resamples behind each
// interval of Report.Paired.
const PairedReplicates = 1000

// pairedStream is the stream id of the resamples (seeded by
// EvalOptions.Seed).
const pairedStream = 0xB007

// Figures of PairedDiff.Figure.
const (
	FigAccuracy = "accuracy"
	FigNLL      = "nll"
	FigECE      = "ece"
	FigBrier    = "brier"
	FigAUROC    = "auroc" // of one uncertainty score on one out-of-distribution set
)

// PairedDiff is one figure of the ensemble minus the same figure of the
// baseline on the same examples, with the 95% percentile interval of the
// difference over PairedReplicates paired bootstrap resamples: the test
// examples drawn with replacement (and, for an AUROC, the
// out-of-distribution set's too, independently), both predictors scored
// on each draw.
type PairedDiff struct {
	Figure string `json:"figure"`          // FigAccuracy, FigNLL, FigECE, FigBrier or FigAUROC
	Set    string `json:"set,omitempty"`   // FigAUROC: the out-of-distribution set
	Score  string `json:"score,omitempty"` // FigAUROC: the uncertainty score (one of ScoreNames)
	// Diff is the ensemble's figure minus the baseline's on the examples as
	// scored (Report.Ensemble and Report.Baseline, Report.OOD).
	Diff float64 `json:"diff"`
	// Lo and Hi bound the central 95% of the resampled differences.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// HigherIsBetter reports whether a larger value of the figure is the better
// one (accuracy, AUROC), not a smaller one (NLL, ECE, Brier).
func (d PairedDiff) HigherIsBetter() bool { return d.Figure == FigAccuracy || d.Figure == FigAUROC }

// Verdict says which predictor the interval favours: PredEnsemble when it
// lies wholly on the ensemble's better side of 0, PredBaseline when wholly
// on the baseline's, and "" when it holds 0 (no difference shown).
func (d PairedDiff) Verdict() string {
	lo, hi := d.Lo, d.Hi
	if !d.HigherIsBetter() {
		lo, hi = -hi, -lo
	}
	switch {
	case lo > 0:
		return PredEnsemble
	case hi < 0:
		return PredBaseline
	}
	return ""
}

// Name names the figure: "accuracy", "nll", "ece", "brier", or "auroc
// SET, SCORE".
func (d PairedDiff) Name() string {
	if d.Figure == FigAUROC {
		return fmt.Sprintf("auroc %s, %s", d.Set, d.Score)
	}
	return d.Figure
}

// MarshalJSON writes the difference's fields and "favours", Verdict's
// predictor ("ensemble", "baseline", or "" when the interval holds 0), so
// that a reader of eval's JSON need not redo the sign convention.
func (d PairedDiff) MarshalJSON() ([]byte, error) {
	type plain PairedDiff // its fields without this method
	return json.Marshal(struct {
		plain
		Favours string `json:"favours"`
	}{plain(d), d.Verdict()})
}

// Better words Verdict for a table: "ensemble", baseline (the baseline's
// label), or "no difference shown".
func (d PairedDiff) Better(baseline string) string {
	switch d.Verdict() {
	case PredEnsemble:
		return "ensemble"
	case PredBaseline:
		return baseline
	}
	return "no difference shown"
}

// exampleFigures are the per-example terms of Metrics of one predictor on
// labelled examples: whether the most probable class is the label, -log
// p(label), the Brier sum, the confidence and its ECE bin.
type exampleFigures struct {
	correct, nll, brier, conf []float64
	bin                       []int
}

// newExampleFigures computes the terms of probs (n rows of k) against labels,
// each as Score computes it.
func newExampleFigures(probs []float64, labels []int, k int) exampleFigures {
	n := len(labels)
	f := exampleFigures{correct: make([]float64, n), nll: make([]float64, n), brier: make([]float64, n),
		conf: make([]float64, n), bin: make([]int, n)}
	for i, y := range labels {
		p := probs[i*k : (i+1)*k]
		best := autodiff.ArgMax(p)
		if best == y {
			f.correct[i] = 1
		}
		f.nll[i] = -math.Log(math.Max(p[y], probFloor))
		for c, v := range p {
			t := 0.0
			if c == y {
				t = 1
			}
			f.brier[i] += (v - t) * (v - t)
		}
		f.conf[i] = p[best]
		f.bin[i] = confidenceBin(p[best])
	}
	return f
}

// unfloor replaces the NLL term of an example whose label's probability
// is below Score's floor by p's ensemble's (as Ensemble.Metrics does),
// when p has its ensemble.
func (f exampleFigures) unfloor(p predictorScores, labels []int, k int) {
	if p.Ens == nil {
		return
	}
	for i, y := range labels {
		if p.Probs[i*k+y] < probFloor {
			f.nll[i] = p.Ens.exampleNLL(i)
		}
	}
}

// weighted returns accuracy, NLL, ECE and Brier (Score's figures, in
// FigAccuracy, FigNLL, FigECE, FigBrier order) of a resample that holds
// example i w[i] times.
func (f exampleFigures) weighted(w []int32) [4]float64 {
	var acc, nll, brier, total float64
	var gap [ECEBins]float64
	for i, c := range w {
		if c == 0 {
			continue
		}
		x := float64(c)
		acc += x * f.correct[i]
		nll += x * f.nll[i]
		brier += x * f.brier[i]
		gap[f.bin[i]] += x * (f.correct[i] - f.conf[i])
		total += x
	}
	ece := 0.0
	for _, g := range gap {
		ece += math.Abs(g)
	}
	return [4]float64{acc / total, nll / total, ece / total, brier / total}
}

// rankedScores are an uncertainty score's values on the test set (in) and
// an out-of-distribution set (out), sorted once and grouped by ties, so
// that the AUROC of any resample is one pass over them (AUROC's
// Mann-Whitney count with every example weighted by its multiplicity).
type rankedScores struct {
	// item holds, in ascending order of score, i for in[i] and len(in)+j
	// for out[j]: an index into the weights [wIn..., wOut...].
	item []int32
	// ood is 1 where item is an out-of-distribution example, else 0.
	ood []float64
	// tied is set where the score equals the one before (the same run of
	// tied scores).
	tied []bool
}

// newRankedScores sorts in and out together (a stable sort: the order of
// tied scores does not change a count) and marks the runs of ties.
func newRankedScores(in, out []float64) rankedScores {
	n := len(in)
	score := func(it int32) float64 {
		if int(it) < n {
			return in[it]
		}
		return out[int(it)-n]
	}
	r := rankedScores{item: make([]int32, n+len(out)), ood: make([]float64, n+len(out)), tied: make([]bool, n+len(out))}
	for i := range r.item {
		r.item[i] = int32(i)
	}
	sort.SliceStable(r.item, func(a, b int) bool { return score(r.item[a]) < score(r.item[b]) })
	for p, it := range r.item {
		if int(it) >= n {
			r.ood[p] = 1
		}
		r.tied[p] = p > 0 && score(it) == score(r.item[p-1])
	}
	return r
}

// auroc returns the AUROC of the resample whose example item i appears
// w[i] times (w = [wIn..., wOut...], as float64).
func (r rankedScores) auroc(w []float64) float64 {
	var u, inBelow, nIn, nOut, gIn, gOut float64
	for p, it := range r.item {
		if !r.tied[p] { // a new run of tied scores: count the last one
			u += gOut * (inBelow + 0.5*gIn)
			inBelow += gIn
			gIn, gOut = 0, 0
		}
		x, o := w[it], r.ood[p]
		gOut += x * o
		gIn += x - x*o
		nOut += x * o
	}
	u += gOut * (inBelow + 0.5*gIn)
	nIn = inBelow + gIn
	return u / (nIn * nOut)
}

// resample sets w to the multiplicities of len(w) draws with replacement
// from len(w) examples.
func resample(w []int32, rng *rand.Rand) {
	clear(w)
	for range w {
		w[rng.IntN(len(w))]++
	}
}

// percentileInterval returns the 2.5% and 97.5% quantiles of x (sorted in
// place), each interpolated linearly between order statistics.
func percentileInterval(x []float64) (lo, hi float64) {
	slices.Sort(x)
	q := func(p float64) float64 {
		pos := p * float64(len(x)-1)
		i := int(pos)
		if i+1 >= len(x) {
			return x[len(x)-1]
		}
		return x[i] + (pos-float64(i))*(x[i+1]-x[i])
	}
	return q(0.025), q(0.975)
}

// pairedSet is one out-of-distribution set of the paired comparison: its
// name, its size and, per score both predictors have, the two predictors'
// ranked scores against the test set.
type pairedSet struct {
	name       string
	n          int
	scores     []string
	ens, base  []rankedScores
	whole      []float64 // the ensemble's AUROC minus the baseline's on the sets as scored
	replicates [][]float64
	w          []int32   // a resample's multiplicities of the set's images
	both       []float64 // the test set's and the set's multiplicities, as auroc reads them
}

// pairedDiffs compares the ensemble (ens: its probabilities and scores on
// the test set, Others its scores on each out-of-distribution set in the
// order of sets; me its Metrics) with the baseline (base, mb) on labels,
// by PairedReplicates paired bootstrap resamples drawn from a stream
// seeded by seed. It returns nil when there are no labelled examples; a
// score that either predictor lacks, or cannot rank (a NaN: AUROC is NaN),
// has no rows.
func pairedDiffs(ens, base predictorScores, me, mb Metrics, labels []int, k int, sets []string, seed uint64) []PairedDiff {
	if len(labels) == 0 {
		return nil
	}
	fe, fb := newExampleFigures(ens.Probs, labels, k), newExampleFigures(base.Probs, labels, k)
	fe.unfloor(ens, labels, k)
	fb.unfloor(base, labels, k)
	var ps []*pairedSet
	for s, name := range sets {
		p := &pairedSet{name: name}
		for _, sc := range ScoreNames {
			ie, oe, ib, ob := ens.Test.Get(sc), ens.Others[s].Get(sc), base.Test.Get(sc), base.Others[s].Get(sc)
			if ie == nil || oe == nil || ib == nil || ob == nil || !rankable(ie, oe) || !rankable(ib, ob) {
				continue // a score a predictor lacks, or cannot rank (AUROC's NaN)
			}
			p.n = len(oe)
			p.scores = append(p.scores, sc)
			p.ens, p.base = append(p.ens, newRankedScores(ie, oe)), append(p.base, newRankedScores(ib, ob))
			p.replicates = append(p.replicates, make([]float64, 0, PairedReplicates))
		}
		if len(p.scores) > 0 && p.n > 0 {
			p.w = make([]int32, p.n)
			p.both = make([]float64, len(labels)+p.n)
			for i := range p.both { // every example once: the AUROCs as scored
				p.both[i] = 1
			}
			for j := range p.scores {
				p.whole = append(p.whole, p.ens[j].auroc(p.both)-p.base[j].auroc(p.both))
			}
			ps = append(ps, p)
		}
	}
	rng := sampler.NewStream(seed, pairedStream).Rand
	w := make([]int32, len(labels))
	var metric [4][]float64
	for r := 0; r < PairedReplicates; r++ {
		resample(w, rng)
		re, rb := fe.weighted(w), fb.weighted(w)
		for j := range metric {
			metric[j] = append(metric[j], re[j]-rb[j])
		}
		for _, p := range ps {
			resample(p.w, rng)
			for i, c := range w {
				p.both[i] = float64(c)
			}
			for j, c := range p.w {
				p.both[len(w)+j] = float64(c)
			}
			for j := range p.scores {
				p.replicates[j] = append(p.replicates[j], p.ens[j].auroc(p.both)-p.base[j].auroc(p.both))
			}
		}
	}
	whole := [4]float64{me.Accuracy - mb.Accuracy, me.NLL - mb.NLL, me.ECE - mb.ECE, me.Brier - mb.Brier}
	var out []PairedDiff
	for j, fig := range []string{FigAccuracy, FigNLL, FigECE, FigBrier} {
		lo, hi := percentileInterval(metric[j])
		out = append(out, PairedDiff{Figure: fig, Diff: whole[j], Lo: lo, Hi: hi})
	}
	for _, p := range ps {
		for j, sc := range p.scores {
			lo, hi := percentileInterval(p.replicates[j])
			out = append(out, PairedDiff{Figure: FigAUROC, Set: p.name, Score: sc, Diff: p.whole[j], Lo: lo, Hi: hi})
		}
	}
	return out
}
