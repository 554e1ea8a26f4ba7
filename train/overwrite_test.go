package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestOverwriteRefusesNonRun creates runs with overwrite into directories
// of each kind: one that holds no run but other files (chain-* directories
// among them, which overwriting removed) is refused, naming it, and keeps
// its files; an absent or empty one (lock files aside) or a run is written.
func TestOverwriteRefusesNonRun(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	cfg := smallConfig()
	write := func(t *testing.T, dir string, files ...string) {
		for _, f := range files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name    string
		files   []string
		refused bool
	}{
		{"absent", nil, false},
		{"empty", []string{}, false},
		{"lock files only", []string{rundir.LockFile, "chain-1/" + rundir.LockFile}, false},
		{"a run", []string{rundir.ConfigFile, "chain-2/data.csv"}, false},
		{"a chain's run", []string{"chain-1/" + rundir.CheckpointFile}, false},
		{"chain directories of something else", []string{"chain-1/data.csv"}, true},
		{"other files", []string{"notes.txt"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if c.files != nil {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, dir, c.files...)
			}
			ch, err := NewChains(dir, cfg, true, setupOf(data))
			if !c.refused {
				if err != nil {
					t.Fatalf("overwrite refused: %v", err)
				}
				ch.Close()
				return
			}
			if ch != nil {
				ch.Close()
			}
			if err == nil || !strings.Contains(err.Error(), "--overwrite "+dir) || !strings.Contains(err.Error(), "holds no run") {
				t.Fatalf("got %v, want --overwrite %s refused: it holds no run", err, dir)
			}
			for _, f := range c.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("refused overwrite removed %s: %v", f, err)
				}
			}
		})
	}
}

// TestResumeNegativeWorkers: a run recorded with negative workers (which
// ran on every core before they were refused) still validates for a resume.
func TestResumeNegativeWorkers(t *testing.T) {
	cfg := smallConfig()
	cfg.Workers = -1
	if err := checkpointConfigValid("run", cfg, setupOf(smallData(t))); err != nil {
		t.Errorf("a run of workers -1 is refused on resume: %v", err)
	}
}
