package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRecordTimingDiskFull injects a half-written timing.json that fails
// with ENOSPC: RecordTiming returns an error naming the temporary file
// and the cause, removes it, and leaves the recorded timing as it was.
// The file is written as the checkpoint is (synced before the rename).
func TestRecordTimingDiskFull(t *testing.T) {
	dir := t.TempDir()
	if err := RecordTiming(dir, 3*time.Second, 10); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, TimingFile)
	before, _ := os.ReadFile(path)

	old := checkpointWrite
	checkpointWrite = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	defer func() { checkpointWrite = old }()
	err := RecordTiming(dir, 5*time.Second, 20)
	if err == nil || !strings.Contains(err.Error(), TimingFile+".tmp: no space left on device") {
		t.Fatalf("error %v, want one naming %s.tmp and ENOSPC", err, TimingFile)
	}
	if _, e := os.Stat(path + ".tmp"); e == nil {
		t.Error("a partial timing.json.tmp was left behind")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("the recorded timing was changed by the failed write")
	}
	checkpointWrite = old
	if err := RecordTiming(dir, 5*time.Second, 20); err != nil {
		t.Fatal(err)
	}
	if tm, ok, err := ReadTiming(dir); err != nil || !ok || tm.Sessions != 2 || tm.WallSeconds != 8 || tm.Steps != 20 {
		t.Fatalf("timing %+v, %v, %v after two sessions", tm, ok, err)
	}
}
