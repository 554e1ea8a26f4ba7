package progress

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/evaluate"
)

// TestEvalLines checks eval's progress lines off a terminal: the samples
// scored of the estimate and an ETA, "?" for a total not estimated or
// passed, and the closing line.
func TestEvalLines(t *testing.T) {
	for _, tc := range []struct {
		name        string
		done, total int
		want        string
	}{
		{"estimated", 2, 4, "eval: sample 2.0/4  "},
		{"no estimate", 2, 0, "eval: sample 2.0/?  "},
		{"more than estimated", 5, 4, "eval: sample 5.0/?  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock := &testClock{}
			p := newEval(&buf, false, false, clock.now)
			clock.t = clock.t.Add(10 * time.Second)
			p.Update(evaluate.EvalProgress{Done: tc.done, Total: tc.total, Images: 100, MACs: 1000})
			out := buf.String()
			if !strings.HasPrefix(out, tc.want) || !strings.Contains(out, "images/s") || !strings.Contains(out, "GFLOP/s") {
				t.Errorf("line %q, want it to start %q with the rates", out, tc.want)
			}
			if tc.total >= tc.done && !strings.Contains(out, "eta 10s") {
				t.Errorf("line %q: want eta 10s (2 samples left at 0.2/s)", out)
			}
			buf.Reset()
			p.Finish()
			if want := fmt.Sprintf("eval: %d samples scored on 100 images each in ", tc.done); !strings.HasPrefix(buf.String(), want) {
				t.Errorf("closing line %q, want it to start %q", buf.String(), want)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe to write from a spinner's ticker
// while a test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestEvalBar checks the terminal bar: with no estimate it is a spinner
// that still shows progress (a bar of 0 samples refused every update and
// printed nothing), stays a spinner past its width's count of samples (it
// turned into a bar ending at the 31st), and its ticker stops on Abort
// (it went on drawing over the error); a count past the estimate raises a
// bar's end. The output is read after Finish or Abort, which draw at
// once: read while the ticker draws, it ended a sample behind.
func TestEvalBar(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples int
	}{{"few", 3}, {"past the spinner's width", 40}} {
		t.Run(tc.name, func(t *testing.T) {
			var buf lockedBuffer
			p := newEval(&buf, false, true, time.Now)
			for done := 0; done <= tc.samples; done++ {
				p.Update(evaluate.EvalProgress{Done: done, Images: 10})
			}
			p.Finish()
			out := buf.String()
			if want := fmt.Sprintf("(%d/-", tc.samples); !strings.Contains(out, want) {
				t.Errorf("no-estimate bar printed %q, want the count %s", out, want)
			}
		})
	}

	var buf lockedBuffer
	p := newEval(&buf, false, true, time.Now)
	p.Update(evaluate.EvalProgress{Done: 0, Images: 10, PassImages: 5})
	p.Abort()
	after := buf.String()
	time.Sleep(500 * time.Millisecond) // the ticker draws every 100-200 ms
	if got := buf.String(); got != after {
		t.Errorf("the spinner drew %q after Abort", strings.TrimPrefix(got, after))
	}

	var qbuf lockedBuffer
	q := newEval(&qbuf, false, true, time.Now)
	q.Update(evaluate.EvalProgress{Done: 1, Total: 2, Images: 10})
	q.Update(evaluate.EvalProgress{Done: 3, Total: 2, Images: 10})
	if m := q.bar.GetMax(); m != 3 {
		t.Errorf("bar's end %d after 3 of an estimated 2 samples, want 3", m)
	}
}

// testClock is a clock a test moves.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time { return c.t }

// TestEvalPhaseRates checks that the rate and ETA are those of the phase
// under way: after five run samples of 1 s each, a baseline sample of 10 s
// leaves one more baseline 10 s away (one rate for the whole pass said
// 0.40 samples/s and 3 s), and the closing line counts each phase's
// operations at its own model's count.
func TestEvalPhaseRates(t *testing.T) {
	var buf bytes.Buffer
	clock := &testClock{}
	p := newEval(&buf, false, false, clock.now)
	for done := 1; done <= 5; done++ {
		clock.t = clock.t.Add(time.Second)
		p.Update(evaluate.EvalProgress{Done: done, Total: 7, Images: 100, MACs: 1e9})
	}
	if want := "eval: sample 5.0/7  1.00 samples/s  100 images/s  200.0 GFLOP/s  eta 2s\n"; buf.String() != want {
		t.Errorf("runs' line %q, want %q", buf.String(), want)
	}
	buf.Reset()
	clock.t = clock.t.Add(10 * time.Second)
	p.Update(evaluate.EvalProgress{Baseline: true, Done: 6, Total: 7, Images: 100, MACs: 1e7})
	if want := "eval: sample 6.0/7  0.10 samples/s  10 images/s  0.2 GFLOP/s  (baselines)  eta 10s\n"; buf.String() != want {
		t.Errorf("baselines' line %q, want %q", buf.String(), want)
	}
	clock.t = clock.t.Add(10 * time.Second)
	p.Update(evaluate.EvalProgress{Baseline: true, Done: 7, Total: 7, Images: 100, MACs: 1e7})
	buf.Reset()
	p.Finish()
	// 5 samples of 2e11 operations and 2 of 2e9 in 25 s.
	if want := "eval: 7 samples scored on 100 images each in 25s: 28 images/s  40.2 GFLOP/s\n"; buf.String() != want {
		t.Errorf("closing line %q, want %q", buf.String(), want)
	}
}
