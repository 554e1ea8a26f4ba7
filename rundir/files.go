package rundir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/runspec"
)

// ReadRunConfig reads the config saved in a run directory.
func ReadRunConfig(dir string) (runspec.Config, error) {
	var c runspec.Config
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return c, fmt.Errorf("run %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("run %s: %s: %w", dir, ConfigFile, err)
	}
	return c, nil
}

// ReadMetrics reads a run's metrics.jsonl.
func ReadMetrics(dir string) ([]MetricsLine, error) {
	path := filepath.Join(dir, MetricsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	return scanMetrics(path, f)
}

// scanMetrics reads metrics lines from r (the file at path).
func scanMetrics(path string, r io.Reader) ([]MetricsLine, error) {
	var out []MetricsLine
	const maxLine = 1 << 20
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, maxLine), maxLine)
	line := 1
	for ; sc.Scan(); line++ {
		var m MetricsLine
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: %w (metrics lines are at most %d bytes)", path, line, err, maxLine)
		}
		return nil, fmt.Errorf("%s:%d: %w", path, line, err)
	}
	return out, nil
}

// File names inside a run directory.
const (
	ConfigFile  = "config.json"
	SamplesFile = "samples"
	MetricsFile = "metrics.jsonl"
)

// ChainDir returns the directory of chain i (1-based) of a run in dir with k
// chains: dir itself when k = 1, dir/chain-i otherwise. Each chain directory
// is a complete run directory (config, checkpoint, samples, metrics) that
// eval and predict read on their own; the run directory's config.json has
// chain 0.
func ChainDir(dir string, k, i int) string {
	if k <= 1 {
		return dir
	}
	return filepath.Join(dir, fmt.Sprintf("chain-%d", i))
}

// WriteConfig writes cfg to dir/config.json atomically (a temporary file
// renamed over it), so a reader such as eval never sees half a file.
func WriteConfig(dir string, cfg runspec.Config) error {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("save config: %w", err)
	}
	// temporary file and rename: a crash mid-write leaves the old config
	if err := replaceFile(filepath.Join(dir, ConfigFile), append(b, '\n')); err != nil {
		return fmt.Errorf("save config: %w", err)
	}
	return nil
}

// replaceFile replaces the file at path with one holding b, atomically: b
// is written to path.tmp and synced, renamed over path, and the directory
// synced, so a crash at any moment leaves the old file or the new one,
// whole. A failed write removes path.tmp.
func replaceFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := writeSynced(tmp, b); err != nil {
		os.Remove(tmp) // a partial file (disk full) frees its space
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir syncs the directory dir, committing the names created and
// renamed in it; file systems that cannot sync a directory are left as
// they are.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// WriteTemp writes b to a new temporary file in dir, synced to stable
// storage, and returns its path.
func WriteTemp(dir string, b []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+ConfigFile+"-*.tmp")
	if err != nil {
		return "", err
	}
	if err := f.Chmod(0o644); err != nil { // as os.WriteFile made it (CreateTemp makes 0600)
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// RunDirs expands run directories for evaluation: a run of several chains
// becomes its chain directories, in order; other directories stay.
func RunDirs(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		cds, err := chainDirs(d, true)
		if err != nil {
			return nil, err
		}
		out = append(out, cds...)
	}
	return out, nil
}

// chainDirs returns the chain directories of the run in d (d itself for a
// run of one chain); a chain without a config is an error when strict and
// left out otherwise.
func chainDirs(d string, strict bool) ([]string, error) {
	cfg, err := ReadRunConfig(d)
	if err != nil {
		return nil, err
	}
	if cfg.Chains <= 1 || cfg.Chain != 0 {
		return []string{d}, nil
	}
	var out []string
	for i := 1; i <= cfg.Chains; i++ {
		cd := ChainDir(d, cfg.Chains, i)
		if _, err := os.Stat(filepath.Join(cd, ConfigFile)); err != nil {
			if strict {
				return nil, fmt.Errorf("run %s has %d chains but chain %d is missing: %w", d, cfg.Chains, i, err)
			}
			continue
		}
		out = append(out, cd)
	}
	return out, nil
}
