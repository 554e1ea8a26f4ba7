package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// A run's writers hold the lock (rundir.Acquire) of every directory they
// write, from before they read or clear anything there until Close: a new
// or resumed run of one chain locks its directory; a run of K chains in one
// process locks the top directory and each chain directory; one chain task
// (OpenChain) locks its chain directory alone, so the K tasks of an array
// run at once (the top config.json they share is created atomically, see
// claimRunConfig). Readers (eval, export, predict) take no lock.

// lockDir creates dir if needed and takes its lock.
func lockDir(dir string) (*rundir.Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return rundir.Acquire(dir)
}

// dirLocks are locks held on several directories, by directory.
type dirLocks map[string]*rundir.Lock

// release releases every lock in ls except those of the directories in keep.
func (ls dirLocks) release(keep ...string) {
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	for d, l := range ls {
		if !kept[d] {
			l.Release()
			delete(ls, d)
		}
	}
}

// lockForCreate takes, before a new run of k chains is written into dir,
// the locks of dir and of every chain directory the run will write or
// clearRun will clear (chain-1..k, and any other chain-* directory of an
// earlier run in dir). All or none: when one is held by another process
// the locks taken are released and the error names the holder.
func lockForCreate(dir string, k int) (dirLocks, error) {
	dirs := []string{dir}
	old, _ := filepath.Glob(filepath.Join(dir, "chain-*"))
	sort.Strings(old)
	seen := map[string]bool{dir: true}
	for i := 1; i <= k; i++ {
		if d := rundir.ChainDir(dir, k, i); !seen[d] {
			dirs, seen[d] = append(dirs, d), true
		}
	}
	for _, d := range old {
		if st, err := os.Stat(d); err == nil && st.IsDir() && !seen[d] {
			dirs, seen[d] = append(dirs, d), true
		}
	}
	ls := dirLocks{}
	for _, d := range dirs {
		l, err := lockDir(d)
		if err != nil {
			ls.release()
			return nil, err
		}
		ls[d] = l
	}
	return ls, nil
}

// clearChainDir removes everything in the chain directory dir but its lock
// file, which the caller holds (removing it would let another writer lock
// a new file of that name while this one still writes).
func clearChainDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("overwrite %s: %w", dir, err)
	}
	for _, e := range ents {
		if e.Name() == rundir.LockFile {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("overwrite %s: %w", dir, err)
		}
	}
	return nil
}
