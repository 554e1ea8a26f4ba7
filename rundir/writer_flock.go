//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// CheckNoWriter returns nil when no process holds the lock of the run
// directory dir (or dir has no lock file: a run older than the lock), and a
// *LockedError naming the holder when one does: a train still writing it.
// Readers that must not see a run change under them (ptsghmc serve) call
// it; it takes a shared flock for an instant, so a writer starting in that
// instant is refused as if the directory were held.
func CheckNoWriter(dir string) error {
	path := filepath.Join(dir, LockFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check the lock of run directory %s: %w", dir, err)
	}
	defer f.Close()
	err = flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		h, _ := readHolder(f)
		return &LockedError{Dir: dir, Holder: h}
	case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EINVAL):
		return fmt.Errorf("check the lock of run directory %s: flock %s: %w: %w", dir, path, err, ErrNoLocks)
	case err != nil:
		return fmt.Errorf("check the lock of run directory %s: flock %s: %w", dir, path, err)
	}
	return flock(f, syscall.LOCK_UN)
}
