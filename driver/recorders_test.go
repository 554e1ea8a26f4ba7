package driver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// eventCounter is a Recorder that counts the events PT reports to it.
type eventCounter struct {
	steps, swaps, rounds int
	windows              []int
}

func (c *eventCounter) Start(*tempering.PTStats, int)                          {}
func (c *eventCounter) Check(*tempering.PTStats, int) error                    { return nil }
func (c *eventCounter) Step(*tempering.PTStats, *tempering.PTState, []float64) { c.steps++ }
func (c *eventCounter) Swap(*tempering.PTStats, tempering.SwapAttempt)         { c.swaps++ }
func (c *eventCounter) Round(*tempering.PTStats, []int)                        { c.rounds++ }
func (c *eventCounter) Window(_ *tempering.PTStats, step int)                  { c.windows = append(c.windows, step) }

// recordedRun runs 3-rung PT-SGHMC on gauss1d4 for steps steps (burn-in 60)
// with the recorders rec attached.
func recordedRun(t *testing.T, steps int, rec []tempering.Recorder) *tempering.PTState {
	t.Helper()
	m := sampler.Gauss1D4()
	c, err := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: []float64{1, 2, 4}, Every: 2, Workers: 1, BurnIn: 60,
		Exchange: &tempering.Exchanger{Batch: 16, Correction: c}, Record: rec})
	st, err := pt.Init([][]float64{m.Start()}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := pt.Run([]sampler.Potential{m, m, m}, m, st, steps, nil); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRecordersOnlyObserve checks that recorders change nothing of a run but
// their own figures: a run with the standard recorders and one with none
// end in the same rungs, streams, walkers, window and health, the
// recorders' figures empty without them. With them the figures agree with
// the run: every attempt counted (the window's, since it restarts at
// burn-in, is a part of the run's), swaps no more than attempts, the
// energy sums over every step and round trips no more than the window's
// plus those before it. An attached custom recorder sees every step,
// attempt, round and window restart.
func TestRecordersOnlyObserve(t *testing.T) {
	const steps = 400
	counter := &eventCounter{}
	with := recordedRun(t, steps, append(tempering.StandardRecorders(), counter))
	without := recordedRun(t, steps, nil)
	sameChains(t, with, without, "with recorders attached")
	ws, os := with.Stats, without.Stats
	if !reflect.DeepEqual(ws.Walker, os.Walker) || !reflect.DeepEqual(ws.WinProposed, os.WinProposed) || !reflect.DeepEqual(ws.WinReject, os.WinReject) ||
		!reflect.DeepEqual(ws.WinSwapProb, os.WinSwapProb) || ws.WinStart != os.WinStart || !reflect.DeepEqual(ws.Health, os.Health) {
		t.Errorf("the sampler's own statistics differ with recorders attached:\n%+v\n%+v", ws, os)
	}
	if os.Proposed != nil || os.Accepted != nil || os.SwapProb != nil || os.LastEnd != nil || os.XiSum != nil || os.Count != 0 || os.RoundTrips != 0 {
		t.Errorf("recorders' figures without recorders: %+v", os)
	}
	tries := 0
	for p := range ws.Proposed {
		tries += ws.Proposed[p]
		if ws.Proposed[p] < ws.WinProposed[p] || ws.Accepted[p] > ws.Proposed[p] || ws.Proposed[p] == 0 ||
			ws.SwapProb[p] < 0 || ws.SwapProb[p] > float64(ws.Proposed[p]) {
			t.Errorf("pair %d: %d attempts (window %d), %d swaps, probability sum %v", p, ws.Proposed[p], ws.WinProposed[p], ws.Accepted[p], ws.SwapProb[p])
		}
	}
	if ws.Count != steps || len(ws.XiSum) != 3 || ws.RoundTrips < ws.WinRoundTrips || ws.RoundTrips == 0 {
		t.Errorf("count %d (want %d), xi sums %v, round trips %d (window %d)", ws.Count, steps, ws.XiSum, ws.RoundTrips, ws.WinRoundTrips)
	}
	if counter.steps != steps || counter.swaps != tries || counter.rounds != with.Rounds || !reflect.DeepEqual(counter.windows, []int{60}) {
		t.Errorf("custom recorder saw %d steps, %d attempts, %d rounds, windows at %v; want %d, %d, %d, [60]",
			counter.steps, counter.swaps, counter.rounds, counter.windows, steps, tries, with.Rounds)
	}
}

// TestRecorderCheck checks that a restored state must hold the figures of
// every attached recorder, and that a state without them is accepted by a
// PT that attaches none.
func TestRecorderCheck(t *testing.T) {
	st := recordedRun(t, 10, nil)
	for _, tc := range []struct {
		rec  tempering.Recorder
		want string
	}{
		{tempering.SwapRecorder{}, "swap counts"},
		{tempering.RoundTripRecorder{}, "round trips"},
		{tempering.EnergyRecorder{}, "energy sums"},
	} {
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: []float64{1, 2, 4}, Record: []tempering.Recorder{tc.rec}})
		if err := pt.Check(st, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T: %v, want an error about %s", tc.rec, err, tc.want)
		}
		pt.PT.Record = nil
		if err := pt.Check(st, 1); err != nil {
			t.Errorf("no recorders: %v", err)
		}
	}
}
