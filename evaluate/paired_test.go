package evaluate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randomProbs returns n rows of k probabilities (a softmax of Gaussian
// logits of scale s) and labels drawn from them, so that the rows are
// calibrated for their labels.
func randomProbs(rng *rand.Rand, n, k int, s float64) (probs []float64, labels []int) {
	probs = make([]float64, n*k)
	labels = make([]int, n)
	for i := range n {
		row := probs[i*k : (i+1)*k]
		sum := 0.0
		for c := range row {
			row[c] = math.Exp(s * rng.NormFloat64())
			sum += row[c]
		}
		u, cum := rng.Float64(), 0.0
		labels[i] = k - 1
		for c := range row {
			row[c] /= sum
			cum += row[c]
			if u < cum {
				labels[i] = c
				u = math.Inf(1) // drawn
			}
		}
	}
	return probs, labels
}

// TestWeightedIsScoreOfTheResample checks the resample's figures against
// Score of the data set that holds each example as many times.
func TestWeightedIsScoreOfTheResample(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, k = 300, 5
	probs, labels := randomProbs(rng, n, k, 2)
	f := newExampleFigures(probs, labels, k)
	for _, tc := range []struct {
		name string
		w    func(i int) int32
	}{
		{"each once", func(int) int32 { return 1 }},
		{"a resample", nil},
		{"every third, twice", func(i int) int32 { return int32(2 * (1 - min(i%3, 1))) }},
	} {
		w := make([]int32, n)
		if tc.w == nil {
			resample(w, rng)
		} else {
			for i := range w {
				w[i] = tc.w(i)
			}
		}
		var ep []float64
		var el []int
		for i, c := range w {
			for range c {
				ep = append(ep, probs[i*k:(i+1)*k]...)
				el = append(el, labels[i])
			}
		}
		want, got := mustScore(t, ep, el, k), f.weighted(w)
		for j, v := range []float64{want.Accuracy, want.NLL, want.ECE, want.Brier} {
			if math.Abs(got[j]-v) > 1e-12 {
				t.Errorf("%s: figure %d = %.15g, Score of the expanded set %.15g", tc.name, j, got[j], v)
			}
		}
	}
}

// TestWeightedAUROC checks the resample's AUROC, with ties, against AUROC
// of the expanded sets.
func TestWeightedAUROC(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name    string
		n, m    int
		levels  int // scores rounded to this many values (ties)
		shiftBy float64
	}{
		{"continuous", 200, 150, 0, 0.5},
		{"heavy ties", 200, 150, 4, 0.5},
		{"separable", 50, 60, 0, 10},
	} {
		draw := func(n int, mu float64) []float64 {
			x := make([]float64, n)
			for i := range x {
				x[i] = mu + rng.NormFloat64()
				if tc.levels > 0 {
					x[i] = math.Round(x[i] * float64(tc.levels) / 3)
				}
			}
			return x
		}
		in, out := draw(tc.n, 0), draw(tc.m, tc.shiftBy)
		r := newRankedScores(in, out)
		wi, wo := make([]int32, tc.n), make([]int32, tc.m)
		resample(wi, rng)
		resample(wo, rng)
		expand := func(x []float64, w []int32) (e []float64) {
			for i, c := range w {
				for range c {
					e = append(e, x[i])
				}
			}
			return e
		}
		both := make([]float64, 0, tc.n+tc.m)
		for _, c := range append(append([]int32(nil), wi...), wo...) {
			both = append(both, float64(c))
		}
		if got, want := r.auroc(both), AUROC(expand(in, wi), expand(out, wo)); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: resample's AUROC %.15g, AUROC of the expanded sets %.15g", tc.name, got, want)
		}
	}
}

// pairedOf returns pairedDiffs of two predictors' probabilities on labels,
// with no out-of-distribution set.
func pairedOf(a, b []float64, labels []int, k int, seed uint64) []PairedDiff {
	pa := predictorScores{Name: PredEnsemble, Probs: a}
	pb := predictorScores{Name: PredBaseline, Probs: b}
	return pairedDiffs(pa, pb, score(a, labels, k), score(b, labels, k), labels, k, nil, seed)
}

