package evaluate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
)

func TestAUROCKnown(t *testing.T) {
	for _, tc := range []struct {
		name            string
		in, out         []float64
		auroc, auprWant float64
	}{
		// OOD scores all above: a perfect detector.
		{"separable", []float64{0.1, 0.2, 0.3}, []float64{0.5, 0.6}, 1, 1},
		// OOD scores all below: always wrong.
		// AP: 1/3*1/3 + 1/3*2/4 + 1/3*3/5.
		{"reversed", []float64{0.5, 0.6}, []float64{0.1, 0.2, 0.3}, 0, 1.0/9 + 1.0/6 + 1.0/5},
		// Identical sets: every pair ties or cancels.
		{"identical", []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 0.5, math.NaN()},
		// Ties counted by hand: in {1,1,2,3}, out {1,2,2,4}.
		// out=1: 1/2+1/2 = 1; out=2 (twice): 2+1/2 each = 5; out=4: 4. U = 10 of 16.
		// AP: t=4 (tp 1, fp 0) 1/4*1; t=3 no new positive; t=2 (tp 3, fp 2) 2/4*3/5;
		// t=1 (tp 4, fp 4) 1/4*1/2: 0.25+0.3+0.125.
		{"ties", []float64{1, 1, 2, 3}, []float64{1, 2, 2, 4}, 10.0 / 16, 0.675},
		// One constant score: all ties, AUROC 1/2, AP the share of positives.
		{"constant", []float64{7, 7, 7}, []float64{7}, 0.5, 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AUROC(tc.in, tc.out); math.Abs(got-tc.auroc) > 1e-12 {
				t.Errorf("AUROC = %v, want %v", got, tc.auroc)
			}
			if math.IsNaN(tc.auprWant) {
				return
			}
			if got := AUPR(tc.in, tc.out); math.Abs(got-tc.auprWant) > 1e-12 {
				t.Errorf("AUPR = %v, want %v", got, tc.auprWant)
			}
		})
	}
	if !math.IsNaN(AUROC(nil, []float64{1})) || !math.IsNaN(AUPR([]float64{1}, nil)) {
		t.Error("empty set: want NaN")
	}
}

// bruteAUROC counts every pair.
func bruteAUROC(in, out []float64) float64 {
	u := 0.0
	for _, o := range out {
		for _, i := range in {
			switch {
			case o > i:
				u++
			case o == i:
				u += 0.5
			}
		}
	}
	return u / float64(len(in)*len(out))
}

// bruteAP computes average precision by ranking each distinct threshold.
func bruteAP(in, out []float64) float64 {
	seen := map[float64]bool{}
	var ts []float64
	for _, v := range append(append([]float64(nil), in...), out...) {
		if !seen[v] {
			seen[v] = true
			ts = append(ts, v)
		}
	}
	ap, prevR := 0.0, 0.0
	// thresholds high to low
	for len(ts) > 0 {
		hi := 0
		for i, v := range ts {
			if v > ts[hi] {
				hi = i
			}
		}
		th := ts[hi]
		ts = append(ts[:hi], ts[hi+1:]...)
		tp, fp := 0, 0
		for _, o := range out {
			if o >= th {
				tp++
			}
		}
		for _, i := range in {
			if i >= th {
				fp++
			}
		}
		r := float64(tp) / float64(len(out))
		ap += (r - prevR) * float64(tp) / float64(tp+fp)
		prevR = r
	}
	return ap
}

func TestAUROCBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		nIn, nOut := 1+rng.IntN(60), 1+rng.IntN(60)
		grid := float64(1 + rng.IntN(8)) // coarse grids make many ties
		in, out := make([]float64, nIn), make([]float64, nOut)
		for i := range in {
			in[i] = math.Round(rng.NormFloat64() * grid)
		}
		for i := range out {
			out[i] = math.Round((rng.NormFloat64() + 0.5) * grid)
		}
		if got, want := AUROC(in, out), bruteAUROC(in, out); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: AUROC %v, pairwise count %v", trial, got, want)
		}
		if got, want := AUPR(in, out), bruteAP(in, out); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: AUPR %v, brute force %v", trial, got, want)
		}
	}
}

