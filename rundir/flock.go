//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// acquire opens dir's lock file and takes an exclusive flock on it without
// waiting. A lock file removed or replaced between the open and the lock
// (by hand, say) is opened again, so the lock held is always the one on the
// file the name points to.
func acquire(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
		}
		err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case errors.Is(err, syscall.EWOULDBLOCK):
			h, _ := readHolder(f)
			f.Close()
			return nil, &LockedError{Dir: dir, Holder: h}
		case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EINVAL):
			f.Close()
			return nil, fmt.Errorf("lock run directory %s: flock %s: %w: %w (Lustre needs the flock mount option, NFS needs lockd; see docs/cluster.md)", dir, path, err, ErrNoLocks)
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("lock run directory %s: flock %s: %w", dir, path, err)
		}
		held, err1 := f.Stat()
		named, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return f, nil
		}
		f.Close() // the name now points elsewhere (or nowhere): lock that instead
	}
	return nil, fmt.Errorf("lock run directory %s: %s keeps being replaced while it is locked", dir, path)
}

// flock calls flock(2), again when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// release unlocks and closes the lock file f (closing alone would unlock
// it; the explicit unlock does so even if f's descriptor was duplicated).
func release(f *os.File, dir string) error {
	err1 := flock(f, syscall.LOCK_UN)
	err2 := f.Close()
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("unlock run directory %s: %w", dir, err)
	}
	return nil
}

// staleHint is what a LockedError adds: nothing, as the kernel releases
// the lock of a process that died.
func staleHint(string) string { return "" }
