package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestWriteErrors injects a write error (ENOSPC, as on a full disk) into
// the checkpoint, the samples file and the metrics file in the middle of a
// run. Each run stops with an error naming the file and the cause; the last
// good checkpoint and the samples it covers are intact, no temporary file
// is left, and the run resumes to the same files as an uninterrupted run.
func TestWriteErrors(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	cfg.Corr = "hermite" // its table builds in milliseconds
	data := smallData(t)
	r, ref := trainRef(t, cfg, setupOf(data))
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
			// a directory where the temporary file goes: creating it fails
			// (rundir's TestWriteCheckpointDiskFull injects ENOSPC itself)
			if err := os.Mkdir(filepath.Join(r.Dir, rundir.CheckpointFile+".tmp"), 0o755); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}, "checkpoint.tmp: is a directory"},
		{"samples", func(t *testing.T, r *Run) func() {
			r.samples.Close() // writes and syncs fail, naming the file
			return func() {}
		}, filepath.Join("run", rundir.SamplesFile)},
		{"metrics", func(t *testing.T, r *Run) func() {
			r.metrics.Close()
			r.metrics = readOnly(t, filepath.Join(r.Dir, rundir.MetricsFile))
			return func() {}
		}, "metrics"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			r, err := New(dir, cfg, true, setupOf(data))
			if err != nil {
				t.Fatal(err)
			}
			restore := func() {}
			var good []byte
			err = r.Train(context.Background(), func(s Status) {
				if s.Step == 50 { // just after the checkpoint of step 50
					good, _ = os.ReadFile(filepath.Join(dir, rundir.CheckpointFile))
					restore = c.inject(t, r)
				}
			})
			restore()
			r.Close()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
			if _, e := os.Stat(filepath.Join(dir, rundir.CheckpointFile+".tmp")); e == nil {
				t.Error("a partial checkpoint.tmp was left behind")
			}
			ck, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile))
			if err != nil {
				t.Fatalf("last good checkpoint unreadable: %v", err)
			}
			if c.name == "checkpoint" {
				if b, _ := os.ReadFile(filepath.Join(dir, rundir.CheckpointFile)); !bytes.Equal(b, good) {
					t.Fatal("the checkpoint of step 50 was changed by the failed write")
				}
			}
			sw, err := rundir.OpenSamplesAt(filepath.Join(dir, rundir.SamplesFile), ck.Samples)
			if err != nil {
				t.Fatalf("samples of the last checkpoint (%d): %v", ck.Samples, err)
			}
			sw.Close()
			r, err = Resume(dir, 0, setupOf(data))
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

