package evaluate

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ptsghmc/ptsghmc/autodiff"
)

// Uncertainty metrics: how well a predictive distribution's uncertainty
// separates out-of-distribution inputs from the test set (AUROC, AUPR), and
// how its accuracy grows when the most uncertain inputs are refused
// (risk-coverage, AURC). Every score here is "higher is more uncertain".

// Names of the uncertainty scores, as eval's JSON writes them.
const (
	ScoreEntropy    = "entropy"            // predictive entropy H[mean_s p_s]
	ScoreMutualInfo = "mutual_information" // H[mean_s p_s] - mean_s H[p_s]: the epistemic part
	ScoreMaxProb    = "max_prob"           // 1 - max_c mean_s p_s(c)
)

// ScoreNames lists the uncertainty scores in the order eval reports them.
var ScoreNames = []string{ScoreEntropy, ScoreMutualInfo, ScoreMaxProb}

// UncertaintyScores are per-example uncertainty scores of a predictive
// distribution, each higher for a more uncertain prediction.
type UncertaintyScores struct {
	Entropy []float64 // predictive entropy H[p] of the mean probabilities p
	// MutualInfo is H[mean_s p_s] - mean_s H[p_s], the mutual information
	// between the label and the weights; nil for a single network, where it
	// is zero by definition and says nothing.
	MutualInfo []float64
	MaxProb    []float64 // 1 - max_c p(c)
}

// Get returns the score named name (one of ScoreNames), nil when the
// predictor has none (the mutual information of one network).
func (u UncertaintyScores) Get(name string) []float64 {
	switch name {
	case ScoreEntropy:
		return u.Entropy
	case ScoreMutualInfo:
		return u.MutualInfo
	case ScoreMaxProb:
		return u.MaxProb
	}
	return nil
}

