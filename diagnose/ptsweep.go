package diagnose

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptsghmc/ptsghmc/tempering"
)

// PTSweep is the equal-cost comparison that tells where parallel tempering
// earns its cost (docs/tempering.md; `make tempering-sweep` writes it): on
// a multimodal mixture extended by a Gaussian block of growing dimension,
// the mode-weight error of PT's rung 1 against those of the same ladder
// with swaps off and of independent chains, all at the same number of
// gradient evaluations, with the barrier Lambda that PT measured.
type PTSweep struct {
	Command   string       `json:"command"`   // the command that wrote it
	Target    string       `json:"target"`    // the mixture in the first coordinates, or tinybnn (no block: Dim 0)
	Budget    int          `json:"budget"`    // gradient evaluations per method and seed
	Replicas  int          `json:"replicas"`  // PT's rungs, and the independent chains
	TMax      float64      `json:"tmax"`      // PT's fixed top temperature
	BurnIn    int          `json:"burnin"`    // steps per replica discarded (PT tunes its ladder there)
	Fractions []float64    `json:"fractions"` // the budget fractions at which errors are recorded
	Rows      []PTSweepRow `json:"rows"`
}

// PTSweepRow is one dimension of a PTSweep: per seed, PT's barrier after
// burn-in and each method's largest mode-weight error.
type PTSweepRow struct {
	Dim   int      `json:"dim"` // dimension of the Gaussian block
	Seeds []uint64 `json:"seeds"`
	// Lambda is the barrier PT measured after burn-in (the sum of the
	// pairs' Metropolis-equivalent rejections, as a run's tempering
	// section reports it; at most Replicas - 1); LambdaTuned the last
	// stationary tuning round's, whose saturated pairs are measured by
	// their mean deltaE (it goes on growing with the dimension).
	Lambda      []float64 `json:"lambda"`
	LambdaTuned []float64 `json:"lambda_tuned"`
	// Error[method][seed][f] is the largest |weight - true weight| over the
	// mixture's modes of the samples drawn by fraction Fractions[f] of the
	// budget; methods are "pt", "swaps-off" and "independent".
	Error      map[string][][]float64 `json:"error"`
	Ladder     [][]float64            `json:"ladder"`      // PT's adapted ladder per seed
	RoundTrips []int                  `json:"round_trips"` // PT's after burn-in, per seed
}

// Methods of a PTSweep, in table order.
var PTSweepMethods = []string{"pt", "swaps-off", "independent"}

// Final returns method's error at the full budget for each seed.
func (r PTSweepRow) Final(method string) []float64 {
	var e []float64
	for _, s := range r.Error[method] {
		if len(s) > 0 {
			e = append(e, s[len(s)-1])
		}
	}
	return e
}

// PairRejection returns the mean per-pair rejection Lambda/(R-1) of the
// row's seeds: the barrier per pair of the ladder, which saturates at 1
// when swaps stop.
func (r PTSweepRow) PairRejection(replicas int) float64 {
	return Median(r.Lambda) / float64(max(replicas-1, 1))
}

// PTWins reports whether PT's median error at the full budget is below
// both the swaps-off ablation's and the independent chains'.
func (r PTSweepRow) PTWins() bool {
	pt := Median(r.Final("pt"))
	return pt < Median(r.Final("swaps-off")) && pt < Median(r.Final("independent"))
}

// Median returns the median of x (NaN when empty).
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

//go:embed tempering_sweep.json
var ptSweepJSON []byte

// MeasuredPTSweep returns the sweep recorded in docs/tempering.md (embedded
// from diagnose/tempering_sweep.json, which `make tempering-sweep` writes).
func MeasuredPTSweep() (*PTSweep, error) {
	return decodeSweep("tempering_sweep.json", ptSweepJSON)
}

//go:embed tempering_bnn.json
var bnnSweepJSON []byte

// MeasuredBNNSweep returns the small Bayesian network's row of
// docs/tempering.md (`tempering-sweep --target tinybnn`; embedded from
// diagnose/tempering_bnn.json, which `make tempering-sweep` writes and
// copies to docs/tempering-bnn.json): its Error is the largest
// posterior-predictive-mean error, not a mode weight.
func MeasuredBNNSweep() (*PTSweep, error) {
	return decodeSweep("tempering_bnn.json", bnnSweepJSON)
}

// decodeSweep decodes an embedded sweep (name is its file, for errors) and
// checks that it records a comparison.
func decodeSweep(name string, b []byte) (*PTSweep, error) {
	var s PTSweep
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(s.Rows) == 0 || s.Replicas < 2 {
		return nil, fmt.Errorf("%s: %d rows, %d replicas: no comparison recorded", name, len(s.Rows), s.Replicas)
	}
	return &s, nil
}

