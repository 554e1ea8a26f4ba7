package rundir

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestCheckNoWriter: a directory without a lock file, or with a released
// lock, has no writer; while a writer holds it, CheckNoWriter names the
// holder, and the check leaves the writer's lock in place.
func TestCheckNoWriter(t *testing.T) {
	dir := t.TempDir()
	if err := CheckNoWriter(dir); err != nil {
		t.Fatalf("no lock file: %v", err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckNoWriter(dir)
	var le *LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("held lock: %v, want a *LockedError naming pid %d", err, os.Getpid())
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("after the check the writer's lock is gone: second Acquire gave %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := CheckNoWriter(dir); err != nil {
		t.Fatalf("released lock: %v", err)
	}
	l2, err := Acquire(dir) // the check released its shared lock
	if err != nil {
		t.Fatalf("Acquire after a check: %v", err)
	}
	l2.Release()
}
