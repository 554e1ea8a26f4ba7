package predictive

import (
	"fmt"
	"math"
	"slices"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
)

// Abstention is the rule that flags an image for a person: abstain when
// its mutual information exceeds Threshold. FixAbstention sets Threshold
// to the (1 - Rate) quantile of the mutual information on labelled images,
// so that a fraction Rate of those (at most) is refused.
type Abstention struct {
	Score     string  `json:"score"`     // "mutual_information"
	Threshold float64 `json:"threshold"` // abstain when the score is above it
	Rate      float64 `json:"rate"`      // the rate the threshold was fixed at
	// Images are the images it was fixed on, Abstained how many of them
	// it refuses, Source where they came from.
	Images    int    `json:"images"`
	Abstained int    `json:"abstained"`
	Source    string `json:"source"`
	// Method says how Threshold was fixed, in words.
	Method string `json:"method"`
	// Accuracy, NLL, ECE and Brier are the ensemble's figures on those
	// images (evaluate.Score), and AccuracyKept its accuracy on the images
	// it does not refuse.
	Accuracy     float64 `json:"accuracy"`
	NLL          float64 `json:"nll"`
	ECE          float64 `json:"ece"`
	Brier        float64 `json:"brier"`
	AccuracyKept float64 `json:"accuracy_kept"`
}

// ScoreMutualInformation is the score abstention thresholds.
const ScoreMutualInformation = "mutual_information"

// Quantile returns the q quantile of values (q in [0, 1]) by the inverse
// of the empirical distribution function: the smallest value v with at
// least a fraction q of values <= v; NaN when values is empty. values is
// not changed.
func Quantile(values []float64, q float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Clone(values)
	slices.Sort(s)
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// FixAbstention predicts the labelled images of data (labels in the
// model's outputs, as runspec.SelectClasses gives for a run on a subset of
// classes), fixes the abstention rule at rate (0 < rate < 1) from their
// mutual information, and returns it with their predictions, flagged by
// it. source names the images in the rule's description.
func (p *Posterior) FixAbstention(data *datasets.Dataset, rate float64, source string) (*Abstention, []Prediction, error) {
	if !(rate > 0 && rate < 1) {
		return nil, nil, fmt.Errorf("abstention rate %v: want a fraction in (0, 1)", rate)
	}
	if data.Classes != p.Model.Outputs || len(data.Labels) != data.N {
		return nil, nil, fmt.Errorf("abstention: %s: %d labels of %d classes for %d images, the model has %d outputs", source, len(data.Labels), data.Classes, data.N, p.Model.Outputs)
	}
	for i, y := range data.Labels { // before the pass, which evaluate.Score would refuse after
		if y < 0 || y >= data.Classes {
			return nil, nil, fmt.Errorf("abstention: %s: label %d of example %d outside [0, %d)", source, y, i, data.Classes)
		}
	}
	preds, err := p.PredictData(data)
	if err != nil {
		return nil, nil, fmt.Errorf("abstention: %s: %w", source, err)
	}
	k := p.Model.Outputs
	mi := make([]float64, len(preds))
	probs := make([]float64, 0, len(preds)*k)
	for i, pr := range preds {
		mi[i] = pr.MutualInformation
		probs = append(probs, pr.Probabilities...)
	}
	a := &Abstention{Score: ScoreMutualInformation, Threshold: Quantile(mi, 1-rate), Rate: rate, Images: data.N, Source: source}
	m, err := evaluate.Score(probs, data.Labels, k)
	if err != nil {
		return nil, nil, fmt.Errorf("abstention: %s: %w", source, err)
	}
	a.Accuracy, a.NLL, a.ECE, a.Brier = m.Accuracy, m.NLL, m.ECE, m.Brier
	kept, right := 0, 0
	for i := range preds {
		a.apply(&preds[i])
		if preds[i].Abstain {
			a.Abstained++
			continue
		}
		kept++
		if argmax(preds[i].Probabilities) == data.Labels[i] {
			right++
		}
	}
	if kept > 0 {
		a.AccuracyKept = float64(right) / float64(kept)
	}
	a.Method = fmt.Sprintf("abstain when the mutual information exceeds %.6g, its %g quantile (inverse empirical CDF) on %s (%d images, of which %d, %.2f%%, abstain)",
		a.Threshold, 1-rate, source, data.N, a.Abstained, 100*float64(a.Abstained)/float64(data.N))
	p.mu.Lock()
	p.abstain = a
	p.mu.Unlock()
	return a, preds, nil
}

// apply flags a prediction by the rule (a nil rule never abstains).
func (a *Abstention) apply(pr *Prediction) {
	if a == nil {
		pr.Reason = "no abstention rule (abstain rate 0)"
		return
	}
	pr.Abstain = pr.MutualInformation > a.Threshold
	if pr.Abstain {
		pr.Reason = fmt.Sprintf("mutual information %.4g above the threshold %.4g (the %g quantile on %s)", pr.MutualInformation, a.Threshold, 1-a.Rate, a.Source)
	} else {
		pr.Reason = fmt.Sprintf("mutual information %.4g at or below the threshold %.4g", pr.MutualInformation, a.Threshold)
	}
}

// argmax returns the index of p's largest value (the first of ties).
func argmax(p []float64) int {
	best := 0
	for c := range p {
		if p[c] > p[best] {
			best = c
		}
	}
	return best
}
