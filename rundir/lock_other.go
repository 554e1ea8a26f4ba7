//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos)

package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// acquire creates dir's lock file exclusively (O_EXCL): on systems without
// flock(2) the file's existence is the lock, so a holder that dies leaves
// it behind (staleHint says how to clear it).
func acquire(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		h, _ := ReadHolder(dir)
		return nil, &LockedError{Dir: dir, Holder: h}
	}
	if err != nil {
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	return f, nil
}

// release closes and removes the lock file.
func release(f *os.File, dir string) error {
	err1 := f.Close()
	err2 := os.Remove(filepath.Join(dir, LockFile))
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("unlock run directory %s: %w", dir, err)
	}
	return nil
}

// staleHint tells how to clear a lock its holder left behind: this
// system's locks are files that outlive a killed holder.
func staleHint(dir string) string {
	return fmt.Sprintf("; if that process no longer runs, remove %s", filepath.Join(dir, LockFile))
}
