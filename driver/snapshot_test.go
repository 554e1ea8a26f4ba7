package driver

import (
	"reflect"
	"testing"

	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestSnapshotUpgrade applies Upgrade to snapshots of each older version
// (each lacking what a version added) and checks the one fix each gets,
// and that a current snapshot is left as it is.
func TestSnapshotUpgrade(t *testing.T) {
	ladder := []float64{1, 1.5, 2}
	current := func() tempering.Snapshot {
		return tempering.Snapshot{Steps: 40, Rungs: make([]tempering.RungSnapshot, 3), Temps: []float64{1, 1.4, 2.1},
			Stats: tempering.PTStats{Proposed: []int{4, 6}, Accepted: []int{1, 3}, WinProposed: []int{2, 3}, WinAccepted: []int{1, 2}, WinReject: []float64{0.5, 0.2},
				SwapProb: []float64{1.5, 2.5}, WinSwapProb: []float64{0.7, 1.6}, ProbSince: 0, Health: make([]health.Health, 3)},
			Tuning: tempering.TuningState{NextRound: 64, Exponent: 3, Rounds: make([]tempering.TuningRound, 2)}}
	}
	for _, tc := range []struct {
		name  string
		older func(s *tempering.Snapshot) // what the older version lacked
		check func(t *testing.T, s tempering.Snapshot)
	}{
		{"current", func(*tempering.Snapshot) {}, func(t *testing.T, s tempering.Snapshot) {
			if want := current(); !reflect.DeepEqual(s, want) {
				t.Errorf("changed: %+v, want %+v", s, want)
			}
		}},
		{"before the ladder was state", func(s *tempering.Snapshot) { s.Temps = nil }, func(t *testing.T, s tempering.Snapshot) {
			if !reflect.DeepEqual(s.Temps, ladder) {
				t.Errorf("ladder %v, want the configured %v", s.Temps, ladder)
			}
		}},
		{"before window statistics (and swap probabilities)", func(s *tempering.Snapshot) {
			s.Stats.WinProposed, s.Stats.WinAccepted, s.Stats.WinReject, s.Stats.SwapProb, s.Stats.WinSwapProb = nil, nil, nil, nil, nil
		}, func(t *testing.T, s tempering.Snapshot) {
			if !reflect.DeepEqual(s.Stats.WinProposed, []int{0, 0}) || len(s.Stats.WinAccepted) != 2 || len(s.Stats.WinReject) != 2 || !reflect.DeepEqual(s.Stats.WinSwapProb, []float64{0, 0}) {
				t.Errorf("windows %v %v %v %v, want 2 empty pairs", s.Stats.WinProposed, s.Stats.WinAccepted, s.Stats.WinReject, s.Stats.WinSwapProb)
			}
		}},
		{"before swap probabilities", func(s *tempering.Snapshot) { s.Stats.SwapProb, s.Stats.WinSwapProb = nil, nil }, func(t *testing.T, s tempering.Snapshot) {
			if !reflect.DeepEqual(s.Stats.SwapProb, []float64{1, 3}) || !reflect.DeepEqual(s.Stats.WinSwapProb, []float64{1, 2}) || s.Stats.ProbSince != 40 {
				t.Errorf("sums %v %v since %d, want the counts [1 3] [1 2] since 40", s.Stats.SwapProb, s.Stats.WinSwapProb, s.Stats.ProbSince)
			}
		}},
		{"before health watching", func(s *tempering.Snapshot) { s.Stats.Health = nil }, func(t *testing.T, s tempering.Snapshot) {
			if len(s.Stats.Health) != 3 {
				t.Errorf("%d health watches, want 3", len(s.Stats.Health))
			}
		}},
		{"before the tuning guards", func(s *tempering.Snapshot) { s.Tuning.Exponent = 0 }, func(t *testing.T, s tempering.Snapshot) {
			if s.Tuning.Exponent != 3 {
				t.Errorf("exponent %d, want 3 (the third round)", s.Tuning.Exponent)
			}
		}},
		{"tuning over", func(s *tempering.Snapshot) { s.Tuning.Exponent, s.Tuning.NextRound = 0, 0 }, func(t *testing.T, s tempering.Snapshot) {
			if s.Tuning.Exponent != 0 {
				t.Errorf("exponent %d of a finished tuning, want it left 0", s.Tuning.Exponent)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := current()
			tc.older(&s)
			s.Upgrade(ladder)
			tc.check(t, s)
			// an upgraded snapshot is current: upgrading again changes nothing
			again := s
			again.Stats.Health = append([]health.Health(nil), s.Stats.Health...)
			again.Upgrade([]float64{9, 9, 9})
			if !reflect.DeepEqual(again, s) {
				t.Errorf("a second Upgrade changed the snapshot")
			}
		})
	}
}

// TestSnapshotRestore takes a PT run's snapshot halfway, restores it and
// checks the rest of the run is the same bit for bit as without the break,
// exchanges, statistics and health included.
func TestSnapshotRestore(t *testing.T) {
	m, err := sampler.Target("gauss1d4")
	if err != nil {
		t.Fatal(err)
	}
	pots := []sampler.Potential{m, m, m}
	c, err := tempering.NewCorrection(1, tempering.CorrectionOptions{Method: "nnls"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(breakAt int) *tempering.PTState {
		pt := testDriver(testPT{Record: tempering.StandardRecorders(), Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: []float64{1, 1.5, 2.2}, Every: 3, Workers: 1,
			Exchange: &tempering.Exchanger{Batch: 16, Correction: c}})
		st, err := pt.Init([][]float64{m.Start()}, 11)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 60; i++ {
			if i == breakAt {
				snap, err := st.Snapshot(pt.Kernel)
				if err != nil {
					t.Fatal(err)
				}
				if st, err = pt.Restore(snap, 1); err != nil {
					t.Fatal(err)
				}
			}
			if err := pt.Step(pots, m, st); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	want, got := run(-1), run(25)
	for j := range want.Rungs {
		if !reflect.DeepEqual(got.Rungs[j].Theta, want.Rungs[j].Theta) || got.Rungs[j].Xi != want.Rungs[j].Xi {
			t.Errorf("rung %d: theta %v xi %v, uninterrupted %v %v", j, got.Rungs[j].Theta, got.Rungs[j].Xi, want.Rungs[j].Theta, want.Rungs[j].Xi)
		}
	}
	if !reflect.DeepEqual(got.Stats.Proposed, want.Stats.Proposed) || !reflect.DeepEqual(got.Stats.SwapProb, want.Stats.SwapProb) {
		t.Errorf("exchanges %v %v, uninterrupted %v %v", got.Stats.Proposed, got.Stats.SwapProb, want.Stats.Proposed, want.Stats.SwapProb)
	}
}