func TestScoresFromSamples(t *testing.T) {
	ln2 := math.Log(2)
	// Two networks, two classes, three examples: disagreeing confident
	// networks (all epistemic), agreeing unsure ones (all aleatoric), and
	// agreeing confident ones.
	s1 := []float64{1, 0, 0.5, 0.5, 0.9, 0.1}
	s2 := []float64{0, 1, 0.5, 0.5, 0.9, 0.1}
	u := mustScoresFromSamples(t, [][]float64{s1, s2}, 2)
	h9 := -(0.9*math.Log(0.9) + 0.1*math.Log(0.1))
	want := UncertaintyScores{
		Entropy:    []float64{ln2, ln2, h9},
		MutualInfo: []float64{ln2, 0, 0},
		MaxProb:    []float64{0.5, 0.5, 0.1},
	}
	for _, name := range ScoreNames {
		g, w := u.Get(name), want.Get(name)
		for i := range w {
			if math.Abs(g[i]-w[i]) > 1e-12 {
				t.Errorf("%s[%d] = %v, want %v", name, i, g[i], w[i])
			}
		}
	}
	if one := mustScoresFromSamples(t, [][]float64{s1}, 2); one.MutualInfo != nil {
		t.Errorf("one network: mutual information %v, want nil", one.MutualInfo)
	}
	// The ensemble's running sums give the same scores.
	e := &Ensemble{Data: &datasets.Dataset{Classes: 2}, Count: 2, Sum: make([]float64, 6), Ent: make([]float64, 3)}
	for _, s := range [][]float64{s1, s2} {
		for i := 0; i < 3; i++ {
			e.Ent[i] += entropyOf(s[2*i : 2*i+2])
		}
		for j, v := range s {
			e.Sum[j] += v
		}
	}
	es := e.Scores()
	for _, name := range ScoreNames {
		g, w := es.Get(name), u.Get(name)
		for i := range w {
			if math.Abs(g[i]-w[i]) > 1e-12 {
				t.Errorf("Ensemble.Scores %s[%d] = %v, from samples %v", name, i, g[i], w[i])
			}
		}
	}
}

func TestRiskCoverage(t *testing.T) {
	rc := NewRiskCoverage([]float64{0.4, 0.1, 0.3, 0.2}, []bool{true, true, false, true})
	// most certain first: 0.1 ok, 0.2 ok, 0.3 wrong, 0.4 ok
	wantRisk := []float64{0, 0, 1.0 / 3, 1.0 / 4}
	for j, w := range wantRisk {
		if math.Abs(rc.Risk[j]-w) > 1e-12 || rc.Coverage[j] != float64(j+1)/4 {
			t.Errorf("point %d: coverage %v risk %v, want %v %v", j, rc.Coverage[j], rc.Risk[j], float64(j+1)/4, w)
		}
	}
	if got, want := rc.AURC(), (1.0/3+1.0/4)/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("AURC %v, want %v", got, want)
	}
	for _, tc := range []struct{ cov, acc float64 }{{0.5, 1}, {0.75, 2.0 / 3}, {0.9, 0.75}, {1, 0.75}} {
		if got := rc.AccuracyAt(tc.cov); math.Abs(got-tc.acc) > 1e-12 {
			t.Errorf("AccuracyAt(%v) = %v, want %v", tc.cov, got, tc.acc)
		}
	}
	if !math.IsNaN(rc.AccuracyAt(0)) || !math.IsNaN(RiskCoverage{}.AURC()) {
		t.Error("coverage 0 or an empty curve: want NaN")
	}
}

func TestAURCClosedForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ n, m int }{{10, 3}, {1000, 120}, {20000, 6000}} {
		t.Run(fmt.Sprint(tc.n, "/", tc.m), func(t *testing.T) {
			correct := make([]bool, tc.n)
			for i := range correct {
				correct[i] = true
			}
			for _, i := range rng.Perm(tc.n)[:tc.m] {
				correct[i] = false
			}
			// A perfect ranking: every error more uncertain than every correct answer.
			perfect := make([]float64, tc.n)
			for i := range perfect {
				perfect[i] = rng.Float64()
				if !correct[i] {
					perfect[i] += 2
				}
			}
			hn, hnm := 0.0, 0.0
			for i := 1; i <= tc.n; i++ {
				hn += 1 / float64(i)
				if i <= tc.n-tc.m {
					hnm += 1 / float64(i)
				}
			}
			r := float64(tc.m) / float64(tc.n)
			want := r - (1-r)*(hn-hnm)
			if got := NewRiskCoverage(perfect, correct).AURC(); math.Abs(got-want) > 1e-12 {
				t.Errorf("perfect ranking: AURC %v, closed form %v", got, want)
			}
			// A score that knows nothing (one value): exactly the error rate.
			flat := make([]float64, tc.n)
			if got := NewRiskCoverage(flat, correct).AURC(); math.Abs(got-r) > 1e-12 {
				t.Errorf("constant score: AURC %v, error rate %v", got, r)
			}
			if tc.n < 20000 {
				return
			}
			// A random ranking: the error rate up to the noise of the first few
			// coverages (their risk has sd sqrt(r(1-r)/j); the mean over n is
			// within about 0.01 of r at n = 20000).
			random := make([]float64, tc.n)
			for i := range random {
				random[i] = rng.Float64()
			}
			if got := NewRiskCoverage(random, correct).AURC(); math.Abs(got-r) > 0.01 {
				t.Errorf("random ranking: AURC %v, error rate %v", got, r)
			}
		})
	}
}