// NetworkNote quotes the small Bayesian network's row (s, from
// MeasuredBNNSweep) for a run whose ladder fits PT: a network with two
// non-equivalent modes and a small barrier, where PT's gain over
// independent chains is set by rung 1's share of the gradients, so that
// rungs beyond about 2 Lambda cost more than they bring. lambda and r are
// the run's barrier and rungs; when r exceeds the rungs 2 Lambda asks for
// by more than one, the note says so.
func (s *PTSweep) NetworkNote(lambda float64, r int) string {
	row := s.Rows[0]
	var b strings.Builder
	fmt.Fprintf(&b, "On the small Bayesian network of docs/tempering.md (%s: two non-equivalent modes, Lambda %.3g on %d rungs, %.2f per pair) PT's posterior-predictive error was %.2f against %.2f with swaps off and %.2f for %d independent chains of the same cost (%s gradient evaluations, median over %d seeds): a small barrier, so PT's gain is set by rung 1's share of the gradients.",
		s.Target, Median(row.Lambda), s.Replicas, row.PairRejection(s.Replicas), Median(row.Final("pt")), Median(row.Final("swaps-off")),
		Median(row.Final("independent")), s.Replicas, thousands(s.Budget), len(row.Seeds))
	if need := tempering.RecommendedRungs(lambda); r > need+1 {
		fmt.Fprintf(&b, " This run has %d rungs where 2 Lambda = %d would do: fewer rungs give rung 1 more steps for the same cost.", r, need)
	}
	return b.String()
}

// PTVerdict says, from a run's measured barrier lambda on a ladder of r
// rungs and the equal-cost sweep s, whether PT is the right tool for the
// target. It compares the run's rejection per pair, lambda/(r-1), with the
// sweep's rows: at or below the largest at which PT beat both the
// swaps-off ablation and the independent chains, PT fits (ok); at or above
// the midpoint between that and the smallest at which it did not, it does
// not, and the text says what to run instead; in between the run is
// borderline (ok, with both rows quoted). top is the ladder's top
// temperature: the sweep's ladders reached TMax, hot enough that their top
// rung crossed between the modes, and a verdict for a cooler top says that
// PT pays only if its top does too.
func (s *PTSweep) PTVerdict(lambda float64, r int, top float64) (ok bool, text string) {
	rho := lambda / float64(max(r-1, 1))
	winMax, loseMin := -1.0, math.Inf(1)
	var win, lose *PTSweepRow
	for i := range s.Rows {
		row := &s.Rows[i]
		q := row.PairRejection(s.Replicas)
		if row.PTWins() {
			if q > winMax {
				winMax, win = q, row
			}
		} else if q < loseMin {
			loseMin, lose = q, row
		}
	}
	cut := loseMin
	if win != nil && lose != nil && winMax < loseMin {
		cut = (winMax + loseMin) / 2
	}
	at := func(row *PTSweepRow) string {
		return fmt.Sprintf("Lambda %.3g on %d rungs (block dimension %d)", Median(row.Lambda), s.Replicas, row.Dim)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Lambda %.3g on %d rungs is %.2f rejection per pair. In the equal-cost sweep of docs/tempering.md (%s plus a Gaussian block, %s gradient evaluations per method, median over %d seeds) ",
		lambda, r, rho, s.Target, thousands(s.Budget), len(s.Rows[0].Seeds))
	switch {
	case lose != nil && rho >= cut:
		fmt.Fprintf(&b, "PT stopped paying from about %.2f per pair: at %s its swaps no longer carried what the hot rungs found down to rung 1, which stayed in its start mode (mode-weight error %.2f; %.2f with swaps off), while %d independent chains of the same cost, started apart, were off by %.2f. PT is not the right tool here: run independent chains of equal cost instead (--sampler sgnht --chains %d, started apart), or lower the barrier (a lower top temperature, fewer tempered dimensions) before adding rungs (2 Lambda = %d rungs, each costing a gradient per step).",
			cut, at(lose), Median(lose.Final("pt")), Median(lose.Final("swaps-off")), s.Replicas, Median(lose.Final("independent")), r, tempering.RecommendedRungs(lambda))
		return false, b.String()
	case win != nil && rho <= winMax:
		fmt.Fprintf(&b, "PT beat its swaps-off ablation and %d independent chains up to %.2f per pair (at %s: mode-weight error %.2f against %.2f and %.2f). PT is the right tool here",
			s.Replicas, winMax, at(win), Median(win.Final("pt")), Median(win.Final("swaps-off")), Median(win.Final("independent")))
		if top < s.TMax/2 {
			fmt.Fprintf(&b, " if the top rung moves between modes that rung 1 cannot: the sweep's ladders reached T = %.3g, this one T = %.4g", s.TMax, top)
		}
		b.WriteString(".")
		return true, b.String()
	case win != nil:
		fmt.Fprintf(&b, "this lies between PT's last win (%.2f per pair, at %s: error %.2f against %.2f with independent chains) and the point where it stops paying (about %.2f): PT may still pay; compare with independent chains of equal cost (--sampler sgnht --chains %d).",
			winMax, at(win), Median(win.Final("pt")), Median(win.Final("independent")), cut, r)
		return true, b.String()
	}
	fmt.Fprintf(&b, "PT won in no row below %.2f per pair: compare with independent chains of equal cost (--sampler sgnht --chains %d).", loseMin, r)
	return true, b.String()
}

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
