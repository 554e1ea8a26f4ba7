package rundir

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestWriteCheckpointDiskFull injects a half-written checkpoint that fails
// with ENOSPC, as on a full disk: WriteCheckpoint returns an error naming
// the temporary file and the cause, removes the partial file, and leaves
// the previous checkpoint as it was.
func TestWriteCheckpointDiskFull(t *testing.T) {
	dir := t.TempDir()
	good := &Checkpoint{Config: runspec.DefaultConfig(), Snapshot: tempering.Snapshot{Steps: 50, Rungs: []tempering.RungSnapshot{{Theta: []float64{1, 2}, P: []float64{0, 0}}}}}
	if err := WriteCheckpoint(dir, good); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CheckpointFile)
	before, _ := os.ReadFile(path)

	old := checkpointWrite
	checkpointWrite = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2]) // half written, then the disk is full
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	defer func() { checkpointWrite = old }()
	err := WriteCheckpoint(dir, &Checkpoint{Config: runspec.DefaultConfig(), Snapshot: tempering.Snapshot{Steps: 60}})
	if err == nil || !strings.Contains(err.Error(), "checkpoint.tmp: no space left on device") {
		t.Fatalf("error %v, want one naming checkpoint.tmp and ENOSPC", err)
	}
	if _, e := os.Stat(path + ".tmp"); e == nil {
		t.Error("a partial checkpoint.tmp was left behind")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("the previous checkpoint was changed by the failed write")
	}
	c, err := ReadCheckpoint(path)
	if err != nil || c.Steps != 50 {
		t.Fatalf("previous checkpoint: steps %v, error %v", c, err)
	}
}

// checkpointBytes wraps a gob payload as a checkpoint file of format
// version v.
func checkpointBytes(t *testing.T, v uint32, payload any) []byte {
	t.Helper()
	var p bytes.Buffer
	if err := gob.NewEncoder(&p).Encode(payload); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(CheckpointMagic)
	binary.Write(&b, binary.LittleEndian, v)
	binary.Write(&b, binary.LittleEndian, uint64(p.Len()))
	b.Write(p.Bytes())
	sum := sha256.Sum256(p.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// TestDecodeCheckpointVersions reads a version 1 checkpoint (the sampler's
// state flat in it) of a run older than the ladder, the window statistics,
// the swap probabilities and health watching, and checks that its state
// lands in the Checkpoint's Snapshot brought up to date; a version 2 file
// round-trips, and a newer version is refused.
func TestDecodeCheckpointVersions(t *testing.T) {
	cfg := runspec.DefaultConfig()
	cfg.Sampler, cfg.Replicas, cfg.Ladder, cfg.TMax = runspec.PTSGHMC, 3, "geometric", 4
	ladder, err := cfg.Temps()
	if err != nil {
		t.Fatal(err)
	}
	old := checkpointV1{Config: cfg, Steps: 30, Rounds: 3, Samples: 2, Metrics: 99,
		Rungs:   []tempering.RungSnapshot{{Theta: []float64{1}, P: []float64{2}, Xi: 3}, {Theta: []float64{4}, P: []float64{5}}, {Theta: []float64{6}, P: []float64{7}}},
		Streams: [][]byte{{1}, {2}, {3}, {4}},
		Stats:   tempering.PTStats{Proposed: []int{3, 2}, Accepted: []int{1, 2}, Walker: []int{0, 1, 2}},
		Batches: []datasets.Batches{{N: 5, Size: 2}}}
	c, err := DecodeCheckpoint("v1", checkpointBytes(t, 1, old))
	if err != nil {
		t.Fatal(err)
	}
	if c.Steps != 30 || c.Rounds != 3 || c.Samples != 2 || c.Metrics != 99 || c.Config.Replicas != 3 || c.Rungs[0].Xi != 3 || c.Rungs[2].P[0] != 7 ||
		len(c.Streams) != 4 || c.Batches[0].N != 5 {
		t.Errorf("version 1 decoded as %+v", c)
	}
	if !reflect.DeepEqual(c.Temps, ladder) || len(c.Stats.WinProposed) != 2 || !reflect.DeepEqual(c.Stats.SwapProb, []float64{1, 2}) ||
		c.Stats.ProbSince != 30 || len(c.Stats.Health) != 3 {
		t.Errorf("version 1 not upgraded: ladder %v (want %v), windows %v, swap sums %v since %d, %d health watches",
			c.Temps, ladder, c.Stats.WinProposed, c.Stats.SwapProb, c.Stats.ProbSince, len(c.Stats.Health))
	}
	again, err := DecodeCheckpoint("v2", checkpointBytes(t, CheckpointVersion, c))
	if err != nil || !reflect.DeepEqual(again.Snapshot, c.Snapshot) {
		t.Errorf("version 2 round trip: %v, snapshot %+v, want %+v", err, again, c.Snapshot)
	}
	if _, err := DecodeCheckpoint("v3", checkpointBytes(t, CheckpointVersion+1, c)); err == nil || !strings.Contains(err.Error(), "format version 3") {
		t.Errorf("version 3: %v, want a refusal naming it", err)
	}
}

// TestDecodeCheckpointBadLength decodes files whose header declares a
// payload length that does not fit them, among them lengths that wrap
// around when the header and checksum are added: each is refused with an
// error wrapping ErrCheckpoint that names the file and the sizes, never a
// panic.
func TestDecodeCheckpointBadLength(t *testing.T) {
	file := func(size int, declared uint64) []byte {
		b := make([]byte, size)
		copy(b, CheckpointMagic)
		binary.LittleEndian.PutUint32(b[8:], CheckpointVersion)
		binary.LittleEndian.PutUint64(b[12:], declared)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"wraps to the file's size", file(40, ^uint64(0)-11)}, // 20+n+32 = 40 mod 2^64: payload [20:8]
		{"wraps inside the header", file(20, ^uint64(0)-31)},  // 20+n+32 = 20 mod 2^64
		{"wraps past the header", file(51, ^uint64(0))},       // 20+n+32 = 51 mod 2^64
		{"longer than the file", file(60, 100)},
		{"header alone, no checksum", file(20, 0)},
		{"maximum length", file(52, ^uint64(0))},
		{"checksum cut short", file(50, 0)},
		{"one byte of payload too many", file(53, 0)},
		{"declares 2^63", file(100, 1<<63)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeCheckpoint("ckpt", tc.b)
			if err == nil || !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "checkpoint ckpt:") {
				t.Fatalf("error %v, want one naming the file and wrapping ErrCheckpoint", err)
			}
		})
	}
}