func ExampleAUROC() {
	in := []float64{0.1, 0.2, 0.2, 0.4} // scores of test images
	out := []float64{0.2, 0.5, 0.9}     // scores of out-of-distribution images
	fmt.Printf("AUROC %.4f AUPR %.4f\n", AUROC(in, out), AUPR(in, out))
	// Output: AUROC 0.8333 AUPR 0.8333
}

func ExampleRiskCoverage() {
	uncertainty := []float64{0.05, 0.1, 0.7, 0.2, 0.9}
	correct := []bool{true, true, false, true, false}
	rc := NewRiskCoverage(uncertainty, correct)
	fmt.Printf("AURC %.4f, accuracy at 60%% coverage %.2f\n", rc.AURC(), rc.AccuracyAt(0.6))
	// Output: AURC 0.1300, accuracy at 60% coverage 1.00
}

func ExampleScoresFromSamples() {
	// Two networks that disagree with confidence on one image.
	net1 := []float64{0.99, 0.01}
	net2 := []float64{0.01, 0.99}
	u, err := ScoresFromSamples([][]float64{net1, net2}, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("entropy %.3f, mutual information %.3f, 1-max %.2f\n", u.Entropy[0], u.MutualInfo[0], u.MaxProb[0])
	// Output: entropy 0.693, mutual information 0.637, 1-max 0.50
}

func TestFPRAtTPR(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in, out []float64
		tpr     float64
		want    float64
	}{
		{"separable", []float64{0.1, 0.2, 0.3}, []float64{0.5, 0.6}, 0.95, 0},
		{"reversed", []float64{0.5, 0.6}, []float64{0.1, 0.2, 0.3}, 0.95, 1},
		// 20 OOD scores 1..20: 95% of them (19) score 2 or more, so
		// t = 2 and the in-scores {0, 1, 2, 3} flag 2 of 4.
		{"threshold", []float64{0, 1, 2, 3}, seq(1, 20), 0.95, 0.5},
		// At TPR 0.5, t = 11: in-scores 10, 11, 12 flag two.
		{"half", []float64{10, 11, 12}, seq(1, 20), 0.5, 2.0 / 3},
		// An in-score tied with t counts as flagged.
		{"tie", []float64{5, 5, 4}, []float64{5}, 0.95, 2.0 / 3},
		{"constant", []float64{7, 7, 7}, []float64{7, 7}, 0.95, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FPRAtTPR(tc.in, tc.out, tc.tpr); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("FPRAtTPR = %v, want %v", got, tc.want)
			}
		})
	}
	for _, bad := range []float64{0, -1, 1.5, math.NaN()} {
		if !math.IsNaN(FPRAtTPR([]float64{1}, []float64{2}, bad)) {
			t.Errorf("tpr %v: want NaN", bad)
		}
	}
	if !math.IsNaN(FPRAtTPR(nil, []float64{1}, 0.95)) || !math.IsNaN(FPRAtTPR([]float64{1}, nil, 0.95)) {
		t.Error("empty set: want NaN")
	}
}

// seq returns a, a+1, ..., b.
func seq(a, b int) []float64 {
	var s []float64
	for i := a; i <= b; i++ {
		s = append(s, float64(i))
	}
	return s
}

// bruteFPR scans every score as a threshold: the highest whose true-positive
// rate reaches tpr, and the false-positive rate there.
func bruteFPR(in, out []float64, tpr float64) float64 {
	best, fpr := math.Inf(-1), math.NaN()
	for _, t := range append(append([]float64(nil), in...), out...) {
		tp, fp := 0, 0
		for _, o := range out {
			if o >= t {
				tp++
			}
		}
		for _, i := range in {
			if i >= t {
				fp++
			}
		}
		if float64(tp) >= tpr*float64(len(out))-1e-9 && t > best {
			best, fpr = t, float64(fp)/float64(len(in))
		}
	}
	return fpr
}

func TestFPRAtTPRBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 50; trial++ {
		nIn, nOut := 1+rng.IntN(80), 1+rng.IntN(80)
		grid := float64(1 + rng.IntN(8))
		in, out := make([]float64, nIn), make([]float64, nOut)
		for i := range in {
			in[i] = math.Round(rng.NormFloat64() * grid)
		}
		for i := range out {
			out[i] = math.Round((rng.NormFloat64() + 1) * grid)
		}
		for _, tpr := range []float64{0.95, 0.8, 0.5, 1} {
			if got, want := FPRAtTPR(in, out, tpr), bruteFPR(in, out, tpr); got != want {
				t.Errorf("trial %d tpr %v: FPRAtTPR %v, brute force %v", trial, tpr, got, want)
			}
		}
	}
}

