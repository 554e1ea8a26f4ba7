package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestWriteCheckpointDiskFull injects a half-written checkpoint that fails
// with ENOSPC, as on a full disk: WriteCheckpoint returns an error naming
// the temporary file and the cause, removes the partial file, and leaves
// the previous checkpoint as it was.
func TestWriteCheckpointDiskFull(t *testing.T) {
	dir := t.TempDir()
	good := &Checkpoint{Config: runspec.DefaultConfig(), Steps: 50, Rungs: []RungState{{Theta: []float64{1, 2}, P: []float64{0, 0}}}}
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
	err := WriteCheckpoint(dir, &Checkpoint{Config: runspec.DefaultConfig(), Steps: 60})
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