// rewriteCheckpoint reads the checkpoint in dir, changes it and writes it
// back (with a valid checksum).
func rewriteCheckpoint(t *testing.T, dir string, change func(c *rundir.Checkpoint)) {
	t.Helper()
	c, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	change(c)
	if err := rundir.WriteCheckpoint(dir, c); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointMismatch resumes, through Resume's real path, checkpoints
// that do not fit the run they rebuild: each is refused with an error
// wrapping ErrCheckpoint that says what does not fit, never a panic. A
// checkpoint and config of a version without the data fingerprint still
// resume; other training data is refused with an error naming both.
func TestCheckpointMismatch(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	cfg.Corr = "hermite"
	data := smallData(t)
	base := filepath.Join(t.TempDir(), "base")
	r, err := New(base, cfg, true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.Train(ctx, func(s Status) {
		if s.Step == 60 {
			cancel()
		}
	})
	r.Close()
	files := []string{rundir.CheckpointFile, rundir.SamplesFile, rundir.MetricsFile, rundir.ConfigFile}
	fresh := func(t *testing.T) string {
		dir := t.TempDir()
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(base, f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, f), b, 0o644)
		}
		return dir
	}
	for _, c := range []struct {
		name   string
		change func(c *rundir.Checkpoint)
		want   string
	}{
		{"batch position outside the data", func(c *rundir.Checkpoint) { c.Batches[1].Pos = -3 }, "rung 2's batch state is at position -3"},
		{"batch order outside the data", func(c *rundir.Checkpoint) { c.Batches[0].Order[5] = 1 << 20 }, "rung 1's batch order is not a permutation"},
		{"batch order repeats an example", func(c *rundir.Checkpoint) { c.Batches[2].Order[5] = c.Batches[2].Order[6] }, "rung 3's batch order is not a permutation"},
		{"batch state of other data", func(c *rundir.Checkpoint) { c.Batches[0].N = 1000 }, "over 1000 examples"},
		{"batch size not the run's", func(c *rundir.Checkpoint) { c.Batches[0].Size = 7 }, "in batches of 7"},
		{"momenta of another model", func(c *rundir.Checkpoint) { c.Rungs[1].P = c.Rungs[1].P[:10] }, "rung 2 has 243 parameters and 10 momenta"},
		{"parameters of another model", func(c *rundir.Checkpoint) { c.Rungs[0].Theta = append(c.Rungs[0].Theta, 1) }, "rung 1 has 244 parameters"},
		{"non-finite state", func(c *rundir.Checkpoint) { c.Rungs[2].Theta[100] = math.NaN() }, "non-finite"},
		{"missing random stream", func(c *rundir.Checkpoint) { c.Streams = c.Streams[:3] }, "3 streams"},
		{"bad random stream", func(c *rundir.Checkpoint) { c.Streams[1] = []byte{1, 2} }, "random stream 2"},
		{"more samples than steps", func(c *rundir.Checkpoint) { c.Samples = 1000 }, "1000 samples after 60 steps"},
		{"steps beyond the run", func(c *rundir.Checkpoint) { c.Steps = 500 }, "500 steps done"},
		{"ladder of other length", func(c *rundir.Checkpoint) { c.Temps = c.Temps[:2] }, "a ladder of 2 temperatures"},
		{"walker labels not a permutation", func(c *rundir.Checkpoint) { c.Stats.Walker[0] = 7 }, "walker labels"},
		{"invalid config", func(c *rundir.Checkpoint) { c.Config.Batch = -1 }, "batch must be positive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fresh(t)
			rewriteCheckpoint(t, dir, c.change)
			r, err := Resume(dir, 0, setupOf(data))
			if err == nil {
				r.Close()
				t.Fatal("resumed")
			}
			if !errors.Is(err, rundir.ErrCheckpoint) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("error %v, want one wrapping ErrCheckpoint naming %s and %q", err, dir, c.want)
			}
		})
	}
	// The samples the checkpoint covers must be intact: a corrupt record
	// among them, or a file cut short, is refused (not built upon).
	ck, _ := rundir.ReadCheckpoint(filepath.Join(base, rundir.CheckpointFile))
	h, _ := os.ReadFile(filepath.Join(base, rundir.SamplesFile))
	rec := 8 + 243*4 + 4
	hlen := len(h) - ck.Samples*rec
	for _, c := range []struct {
		name   string
		change func(b []byte) []byte
		want   string
	}{
		{"corrupt sample record covered by the checkpoint", func(b []byte) []byte { b[hlen+rec+20] ^= 1; return b }, "record #2 (counting from 1; step field 60)"},
		{"samples file shorter than the checkpoint's count", func(b []byte) []byte { return b[:len(b)-rec-3] }, "0 intact samples, checkpoint expects 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fresh(t)
			b := c.change(append([]byte(nil), h...))
			os.WriteFile(filepath.Join(dir, rundir.SamplesFile), b, 0o644)
			r, err := Resume(dir, 0, setupOf(data))
			if err == nil {
				r.Close()
				t.Fatal("resumed")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(dir, rundir.SamplesFile)) {
				t.Fatalf("error %v, want one naming the file and %q", err, c.want)
			}
			if after, _ := os.ReadFile(filepath.Join(dir, rundir.SamplesFile)); !bytes.Equal(after, b) {
				t.Fatal("the refused samples file was changed")
			}
		})
	}
	t.Run("other training data", func(t *testing.T) {
		dir := fresh(t)
		other, _ := datasets.SyntheticImages(200, 16, 3, rand.New(rand.NewPCG(2, 2)))
		_, err := Resume(dir, 0, setupOf(other))
		if !errors.Is(err, rundir.ErrOtherData) || !strings.Contains(err.Error(), dir) || strings.Count(err.Error(), "170 examples x 16 features, 3 classes") != 2 {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("run older than fingerprints", func(t *testing.T) {
		dir := fresh(t)
		rewriteCheckpoint(t, dir, func(c *rundir.Checkpoint) { c.Config.DataFingerprint = nil })
		b, _ := os.ReadFile(filepath.Join(dir, rundir.ConfigFile))
		var m map[string]any
		json.Unmarshal(b, &m)
		if _, ok := m["data_fingerprint"]; !ok {
			t.Fatal("config.json has no data_fingerprint")
		}
		delete(m, "data_fingerprint")
		b, _ = json.Marshal(m)
		os.WriteFile(filepath.Join(dir, rundir.ConfigFile), b, 0o644)
		ch, err := ResumeChains(dir, 0, setupOf(data))
		if err != nil {
			t.Fatal(err)
		}
		ch.Close()
		if err := rundir.CheckRunData(dir, "the same data", data); err != nil {
			t.Fatal(err)
		}
	})
}