func ExampleFPRAtTPR() {
	in := []float64{0.1, 0.2, 0.3, 0.6} // scores of test images
	out := []float64{0.5, 0.7, 0.9}     // scores of out-of-distribution images
	fmt.Printf("FPR at 95%% TPR %.2f\n", FPRAtTPR(in, out, 0.95))
	// Output: FPR at 95% TPR 0.25
}

// TestRankingRefusesNaN checks AUROC, AUPR and FPRAtTPR give NaN, not a
// figure, when a score is NaN (a diverged prediction): a sort leaves NaNs
// anywhere, and every score NaN read as a perfect detector.
func TestRankingRefusesNaN(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name    string
		in, out []float64
	}{
		{"every score", []float64{nan, nan, nan}, []float64{nan, nan}},
		{"one test score", []float64{0.1, nan, 0.3}, []float64{0.5, 0.6}},
		{"one OOD score", []float64{0.1, 0.2, 0.3}, []float64{nan, 0.6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, got := range map[string]float64{"AUROC": AUROC(tc.in, tc.out), "AUPR": AUPR(tc.in, tc.out), "FPRAtTPR": FPRAtTPR(tc.in, tc.out, 0.95)} {
				if !math.IsNaN(got) {
					t.Errorf("%s = %v, want NaN", name, got)
				}
			}
		})
	}
}

// TestRiskCoverageRefusesNaN checks that a NaN uncertainty score (a
// diverged prediction) gives an empty curve, whose AURC and accuracies are
// NaN, at once: a NaN's run of ties never ended (NaN != NaN), so the
// curve's loop never moved on.
func TestRiskCoverageRefusesNaN(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		u    []float64
	}{
		{"one score", []float64{0.1, nan, 0.3}},
		{"every score", []float64{nan, nan}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan RiskCoverage, 1)
			go func() { done <- NewRiskCoverage(tc.u, make([]bool, len(tc.u))) }()
			select {
			case rc := <-done:
				if len(rc.Risk) != 0 || !math.IsNaN(rc.AURC()) || !math.IsNaN(rc.AccuracyAt(0.9)) {
					t.Errorf("curve %v, AURC %v, accuracy at 90%% %v; want an empty curve, NaN", rc.Risk, rc.AURC(), rc.AccuracyAt(0.9))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("NewRiskCoverage did not return in 5 s")
			}
		})
	}
}

// TestScoresPropagateNaN checks that a prediction that is not a number (a
// diverged sample's logits, NaN probabilities) has NaN scores, which the
// OOD and selective tables refuse, not an entropy of 0: the entropy sums
// skipped NaN terms (NaN > 0 is false), so the diverged example read as
// the most certain one, and its set's AUROC as a figure.
func TestScoresPropagateNaN(t *testing.T) {
	nan := math.NaN()
	s1 := []float64{0.9, 0.1, nan, nan}
	s2 := []float64{0.8, 0.2, nan, nan}
	from := mustScoresFromSamples(t, [][]float64{s1, s2}, 2)
	e := &Ensemble{Data: &datasets.Dataset{N: 2, Classes: 2, Labels: []int{0, 1}}, Sum: make([]float64, 4), Ent: make([]float64, 2),
		Last: make([]float64, 4), LastLogLik: make([]float64, 2), LogLik: make([]float64, 2)}
	for _, z := range [][]float64{{2, 0, nan, 1}, {1, 0, 1, nan}} {
		e.accumulate(0, z[:2])
		e.accumulate(1, z[2:])
		e.Count++
	}
	for pred, u := range map[string]UncertaintyScores{"ScoresFromSamples": from, "Ensemble.Scores": e.Scores()} {
		for _, name := range ScoreNames {
			s := u.Get(name)
			if math.IsNaN(s[0]) || !math.IsNaN(s[1]) {
				t.Errorf("%s %s = %v, want a figure then NaN", pred, name, s)
			}
			if a := AUROC([]float64{0.1, 0.2}, s); !math.IsNaN(a) {
				t.Errorf("%s %s: AUROC %v of an OOD set with a NaN prediction, want NaN", pred, name, a)
			}
		}
	}
	if h, mi := e.Uncertainty(1); !math.IsNaN(h) || !math.IsNaN(mi) {
		t.Errorf("Ensemble.Uncertainty: entropy %v, mutual information %v, want NaN", h, mi)
	}
}
