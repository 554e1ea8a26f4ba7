package train

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestWriteErrors injects a write error (ENOSPC, as on a full disk) into
// the checkpoint, the samples file and the metrics file in the middle of a
// run. Each run stops with an error naming the file and the cause; the last
// good checkpoint and the samples it covers are intact, no temporary file
// is left, and the run resumes to the same files as an uninterrupted run.
func TestWriteErrors(t *testing.T) {
	cfg := smallConfig()
	data := smallData(t)
	ref := filepath.Join(t.TempDir(), "ref")
	r, err := NewFromData(ref, cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	ws, wm := readAll(t, ref)

	// readOnly reopens path read-only at its end: writes to it then fail.
	readOnly := func(t *testing.T, path string) *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		f.Seek(0, 2)
		return f
	}
	for _, c := range []struct {
		name   string
		inject func(t *testing.T, r *Run) (restore func())
		want   string // in the error
	}{
		{"checkpoint", func(t *testing.T, r *Run) func() {
			old := checkpointWrite
			checkpointWrite = func(f *os.File, b []byte) (int, error) {
				n, _ := f.Write(b[:len(b)/2]) // half written, then the disk is full
				return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
			}
			return func() { checkpointWrite = old }
		}, "checkpoint.tmp: no space left on device"},
		{"samples", func(t *testing.T, r *Run) func() {
			r.samples.f.Close()
			r.samples.f = readOnly(t, filepath.Join(r.Dir, SamplesFile))
			return func() {}
		}, filepath.Join("run", SamplesFile)},
		{"metrics", func(t *testing.T, r *Run) func() {
			r.metrics.Close()
			r.metrics = readOnly(t, filepath.Join(r.Dir, MetricsFile))
			return func() {}
		}, "metrics"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			r, err := NewFromData(dir, cfg, data)
			if err != nil {
				t.Fatal(err)
			}
			restore := func() {}
			var good []byte
			err = r.Train(context.Background(), func(s Status) {
				if s.Step == 50 { // just after the checkpoint of step 50
					good, _ = os.ReadFile(filepath.Join(dir, checkpointName))
					restore = c.inject(t, r)
				}
			})
			restore()
			r.Close()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
			if _, e := os.Stat(filepath.Join(dir, checkpointName+".tmp")); e == nil {
				t.Error("a partial checkpoint.tmp was left behind")
			}
			ck, err := ReadCheckpoint(filepath.Join(dir, checkpointName))
			if err != nil {
				t.Fatalf("last good checkpoint unreadable: %v", err)
			}
			if c.name == "checkpoint" {
				if b, _ := os.ReadFile(filepath.Join(dir, checkpointName)); !bytes.Equal(b, good) {
					t.Fatal("the checkpoint of step 50 was changed by the failed write")
				}
			}
			sw, err := OpenSamplesAt(filepath.Join(dir, SamplesFile), ck.Samples)
			if err != nil {
				t.Fatalf("samples of the last checkpoint (%d): %v", ck.Samples, err)
			}
			sw.Close()
			r, err = ResumeFromData(dir, data, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Train(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			r.Close()
			gs, gm := readAll(t, dir)
			if !bytes.Equal(gs, ws) || !bytes.Equal(gm, wm) {
				t.Fatalf("resumed run's files differ from the uninterrupted run's (samples %d vs %d bytes, metrics %d vs %d)", len(gs), len(ws), len(gm), len(wm))
			}
		})
	}
}

// TestSgdKernelDivergence checks the sgd baseline's kernel reports a
// non-finite coordinate anywhere, not only the first.
func TestSgdKernelDivergence(t *testing.T) {
	k := sgdKernel{StepSize: 0.01, Friction: 0.1}
	for _, at := range []int{-1, 0, 499, 999} {
		pot := nanAt{d: 1000, at: at}
		s := sampler.NewState(make([]float64, pot.d))
		err := k.Step(pot, s, 1, rand.New(rand.NewPCG(1, 1)))
		if (at >= 0) != errors.Is(err, sampler.ErrDiverged) {
			t.Errorf("NaN gradient at %d: error %v", at, err)
		}
	}
}

type nanAt struct{ d, at int }

func (p nanAt) Dim() int { return p.d }
func (p nanAt) Gradient(theta, grad []float64, rng *rand.Rand) (float64, error) {
	for i := range grad {
		grad[i] = 1
	}
	if p.at >= 0 {
		grad[p.at] = math.NaN()
	}
	return 0, nil
}
