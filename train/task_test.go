package train

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestOpenChainConcurrent starts the 4 chains of a run as 4 goroutines at
// once (as array tasks on a shared file system would), each opening its
// chain with OpenChain, and checks that exactly one run config is
// written, that every chain equals chain i of the one-process run byte for
// byte, and that RunStatus and Evaluate see them all finished.
func TestOpenChainConcurrent(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	cfg.Chains, cfg.Steps, cfg.Sampler = 4, 80, "sgnht"
	data := smallData(t)
	ref := trainChainsRef(t, cfg, setupOf(data))

	dir := filepath.Join(t.TempDir(), "tasks")
	var wg sync.WaitGroup
	errs := make([]error, cfg.Chains)
	for i := 1; i <= cfg.Chains; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ch, err := OpenChain(dir, cfg, i, setupOf(data))
			if err != nil {
				errs[i-1] = err
				return
			}
			defer ch.Close()
			if ch.Resumed || ch.Only != i || len(ch.Runs) != 1 {
				errs[i-1] = errors.New("a new chain opened as resumed, or not as chain i alone")
				return
			}
			errs[i-1] = ch.Train(context.Background(), nil)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("chain %d: %v", i+1, err)
		}
	}
	for i := 1; i <= cfg.Chains; i++ {
		ws, wm := readAll(t, rundir.ChainDir(ref, cfg.Chains, i))
		gs, gm := readAll(t, rundir.ChainDir(dir, cfg.Chains, i))
		if !bytes.Equal(ws, gs) || !bytes.Equal(wm, gm) {
			t.Errorf("chain %d: the task's samples or metrics differ from the one-process run's", i)
		}
	}
	a, _ := os.ReadFile(filepath.Join(ref, rundir.ConfigFile))
	b, _ := os.ReadFile(filepath.Join(dir, rundir.ConfigFile))
	if !bytes.Equal(a, b) {
		t.Errorf("run config differs:\n%s\n%s", a, b)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".config.json-*")); len(tmp) > 0 {
		t.Errorf("temporary config files left: %v", tmp)
	}
	st, err := rundir.RunStatus(dir)
	if err != nil || len(st) != 4 {
		t.Fatalf("RunStatus: %v %v", st, err)
	}
	for _, s := range st {
		if s.State != rundir.ChainFinished || s.Steps != cfg.Steps || s.Samples != 4 {
			t.Errorf("chain %d: %+v, want finished with 4 samples", s.Chain, s)
		}
	}
	rep, err := evaluate.Evaluate(runspec.DefaultSetup(), []string{dir}, "", data)
	if err != nil || rep.Ensemble.Samples != 16 || len(rep.Runs) != 4 || !(rep.RHat > 0) {
		t.Fatalf("Evaluate of the tasks' run: %v, %+v", err, rep)
	}
	// a chain directory named alone, its checkpoint gone, still evaluates
	// (every intact record counts)
	os.Remove(filepath.Join(rundir.ChainDir(dir, 4, 3), rundir.CheckpointFile))
	rep, err = evaluate.Evaluate(runspec.DefaultSetup(), []string{rundir.ChainDir(dir, 4, 3)}, "", data)
	if err != nil || rep.Ensemble.Samples != 4 {
		t.Fatalf("Evaluate of a chain without its checkpoint: %v, %+v", err, rep)
	}
	// in the run, that chain now counts as missing and the others are pooled
	rep, err = evaluate.Evaluate(runspec.DefaultSetup(), []string{dir}, "", data)
	if err != nil || rep.Ensemble.Samples != 12 || rep.Chains[2].State != rundir.ChainMissing {
		t.Fatalf("Evaluate with chain 3 missing: %v, %+v", err, rep)
	}
}

// TestOpenChainRefuses checks the refusals of OpenChain: settings that
// differ from the run's config (every differing field named), a chain out
// of range, a run of one chain, a single-chain run in the directory, and a
// checkpoint of other settings.
func TestOpenChainRefuses(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	cfg := smallConfig()
	cfg.Chains, cfg.Steps, cfg.BurnIn = 2, 30, 10
	dir := filepath.Join(t.TempDir(), "run")
	ch, err := OpenChain(dir, cfg, 2, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	ch.Close()
	other := cfg
	other.Seed, other.Batch, other.Workers = 9, 8, 1
	single := filepath.Join(t.TempDir(), "single")
	one := cfg
	one.Chains = 1
	r, err := New(single, one, true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cases := []struct {
		name string
		dir  string
		cfg  runspec.Config
		i    int
		want string
	}{
		{"other settings", dir, other, 1, "batch 16 (this task: 8), seed 1 (this task: 9), workers 2 (this task: 1)"},
		{"chain 0", dir, cfg, 0, "whose chains are 1..2"},
		{"chain 3", dir, cfg, 3, "whose chains are 1..2"},
		{"one chain", dir, one, 1, "at least 2 chains"},
		{"single-chain run there", single, cfg, 1, "holds a single-chain run"},
	}
	for _, c := range cases {
		_, err := OpenChain(c.dir, c.cfg, c.i, setupOf(data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := OpenChain(dir, other, 1, setupOf(data)); !errors.Is(err, ErrConfigMismatch) {
		t.Errorf("other settings: %v does not wrap ErrConfigMismatch", err)
	}
	// a chain directory whose checkpoint has other settings than the run's
	cd := rundir.ChainDir(dir, 2, 2)
	ck, err := rundir.ReadCheckpoint(filepath.Join(cd, rundir.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	ck.Config.LR *= 2
	if err := rundir.WriteCheckpoint(cd, ck); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenChain(dir, cfg, 2, setupOf(data)); err == nil || !strings.Contains(err.Error(), "lr 0.04 (this task: 0.02)") {
		t.Errorf("checkpoint of other settings: %v", err)
	}
}

func TestConfigDiff(t *testing.T) {
	t.Parallel()
	base := runspec.DefaultConfig()
	old := base
	old.XTolerance = 0 // a run saved before xtolerance existed
	withPrint := base
	withPrint.DataFingerprint = &runspec.Fingerprint{}
	cases := []struct {
		name      string
		want, got runspec.Config
		diff      string // "" for none
	}{
		{"same", base, base, ""},
		{"setting only in the task", old, base, "xtolerance unset (this task: 1e-8)"},
		{"setting only in the saved run", base, old, "xtolerance 1e-8 (this task: unset)"},
		{"identity the saved run predates", base, withPrint, ""},
	}
	for _, c := range cases {
		if got := strings.Join(configDiff(c.want, c.got), ", "); got != c.diff {
			t.Errorf("%s: %q, want %q", c.name, got, c.diff)
		}
	}
}
