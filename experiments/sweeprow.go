package experiments

import (
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// SweepCaseResult is what one case of a sweep row (one seed) measured:
// PT's barrier after burn-in and at its last stationary tuning round, its
// round trips after burn-in and each method's errors at the budget's
// fractions.
type SweepCaseResult struct {
	Dim         int
	Seed        uint64
	Lambda      float64
	LambdaTuned float64
	RoundTrips  int
	Ladder      []float64            // PT's adapted ladder
	Errors      map[string][]float64 // per method (diagnose.PTSweepMethods), at each budget fraction
}

// SweepRow runs the cases of block dimension d of the sweep o, one per
// seed (of the tiny network bnn, with its quadrature reference ref, when
// bnn is not nil; d is then 0), and returns their row; done, when not nil,
// is called after each case with what it measured. A diverged chain's
// error wraps sampler.ErrDiverged.
func SweepRow(o SweepSettings, d int, seeds []uint64, bnn *TinyBNN, ref *BNNReference, done func(SweepCaseResult)) (diagnose.PTSweepRow, error) {
	row := diagnose.PTSweepRow{Dim: d, Seeds: seeds, Error: map[string][][]float64{}}
	for _, seed := range seeds {
		c, err := sweepCase(o, d, seed, bnn, ref)
		if err != nil {
			return row, err
		}
		row.Lambda = append(row.Lambda, c.Lambda)
		row.LambdaTuned = append(row.LambdaTuned, c.LambdaTuned)
		row.Ladder = append(row.Ladder, c.Ladder)
		row.RoundTrips = append(row.RoundTrips, c.RoundTrips)
		for _, m := range diagnose.PTSweepMethods {
			row.Error[m] = append(row.Error[m], c.Errors[m])
		}
		if done != nil {
			done(c)
		}
	}
	return row, nil
}

// sweepCase runs one case of SweepRow and returns what it measured.
func sweepCase(o SweepSettings, d int, seed uint64, bnn *TinyBNN, ref *BNNReference) (SweepCaseResult, error) {
	c := SweepCaseResult{Dim: d, Seed: seed}
	var st *tempering.PTState
	var err error
	if bnn != nil {
		c.Errors, st, err = BNNSweepCase(o, bnn, ref, seed)
	} else {
		c.Errors, st, err = SweepCase(o, d, seed)
	}
	if err != nil {
		return c, err
	}
	for p := range st.Stats.WinProposed {
		c.Lambda += st.Stats.WindowRejection(p)
	}
	c.LambdaTuned, _ = st.TunedBarrier()
	c.RoundTrips = st.Stats.WinRoundTrips
	c.Ladder = append([]float64(nil), st.Temps...)
	return c, nil
}
