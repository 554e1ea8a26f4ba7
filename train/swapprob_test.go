package train

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestResumeWithoutSwapProb resumes runs from checkpoints written before
// swap probabilities were recorded (the sums and ProbSince left out, as gob
// leaves them out of an older checkpoint): the run resumes on the same
// trajectory as an uninterrupted one, its sums start at the 0/1 counts, and
// its report says which part of the window counts outcomes: all of it up to
// the resume when the window began before it, none when burn-in ended after
// it.
func TestResumeWithoutSwapProb(t *testing.T) {
	t.Parallel()
	cfg := smallConfig() // burn-in 40, 120 steps, exchanges every 5
	data := smallData(t)
	r, _ := trainRef(t, cfg, setupOf(data))
	want := append([]float64(nil), r.State().Rungs[0].Theta...)
	if tp := diagnose.TemperingOf(r.State(), cfg); tp == nil || tp.SwapFrom != "probabilities" {
		t.Fatalf("uninterrupted run: %+v", tp)
	}
	r.Close()
	for _, tc := range []struct {
		stop int
		from string
	}{{61, "outcomes before step 61"}, {20, "probabilities"}} {
		t.Run(fmt.Sprint(tc.stop), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "old")
			r, err := New(dir, cfg, true, setupOf(data))
			if err != nil {
				t.Fatal(err)
			}
			interruptAt(t, r, tc.stop)
			c, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			c.Stats.SwapProb, c.Stats.WinSwapProb, c.Stats.ProbSince = nil, nil, 0
			if err := rundir.WriteCheckpoint(dir, c); err != nil {
				t.Fatal(err)
			}
			if r, err = Resume(dir, 0, setupOf(data)); err != nil {
				t.Fatal(err)
			}
			s := r.State().Stats
			if s.ProbSince != tc.stop || len(s.SwapProb) != 2 || s.SwapProb[0] != float64(s.Accepted[0]) {
				t.Fatalf("resumed stats: since %d, sums %v for %v accepted", s.ProbSince, s.SwapProb, s.Accepted)
			}
			if err := r.Train(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i, v := range r.State().Rungs[0].Theta {
				if v != want[i] {
					t.Fatalf("final rung-1 parameter %d: %v, uninterrupted %v", i, v, want[i])
				}
			}
			tp := diagnose.TemperingOf(r.State(), cfg)
			if tp == nil || tp.SwapFrom != tc.from {
				t.Fatalf("swap acceptance from %q, want %q", tp.SwapFrom, tc.from)
			}
			t.Logf("acceptance %.3f (%s), fraction swapped %.3f", tp.SwapAcceptance, tp.SwapFrom, tp.SwapOutcomes)
		})
	}
}
