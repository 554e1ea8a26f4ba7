package train

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestOneWriterPerRunDirectory opens a run (one chain, two chains in one
// process, or one chain task) and, while it holds its directories, tries
// every way of writing them again: each attempt is refused with an error
// naming this process's pid and host, leaves the holder's files as they
// were, and the holder then trains to the end. Meanwhile Evaluate reads
// the run (readers take no lock). After the holder closes, the directory
// is writable again.
func TestOneWriterPerRunDirectory(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	cfg := smallConfig()
	cfg.Sampler, cfg.Steps = "sgnht", 60
	two := cfg
	two.Chains = 2
	host, _ := os.Hostname()
	holder := fmt.Sprintf("pid %d on host %s", os.Getpid(), host)

	type opener func(dir string) (closer interface{ Close() error }, err error)
	newOne := func(dir string) (interface{ Close() error }, error) { return New(dir, cfg, true, setupOf(data)) }
	newTwo := func(dir string) (interface{ Close() error }, error) { return NewChains(dir, two, true, setupOf(data)) }
	resumeOne := func(dir string) (interface{ Close() error }, error) { return Resume(dir, 0, setupOf(data)) }
	resumeAll := func(dir string) (interface{ Close() error }, error) { return ResumeChains(dir, 0, setupOf(data)) }
	chainTask := func(i int) opener {
		return func(dir string) (interface{ Close() error }, error) { return OpenChain(dir, two, i, setupOf(data)) }
	}
	chain1 := func(dir string) string { return rundir.ChainDir(dir, 2, 1) }
	top := func(dir string) string { return dir }

	for _, tc := range []struct {
		name      string
		open      func(dir string) (*Chains, error)
		files     func(dir string) string // a directory whose files must stay
		intruders map[string]struct {
			at   func(dir string) string
			open opener
		}
	}{
		{"one chain", func(dir string) (*Chains, error) { return NewChains(dir, cfg, true, setupOf(data)) }, top, map[string]struct {
			at   func(dir string) string
			open opener
		}{
			"new":              {top, newOne},
			"overwrite with 2": {top, newTwo},
			"resume":           {top, resumeOne},
			"resume chains":    {top, resumeAll},
		}},
		{"two chains", func(dir string) (*Chains, error) { return NewChains(dir, two, true, setupOf(data)) }, chain1, map[string]struct {
			at   func(dir string) string
			open opener
		}{
			"overwrite with 1": {top, newOne},
			"overwrite with 2": {top, newTwo},
			"resume chains":    {top, resumeAll},
			"resume chain 1":   {chain1, resumeOne},
			"chain task 2":     {top, chainTask(2)},
		}},
		{"chain task", func(dir string) (*Chains, error) { return OpenChain(dir, two, 1, setupOf(data)) }, chain1, map[string]struct {
			at   func(dir string) string
			open opener
		}{
			"same chain task":  {top, chainTask(1)},
			"overwrite with 2": {top, newTwo},
			"overwrite with 1": {top, newOne},
			"resume chain 1":   {chain1, resumeOne},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			ch, err := tc.open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ch.Close()
			interruptAll(t, ch, 20)
			before := snapshot(t, tc.files(dir))
			for name, in := range tc.intruders {
				w, err := in.open(in.at(dir))
				if err == nil {
					w.Close()
					t.Errorf("%s: a second writer was let in", name)
					continue
				}
				if !errors.Is(err, rundir.ErrLocked) || !strings.Contains(err.Error(), holder) {
					t.Errorf("%s: %v, want it refused naming %s", name, err, holder)
				}
			}
			if after := snapshot(t, tc.files(dir)); !equalFiles(before, after) {
				t.Fatalf("the refused writers changed the holder's files")
			}
			if err := ch.Train(context.Background(), nil); err != nil {
				t.Fatalf("the holder after the refusals: %v", err)
			}
			rep, err := evaluate.Evaluate(runspec.DefaultSetup(), []string{tc.files(dir)}, "", data) // a reader, while the lock is held
			if err != nil || rep.Ensemble.Samples == 0 {
				t.Fatalf("Evaluate while the run holds its lock: %v", err)
			}
			if err := ch.Close(); err != nil {
				t.Fatal(err)
			}
			w, err := resumeOne(tc.files(dir)) // released: a finished run resumes with nothing to do
			if err != nil {
				t.Fatalf("after Close: %v", err)
			}
			w.Close()
		})
	}
}

// interruptAll trains every chain of c to step stop and checkpoints there,
// keeping c open.
func interruptAll(t *testing.T, c *Chains, stop int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := c.Train(ctx, func(_ int, s Status) {
		if s.Step >= stop {
			cancel()
		}
	})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("stop at %d: %v", stop, err)
	}
}

// snapshot returns the contents of the files in dir, by name.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		if e.Type().IsRegular() {
			if m[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

func equalFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// TestOverwriteKeepsChainLocks overwrites a run of three chains with one of
// two: chain-1 and chain-2 are emptied but kept with their lock files
// (another writer cannot lock a new file of that name meanwhile), chain-3
// is removed, and an old chain held by another writer stops the overwrite
// before anything is removed.
func TestOverwriteKeepsChainLocks(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	cfg := smallConfig()
	cfg.Sampler, cfg.Steps, cfg.Chains = "sgnht", 60, 3
	dir := filepath.Join(t.TempDir(), "run")
	c, err := NewChains(dir, cfg, true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	// chain 3 is written by someone else: the overwrite must not touch it
	held, err := rundir.Acquire(rundir.ChainDir(dir, 3, 3))
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, rundir.ChainDir(dir, 3, 1))
	cfg.Chains = 2
	if _, err := NewChains(dir, cfg, true, setupOf(data)); !errors.Is(err, rundir.ErrLocked) {
		t.Fatalf("overwrite over a held chain: %v, want ErrLocked", err)
	}
	if !equalFiles(before, snapshot(t, rundir.ChainDir(dir, 3, 1))) {
		t.Fatal("a refused overwrite changed chain 1")
	}
	held.Release()
	c, err = NewChains(dir, cfg, true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := os.Stat(rundir.ChainDir(dir, 3, 3)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("chain-3 of the old run: %v, want it removed", err)
	}
	for i := 1; i <= 2; i++ {
		if _, err := rundir.Acquire(rundir.ChainDir(dir, 2, i)); !errors.Is(err, rundir.ErrLocked) {
			t.Errorf("chain %d of the new run is not locked: %v", i, err)
		}
	}
}

// TestClearRunSparesChainLockedMeanwhile clears a run directory after a
// chain directory appeared in it and was locked by another writer since
// lockForCreate listed them (a chain task starting in that moment): the
// clear is refused, naming the holder, and leaves that chain's files.
func TestClearRunSparesChainLockedMeanwhile(t *testing.T) {
	t.Parallel()
	for _, k := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d chains", k), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			locks, err := lockForCreate(dir, k)
			if err != nil {
				t.Fatal(err)
			}
			defer locks.release()
			late := filepath.Join(dir, "chain-3") // not a chain of the new run
			task, err := lockDir(late)
			if err != nil {
				t.Fatal(err)
			}
			defer task.Release()
			samples := filepath.Join(late, rundir.SamplesFile)
			if err := os.WriteFile(samples, []byte("being written"), 0o644); err != nil {
				t.Fatal(err)
			}
			err = clearRun(dir, k, locks)
			if !errors.Is(err, rundir.ErrLocked) {
				t.Errorf("clear over a chain locked since: %v, want ErrLocked", err)
			}
			if _, err := os.Stat(samples); err != nil {
				t.Errorf("the held chain's files were removed: %v", err)
			}
		})
	}
}