// entropyOf returns H[p] = -sum_c p_c log p_c (0 log 0 = 0; NaN when a
// p_c is NaN, a prediction that is not a number, or negative).
func entropyOf(p []float64) float64 {
	h := 0.0
	for _, v := range p {
		if v != 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// ScoresFromSamples computes the three uncertainty scores of n examples from
// per-sample probabilities: samples[s] holds network s's probabilities
// p_s(c | x_i), n rows of k classes, row-major. The predictive distribution
// is p = (1/S) sum_s p_s; the scores are H[p], H[p] - (1/S) sum_s H[p_s] and
// 1 - max_c p(c). With one sample MutualInfo is nil. No samples, k < 1, or
// samples that are not all of n > 0 rows of k are an error naming the
// lengths expected and found.
func ScoresFromSamples(samples [][]float64, k int) (UncertaintyScores, error) {
	if len(samples) == 0 {
		return UncertaintyScores{}, fmt.Errorf("uncertainty scores: no samples")
	}
	if k <= 0 {
		return UncertaintyScores{}, fmt.Errorf("uncertainty scores: %d classes: want at least 1", k)
	}
	if l := len(samples[0]); l == 0 || l%k != 0 {
		return UncertaintyScores{}, fmt.Errorf("uncertainty scores: sample 0 has %d probabilities, want rows of %d classes (a positive multiple of %d)", l, k, k)
	}
	for s, p := range samples[1:] {
		if len(p) != len(samples[0]) {
			return UncertaintyScores{}, fmt.Errorf("uncertainty scores: sample %d has %d probabilities, sample 0 has %d (%d rows of %d classes)", s+1, len(p), len(samples[0]), len(samples[0])/k, k)
		}
	}
	n := len(samples[0]) / k
	mean := make([]float64, n*k)
	meanEnt := make([]float64, n)
	for _, p := range samples {
		for i := 0; i < n; i++ {
			row := p[i*k : (i+1)*k]
			meanEnt[i] += entropyOf(row)
			for c, v := range row {
				mean[i*k+c] += v
			}
		}
	}
	s := float64(len(samples))
	for i := range mean {
		mean[i] /= s
	}
	for i := range meanEnt {
		meanEnt[i] /= s
	}
	if len(samples) == 1 {
		meanEnt = nil
	}
	return scoresOf(mean, meanEnt, k), nil
}

// scoresOf computes the scores from the mean probabilities (n rows of k)
// and the mean over samples of each example's entropy (nil for one network:
// no mutual information).
func scoresOf(mean, meanEnt []float64, k int) UncertaintyScores {
	n := len(mean) / k
	u := UncertaintyScores{Entropy: make([]float64, n), MaxProb: make([]float64, n)}
	if meanEnt != nil {
		u.MutualInfo = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		p := mean[i*k : (i+1)*k]
		h := entropyOf(p)
		u.Entropy[i] = h
		u.MaxProb[i] = 1 - p[autodiff.ArgMax(p)]
		if meanEnt != nil {
			u.MutualInfo[i] = math.Max(0, h-meanEnt[i])
		}
	}
	return u
}

// Scores returns the uncertainty scores of the ensemble's predictive
// distribution on its data; MutualInfo is nil when it holds one sample.
func (e *Ensemble) Scores() UncertaintyScores {
	var meanEnt []float64
	if e.Count > 1 {
		meanEnt = make([]float64, len(e.Ent))
		for i, v := range e.Ent {
			meanEnt[i] = v / float64(e.Count)
		}
	}
	return scoresOf(e.Probs(), meanEnt, e.Data.Classes)
}

// rankable reports whether in and out are both non-empty and hold no NaN:
// what ranking them by score needs (a NaN compares false with everything,
// so a sort would leave it anywhere and an AUROC of NaN scores would read 1).
func rankable(in, out []float64) bool {
	if len(in) == 0 || len(out) == 0 {
		return false
	}
	for _, s := range [][]float64{in, out} {
		for _, v := range s {
			if math.IsNaN(v) {
				return false
			}
		}
	}
	return true
}

// labelledScore is a score with whether it came from the
// out-of-distribution set.
type labelledScore struct {
	v   float64
	ood bool
}

// labelledScores returns the scores of in (ood false) then out (ood true).
func labelledScores(in, out []float64) []labelledScore {
	all := make([]labelledScore, 0, len(in)+len(out))
	for _, v := range in {
		all = append(all, labelledScore{v, false})
	}
	for _, v := range out {
		all = append(all, labelledScore{v, true})
	}
	return all
}

// AUROC returns the area under the ROC curve of a detector that flags
// out-of-distribution inputs by a high score: the probability that an
// out-of-distribution score exceeds an in-distribution one, ties counted
// 1/2 (the Mann-Whitney U statistic over len(in)*len(out)). It is 1 for
// separable sets, 0.5 for a score that does not tell them apart, and NaN
// when either set is empty or holds a NaN score (a prediction that is not a
// number ranks nowhere).
func AUROC(in, out []float64) float64 {
	if !rankable(in, out) {
		return math.NaN()
	}
	once := make([]float64, len(in)+len(out))
	for i := range once {
		once[i] = 1
	}
	return newRankedScores(in, out).auroc(once)
}

// AUPR returns the area under the precision-recall curve of the same
// detector with out-of-distribution inputs as the positive class, as
// average precision: AP = sum over thresholds t (each distinct score, high
// to low) of (R_t - R_{t-1}) P_t, where P_t and R_t are the precision and
// recall of flagging every score >= t (so tied scores enter together). A
// perfect detector has 1; one that cannot tell the sets apart has about
// len(out)/(len(in)+len(out)). NaN when either set is empty or holds a NaN
// score.
func AUPR(in, out []float64) float64 {
	if !rankable(in, out) {
		return math.NaN()
	}
	all := labelledScores(in, out)
	sort.Slice(all, func(a, b int) bool { return all[a].v > all[b].v })
	ap, tp, fp := 0.0, 0, 0
	pos := float64(len(out))
	for i := 0; i < len(all); {
		j := i
		newTP := 0
		for ; j < len(all) && all[j].v == all[i].v; j++ {
			if all[j].ood {
				newTP++
			} else {
				fp++
			}
		}
		tp += newTP
		ap += float64(newTP) / pos * float64(tp) / float64(tp+fp)
		i = j
	}
	return ap
}

// FPRAtTPR returns the false-positive rate of the same detector at the
// threshold that flags a fraction tpr of the out-of-distribution inputs:
// with t the highest score such that at least ceil(tpr*len(out)) of out
// score t or more, the fraction of in that scores t or more (an in-
// distribution score tied with t counts as flagged). FPRAtTPR(in, out, 0.95)
// is the literature's "FPR at 95% TPR": 0 for separable sets, about 0.95
// for a score that cannot tell them apart; lower is better. NaN when
// either set is empty or holds a NaN score, or tpr is outside (0, 1].
func FPRAtTPR(in, out []float64, tpr float64) float64 {
	if !rankable(in, out) || !(tpr > 0 && tpr <= 1) {
		return math.NaN()
	}
	o := append([]float64(nil), out...)
	sort.Sort(sort.Reverse(sort.Float64Slice(o)))
	need := int(math.Ceil(tpr*float64(len(o)) - 1e-9))
	t := o[max(need, 1)-1]
	flagged := 0
	for _, v := range in {
		if v >= t {
			flagged++
		}
	}
	return float64(flagged) / float64(len(in))
}

// RiskCoverage is the risk-coverage curve of selective prediction: the
// predictor answers only the examples it is most certain of (lowest
// uncertainty score first) and refuses the rest. Risk[j-1] is the error rate
// among the j answered examples, j = 1..n, at coverage j/n. Examples of
// equal score are refused together or in a random order, so the curve
// counts their errors at their mean rate: the expected risk over the orders.
type RiskCoverage struct {
	Coverage []float64 // j/n, j = 1..n
	Risk     []float64 // error rate among the j most certain examples
}

// NewRiskCoverage returns the risk-coverage curve of uncertainty scores
// (higher: more uncertain) and whether each prediction is correct
// (equal-length slices; an empty curve otherwise, or when a score is NaN:
// a prediction that is not a number ranks nowhere).
func NewRiskCoverage(uncertainty []float64, correct []bool) RiskCoverage {
	n := len(uncertainty)
	if n == 0 || len(correct) != n || slices.ContainsFunc(uncertainty, math.IsNaN) {
		return RiskCoverage{}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return uncertainty[idx[a]] < uncertainty[idx[b]] })
	rc := RiskCoverage{Coverage: make([]float64, n), Risk: make([]float64, n)}
	errs := 0.0
	for i := 0; i < n; {
		j := i
		groupErr := 0
		for ; j < n && uncertainty[idx[j]] == uncertainty[idx[i]]; j++ {
			if !correct[idx[j]] {
				groupErr++
			}
		}
		rate := float64(groupErr) / float64(j-i)
		for t := i; t < j; t++ {
			cum := errs + rate*float64(t-i+1)
			rc.Coverage[t] = float64(t+1) / float64(n)
			rc.Risk[t] = cum / float64(t+1)
		}
		errs += float64(groupErr)
		i = j
	}
	return rc
}

// AURC returns the area under the risk-coverage curve, (1/n) sum_j Risk_j
// (Geifman et al. 2019): lower is better; a ranking that knows nothing has
// the error rate, a perfect one m/n - ((n-m)/n)(H_n - H_{n-m}) for m errors
// (H the harmonic numbers). NaN for an empty curve.
func (rc RiskCoverage) AURC() float64 {
	if len(rc.Risk) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, r := range rc.Risk {
		s += r
	}
	return s / float64(len(rc.Risk))
}

// AccuracyAt returns the accuracy among the ceil(coverage*n) most certain
// examples (1 - the risk there), for coverage in (0, 1]; NaN outside it or
// for an empty curve.
func (rc RiskCoverage) AccuracyAt(coverage float64) float64 {
	n := len(rc.Risk)
	if n == 0 || !(coverage > 0 && coverage <= 1) {
		return math.NaN()
	}
	j := int(math.Ceil(coverage*float64(n) - 1e-9))
	j = min(max(j, 1), n)
	return 1 - rc.Risk[j-1]
}

// Thin returns at most points points of the curve, evenly spaced in
// coverage and always including the last: what a plot needs of a curve of
// 10,000 examples.
func (rc RiskCoverage) Thin(points int) RiskCoverage {
	n := len(rc.Risk)
	if points <= 0 || n <= points {
		return rc
	}
	var out RiskCoverage
	for p := 1; p <= points; p++ {
		j := p*n/points - 1
		out.Coverage = append(out.Coverage, rc.Coverage[j])
		out.Risk = append(out.Risk, rc.Risk[j])
	}
	return out
}
