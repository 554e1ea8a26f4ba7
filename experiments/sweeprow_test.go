package experiments

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestSweepRow checks that a sweep row holds, per seed, what SweepCase
// measured (the errors, PT's ladder, barrier and round trips), reports
// each case as it ends, and passes a diverged chain's error on.
func TestSweepRow(t *testing.T) {
	t.Parallel()
	o := SweepSettings{Target: "gauss1d4", Budget: 8000, Replicas: 4, BurnIn: 200, Thin: 5, Every: 2,
		TMax: 10, StepSize: 0.2, Diffusion: 1, Fractions: []float64{0.5, 1}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var seen []SweepCaseResult
	row, err := SweepRow(o, 3, []uint64{1, 2}, nil, nil, func(c SweepCaseResult) { seen = append(seen, c) })
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Seed != 1 || seen[1].Seed != 2 || row.Dim != 3 || !reflect.DeepEqual(row.Seeds, []uint64{1, 2}) {
		t.Fatalf("cases %+v, row dim %d seeds %v", seen, row.Dim, row.Seeds)
	}
	for i, seed := range []uint64{1, 2} {
		errs, st, err := SweepCase(o, 3, seed)
		if err != nil {
			t.Fatal(err)
		}
		lambda := 0.0
		for p := range st.Stats.WinProposed {
			lambda += st.Stats.WindowRejection(p)
		}
		tuned, _ := st.TunedBarrier()
		for _, m := range []string{"pt", "swaps-off", "independent"} {
			if !reflect.DeepEqual(row.Error[m][i], errs[m]) {
				t.Errorf("seed %d, %s: errors %v, SweepCase's %v", seed, m, row.Error[m][i], errs[m])
			}
		}
		if row.Lambda[i] != lambda || row.LambdaTuned[i] != tuned || row.RoundTrips[i] != st.Stats.WinRoundTrips ||
			!reflect.DeepEqual(row.Ladder[i], st.Temps) || seen[i].Lambda != lambda {
			t.Errorf("seed %d: Lambda %v (tuned %v), %d round trips, ladder %v; SweepCase's %v (%v), %d, %v",
				seed, row.Lambda[i], row.LambdaTuned[i], row.RoundTrips[i], row.Ladder[i], lambda, tuned, st.Stats.WinRoundTrips, st.Temps)
		}
	}
	o.StepSize = 50 // the chains blow up
	if _, err := SweepRow(o, 3, []uint64{1}, nil, nil, nil); !errors.Is(err, sampler.ErrDiverged) {
		t.Errorf("step 50: %v, want sampler.ErrDiverged", err)
	}
}
