package driver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestRunUntil checks the one loop: the schedule asked before every step
// and the recorder called after it, in order, a stop at the target step, a
// cancelled context leaving the state between steps, and the recorder's
// error ending the loop with its step named.
func TestRunUntil(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name      string
		cancelAt  int // cancel the context after this step (0: never)
		failAfter int // the After hook fails at this step (0: never)
		wantSteps int
		wantErr   string
	}{
		{"to the target", 0, 0, 7, ""},
		{"cancelled", 3, 0, 3, context.Canceled.Error()},
		{"hook fails", 0, 4, 4, "after step 4: boom"},
	}
	for _, c := range cases {
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.1, Diffusion: 1}, Temps: []float64{1}})
		g := sampler.StdGaussian{D: 3}
		st, err := pt.Init([][]float64{{1, 2, 3}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var trace []string
		pt.Schedule = tracedSchedule{pt.Schedule, &trace}
		after := func(s *tempering.PTState) error {
			trace = append(trace, "a")
			if s.Steps == c.cancelAt {
				cancel()
			}
			if s.Steps == c.failAfter {
				return boom
			}
			return nil
		}
		err = pt.RunUntil(ctx, []sampler.Potential{g}, g, st, 7, after)
		cancel()
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
		}
		if st.Steps != c.wantSteps {
			t.Errorf("%s: stopped at step %d, want %d", c.name, st.Steps, c.wantSteps)
		}
		if got, want := strings.Join(trace, ""), strings.Repeat("ba", c.wantSteps); got != want {
			t.Errorf("%s: hooks ran %q, want %q", c.name, got, want)
		}
	}
}

// tracedSchedule is a schedule that notes "b" in a trace each time it is
// asked.
type tracedSchedule struct {
	Schedule
	trace *[]string
}

func (s tracedSchedule) Next(st *tempering.PTState) (Setting, error) {
	*s.trace = append(*s.trace, "b")
	return s.Schedule.Next(st)
}
