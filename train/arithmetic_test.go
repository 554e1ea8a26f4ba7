package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// rewriteArithmetic makes the run in dir look as if it had been computed
// with arithmetic a (as on another machine's OpenBLAS kernel).
func rewriteArithmetic(t *testing.T, dir, a string) {
	t.Helper()
	c, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	c.Config.Arithmetic = a
	if err := rundir.WriteCheckpoint(dir, c); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteConfig(dir, c.Config); err != nil {
		t.Fatal(err)
	}
}

// TestResumeRefusesOtherArithmetic: a run recorded on other arithmetic than
// the process would continue it with is refused, naming both; allowed, it
// continues on the run's mode (native here), records the change and its
// step, and eval's MixedArithmetic names it.
func TestResumeRefusesOtherArithmetic(t *testing.T) {
	cfg := smallConfig()
	cfg.Steps = 50
	data := smallData(t)
	r, dir := trainRef(t, cfg, setupOf(data))
	if got := r.Cfg.Arithmetic; got != "pinned-v1" {
		t.Fatalf("a new run records arithmetic %q, want pinned-v1", got)
	}
	r.Close()
	const other = "native openblas 0.3.21 Zen x7"
	rewriteArithmetic(t, dir, other)
	s := setupOf(data)
	_, err := ResumeChains(dir, 80, s)
	// A native run continues natively (never silently pinned): on this
	// machine's kernel, which is not Zen x7.
	if err == nil || !strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), `continue with "native `) || !strings.Contains(err.Error(), "--allow-arithmetic-change") {
		t.Fatalf("resume on other arithmetic: err = %v, want a refusal naming both and the flag", err)
	}
	if c, err := rundir.ReadRunConfig(dir); err != nil || c.Arithmetic != other || len(c.ArithmeticChanges) != 0 {
		t.Fatalf("a refused resume changed the run's config: %+v, %v", c.Arithmetic, err)
	}
	s.AllowArithmeticChange = true
	ch, err := ResumeChains(dir, 80, s)
	if err != nil {
		t.Fatalf("resume allowed: %v", err)
	}
	if err := ch.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ch.Close()
	c, err := rundir.ReadRunConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := runspec.ArithmeticChange{Step: 50, From: other, To: c.Arithmetic}
	if !strings.HasPrefix(c.Arithmetic, "native ") || c.Arithmetic == other || len(c.ArithmeticChanges) != 1 || c.ArithmeticChanges[0] != want {
		t.Fatalf("after an allowed change: arithmetic %q, changes %+v; want this machine's native, [%+v]", c.Arithmetic, c.ArithmeticChanges, want)
	}
	// eval's view: one chain computed with two arithmetics.
	mixed, err := rundir.MixedArithmetic([]string{dir})
	if err != nil || len(mixed) != 1 || !strings.Contains(mixed[0], other+" before step 50") {
		t.Fatalf("MixedArithmetic = %q, %v", mixed, err)
	}
	// Resuming a finished run again on the same arithmetic is no change.
	ch, err = ResumeChains(dir, 0, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	ch.Close()
}