// TestDecodeCheckpointVersionCorrupt flips the format version in the
// header of a version 2 checkpoint to 1 (the checksum covers the payload
// alone): the file is refused as corrupt, with an error wrapping
// ErrCheckpoint that names the file and both versions, instead of the
// payload decoding under version 1 into a checkpoint of no rungs that the
// resume refused as "0 rungs" for the run. A version 1 file flipped to 2
// decodes into the same checkpoint as under its own version (gob fills the
// embedded snapshot's fields from the flat ones), so it is read.
func TestDecodeCheckpointVersionCorrupt(t *testing.T) {
	cfg := runspec.DefaultConfig()
	rungs := []tempering.RungSnapshot{{Theta: []float64{1}, P: []float64{2}}}
	v2 := checkpointBytes(t, CheckpointVersion, &Checkpoint{Config: cfg, Snapshot: tempering.Snapshot{Steps: 30, Rungs: rungs, Streams: [][]byte{{1}, {2}}}})
	b := append([]byte(nil), v2...)
	binary.LittleEndian.PutUint32(b[8:], 1)
	c, err := DecodeCheckpoint("ckpt", b)
	if err == nil || !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "checkpoint ckpt:") ||
		!strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), "version 1") || !strings.Contains(err.Error(), "version 2") {
		var rungs int
		if c != nil {
			rungs = len(c.Rungs)
		}
		t.Fatalf("error %v (decoded %d rungs), want one naming the file and the corrupt version, wrapping ErrCheckpoint", err, rungs)
	}
	t.Log(err)
	if c, err := DecodeCheckpoint("ckpt", v2); err != nil || c.Steps != 30 || len(c.Rungs) != 1 {
		t.Fatalf("the intact file: %v", err)
	}

	v1 := checkpointBytes(t, 1, checkpointV1{Config: cfg, Steps: 30, Rungs: rungs, Streams: [][]byte{{1}, {2}}})
	want, err := DecodeCheckpoint("ckpt", v1)
	if err != nil {
		t.Fatal(err)
	}
	b = append([]byte(nil), v1...)
	binary.LittleEndian.PutUint32(b[8:], 2)
	if got, err := DecodeCheckpoint("ckpt", b); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("version 1 file under version 2: %v, %+v, want %+v", err, got, want)
	}
}
