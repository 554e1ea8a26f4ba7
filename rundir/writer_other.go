//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos)

package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckNoWriter returns nil when no process holds the lock of the run
// directory dir, and a *LockedError naming the holder when one does. On
// systems without flock(2) the lock file's existence is the lock.
func CheckNoWriter(dir string) error {
	_, err := os.Stat(filepath.Join(dir, LockFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check the lock of run directory %s: %w", dir, err)
	}
	h, _ := ReadHolder(dir)
	return &LockedError{Dir: dir, Holder: h}
}