// TestPairedDiffs checks the paired comparison's verdicts: a predictor
// against itself shows no difference; against a slightly blurred copy of
// itself (2% of the uniform distribution mixed in, a small NLL cost on
// every example: 0.0035 of NLL) the pairing detects the blur, which the
// spread of either figure alone (a standard error of 0.024 on these 2,000
// examples) would hide; an informed
// predictor beats an uninformed one on every figure but ECE (both
// calibrated).
func TestPairedDiffs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, k = 2000, 10
	probs, labels := randomProbs(rng, n, k, 2)
	blurred := make([]float64, len(probs))
	flat := make([]float64, len(probs))
	for i, p := range probs {
		blurred[i] = 0.98*p + 0.02/k
		flat[i] = 1.0 / k
	}
	verdicts := func(d []PairedDiff) map[string]string {
		v := map[string]string{}
		for _, x := range d {
			if x.Lo > x.Diff || x.Diff > x.Hi {
				t.Errorf("%s: the figure's difference %.5f outside its interval [%.5f, %.5f]", x.Figure, x.Diff, x.Lo, x.Hi)
			}
			v[x.Figure] = x.Verdict()
		}
		return v
	}
	for _, tc := range []struct {
		name string
		b    []float64
		want map[string]string
	}{
		{"itself", probs, map[string]string{FigAccuracy: "", FigNLL: "", FigECE: "", FigBrier: ""}},
		{"a blurred copy", blurred, map[string]string{FigAccuracy: "", FigNLL: PredEnsemble}},
		{"uniform", flat, map[string]string{FigAccuracy: PredEnsemble, FigNLL: PredEnsemble, FigBrier: PredEnsemble}},
	} {
		d := pairedOf(probs, tc.b, labels, k, 1)
		if len(d) != 4 {
			t.Fatalf("%s: %d figures, want 4", tc.name, len(d))
		}
		got := verdicts(d)
		for fig, want := range tc.want {
			if got[fig] != want {
				t.Errorf("%s: %s verdict %q, want %q (%+v)", tc.name, fig, got[fig], want, d)
			}
		}
	}
	// the same seed, the same intervals
	a, b := pairedOf(probs, blurred, labels, k, 1), pairedOf(probs, blurred, labels, k, 1)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 1 twice: %+v then %+v", a[i], b[i])
		}
	}
}

// TestPairedIntervalCoverage checks that the 95% interval covers the true
// difference about 95% of the time: two predictors of the same expected
// accuracy (0.8 and 0.8, correlated through shared hard examples) on 200
// independent test sets of 400 examples. Intervals of an unpaired
// bootstrap, or a resample that moved only one predictor, would be far too
// wide or too narrow; the bounds allow the binomial noise of 200 sets.
func TestPairedIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const sets, n, k = 200, 400, 2
	covered := 0
	for s := range sets {
		a, b := make([]float64, n*k), make([]float64, n*k)
		labels := make([]int, n)
		for i := range n {
			hard := rng.Float64() < 0.2 // both wrong more often on hard examples
			pa, pb := 0.9, 0.9
			if hard {
				pa, pb = 0.5, 0.5
			}
			ca, cb := rng.Float64() < pa, rng.Float64() < pb
			set := func(p []float64, correct bool) {
				p[0], p[1] = 0.7, 0.3 // label 0 predicted
				if !correct {
					p[0], p[1] = 0.3, 0.7
				}
			}
			set(a[i*k:], ca)
			set(b[i*k:], cb)
		}
		d := pairedOf(a, b, labels, k, uint64(s+1))
		if d[0].Lo <= 0 && 0 <= d[0].Hi {
			covered++
		}
	}
	rate := float64(covered) / sets
	t.Logf("the accuracy difference's interval held the true 0 in %d of %d test sets", covered, sets)
	if rate < 0.9 || rate > 0.99 {
		t.Errorf("coverage %.3f of the 95%% interval: want within [0.90, 0.99]", rate)
	}
}

