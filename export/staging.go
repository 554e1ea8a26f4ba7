package export

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// staging is where an output is written before it is renamed to its path:
// a new private directory next to it (os.MkdirTemp, so no file of the
// user's is truncated or removed, and concurrent exports do not share it),
// holding the output under its own name, so that the output gets the
// permissions os.Create and os.Mkdir give (os.CreateTemp's are 0600).
type staging struct {
	dir  string // the private directory
	path string // the output in it
	dest string // the output's path, cleaned (a trailing slash dropped)
}

// newStaging makes the staging directory of path, in the directory of
// filepath.Clean(path).
func newStaging(path string) (*staging, error) {
	dest := filepath.Clean(path)
	dir, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("export %s: temporary directory: %w", path, err)
	}
	return &staging{dir: dir, path: filepath.Join(dir, filepath.Base(dest)), dest: dest}, nil
}

// commit flushes every file of the staged output to disk, renames the
// output to its path and removes the staging directory; on error the
// staging directory is removed.
func (s *staging) commit() error {
	if err := syncTree(s.path); err != nil {
		s.remove()
		return err
	}
	if err := os.Rename(s.path, s.dest); err != nil {
		s.remove()
		return err
	}
	return os.Remove(s.dir)
}

// remove removes the staging directory and what it holds.
func (s *staging) remove() { os.RemoveAll(s.dir) }

// syncTree flushes every regular file under root (root itself when it is
// a file) to disk.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}