// BenchmarkPairedDiffs times the paired comparison of eval on Fashion-MNIST's
// scale: 10,000 test examples of 10 classes and four OOD sets of 10,000,
// every score of both predictors (ns/op is one comparison).
func BenchmarkPairedDiffs(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, k, sets = 10000, 10, 4
	pa, labels := randomProbs(rng, n, k, 2)
	pb, _ := randomProbs(rng, n, k, 2)
	scores := func() UncertaintyScores {
		return UncertaintyScores{Entropy: randomScores(rng, n), MutualInfo: randomScores(rng, n), MaxProb: randomScores(rng, n)}
	}
	ea := predictorScores{Probs: pa, Test: scores()}
	eb := predictorScores{Probs: pb, Test: scores()}
	names := make([]string, sets)
	for s := range names {
		names[s] = string(rune('a' + s))
		ea.Others = append(ea.Others, scores())
		eb.Others = append(eb.Others, scores())
	}
	ma, mb := mustScore(b, pa, labels, k), mustScore(b, pb, labels, k)
	b.ResetTimer()
	for range b.N {
		pairedDiffs(ea, eb, ma, mb, labels, k, names, 1)
	}
}

// randomScores returns n uniform scores.
func randomScores(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.Float64()
	}
	return x
}

// ExamplePairedDiff reads two rows of eval's paired comparison: an NLL
// difference whose interval lies below 0 (the ensemble's lower NLL is
// shown) and an ECE difference whose interval holds 0.
func ExamplePairedDiff() {
	for _, d := range []PairedDiff{
		{Figure: FigNLL, Diff: -0.012, Lo: -0.018, Hi: -0.006},
		{Figure: FigECE, Diff: 0.002, Lo: -0.001, Hi: 0.005},
		{Figure: FigAUROC, Set: "inverted", Score: ScoreMutualInfo, Diff: -0.04, Lo: -0.05, Hi: -0.03},
	} {
		fmt.Printf("%s %+.3f [%+.3f, %+.3f]: %s\n", d.Name(), d.Diff, d.Lo, d.Hi, d.Better("sgd deep ensemble"))
	}
	// Output:
	// nll -0.012 [-0.018, -0.006]: ensemble
	// ece +0.002 [-0.001, +0.005]: no difference shown
	// auroc inverted, mutual_information -0.040 [-0.050, -0.030]: sgd deep ensemble
}

// TestPairedDiffJSON checks eval's paired rows carry which predictor their
// interval favours, each way and neither, and read back to the same row.
func TestPairedDiffJSON(t *testing.T) {
	for _, tc := range []struct {
		d    PairedDiff
		want string
	}{
		{PairedDiff{Figure: FigNLL, Diff: -0.012, Lo: -0.018, Hi: -0.006}, `{"figure":"nll","diff":-0.012,"lo":-0.018,"hi":-0.006,"favours":"ensemble"}`},
		{PairedDiff{Figure: FigAUROC, Set: "inverted", Score: ScoreMutualInfo, Diff: -0.04, Lo: -0.05, Hi: -0.03}, `{"figure":"auroc","set":"inverted","score":"mutual_information","diff":-0.04,"lo":-0.05,"hi":-0.03,"favours":"baseline"}`},
		{PairedDiff{Figure: FigECE, Diff: 0.002, Lo: -0.001, Hi: 0.005}, `{"figure":"ece","diff":0.002,"lo":-0.001,"hi":0.005,"favours":""}`},
	} {
		b, err := json.Marshal(tc.d)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.d.Name(), b, err, tc.want)
		}
		var back PairedDiff
		if err := json.Unmarshal(b, &back); err != nil || back != tc.d {
			t.Errorf("%s read back as %+v, %v", tc.d.Name(), back, err)
		}
	}
}
