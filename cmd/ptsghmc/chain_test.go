package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/cluster"

	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestMain lets a test run the command in a child process (the test binary
// itself, with PTSGHMC_TEST_MAIN=1), so it can be sent real signals.
func TestMain(m *testing.M) {
	if os.Getenv("PTSGHMC_TEST_MAIN") == "1" {
		os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// chainFiles are the files of a chain directory that must be identical
// however the chain was run.
var chainFiles = []string{rundir.SamplesFile, rundir.MetricsFile, rundir.ConfigFile}

func sameChains(t *testing.T, want, got string, k int, chains ...int) {
	t.Helper()
	for _, i := range chains {
		for _, f := range chainFiles {
			a, err := os.ReadFile(filepath.Join(rundir.ChainDir(want, k, i), f))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(rundir.ChainDir(got, k, i), f))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("chain %d: %s of the task differs from the one-process run's", i, f)
			}
		}
	}
}

// TestChainTasks runs the 3 chains of a run as 3 separate tasks (by number,
// by SLURM_ARRAY_TASK_ID and by JOB_COMPLETION_INDEX) into one directory
// and checks each chain's samples, metrics and config equal those of the
// same run in one process byte for byte; that the run's config is shared;
// that a task with other settings is refused naming them; that a finished
// chain's task reruns as a no-op; and that eval pools the tasks' chains.
func TestChainTasks(t *testing.T) {
	data := writeData(t)
	common := []string{"--sampler", "ptsghmc", "--replicas", "2", "--data", data, "--arch", "16-8-10", "--validation", "50", "--batch", "32",
		"--steps", "120", "--burnin", "40", "--thin", "10", "--log-every", "20", "--checkpoint-every", "30", "--exchange", "5", "--chains", "3", "--quiet"}
	one := filepath.Join(t.TempDir(), "one")
	if _, stderr, code := run(t, append([]string{"train", "--out", one}, common...)...); code != 0 {
		t.Fatalf("one process: %s", stderr)
	}
	tasks := filepath.Join(t.TempDir(), "tasks")
	// chain 3 first: the order tasks start in does not matter
	t.Setenv(cluster.EnvSlurmTask, "3")
	if _, stderr, code := run(t, append([]string{"train", "--out", tasks, "--chain", "env"}, common...)...); code != 0 || !strings.Contains(stderr, "chain 3 of 3 (SLURM_ARRAY_TASK_ID=3): starting") {
		t.Fatalf("chain 3 from Slurm: code %d, %s", code, stderr)
	}
	t.Setenv(cluster.EnvSlurmTask, "")
	if _, stderr, code := run(t, append([]string{"train", "--out", tasks, "--chain", "1"}, common...)...); code != 0 {
		t.Fatalf("chain 1: %s", stderr)
	}
	t.Setenv(cluster.EnvK8sIndex, "1")
	if _, stderr, code := run(t, append([]string{"train", "--out", tasks, "--chain", "env"}, common...)...); code != 0 || !strings.Contains(stderr, "JOB_COMPLETION_INDEX=1") {
		t.Fatalf("chain 2 from Kubernetes: code %d, %s", code, stderr)
	}
	sameChains(t, one, tasks, 3, 1, 2, 3)
	a, _ := os.ReadFile(filepath.Join(one, rundir.ConfigFile))
	b, _ := os.ReadFile(filepath.Join(tasks, rundir.ConfigFile))
	if !bytes.Equal(a, b) {
		t.Errorf("the run's config.json differs:\n%s\n%s", a, b)
	}

	// a finished chain reruns as a no-op
	out, stderr, code := run(t, append([]string{"train", "--out", tasks, "--chain", "2"}, common...)...)
	if code != 0 || !strings.Contains(stderr, "resuming from its checkpoint at step 120") || !strings.Contains(out, "already finished") {
		t.Fatalf("rerun of a finished chain: code %d\n%s\n%s", code, out, stderr)
	}
	sameChains(t, one, tasks, 3, 2)

	// refusals
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--chain", "2", "--seed", "7", "--lr", "0.01"}, "lr 0.02 (this task: 0.01), seed 1 (this task: 7)"},
		{[]string{"--chain", "4"}, "chains are 1..3"},
		{[]string{"--chain", "x"}, "expected a chain number"},
		{[]string{"--chain", "2", "--overwrite"}, "drop --resume and --overwrite"},
		{[]string{"--chain", "env"}, "neither SLURM_ARRAY_TASK_ID"},
		{[]string{"--chain", "1", "--time-limit", "1m"}, "--time-limit ends a run"},
	}
	t.Setenv(cluster.EnvK8sIndex, "")
	for _, c := range bad {
		_, stderr, code := run(t, append(append([]string{"train", "--out", tasks}, common...), c.args...)...)
		if code != 1 && code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: code %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
	sameChains(t, one, tasks, 3, 1, 2, 3) // the refused tasks wrote nothing

	out, stderr, code = run(t, "eval", "--run", tasks)
	if code != 0 || !strings.Contains(out, "split R-hat") || !strings.Contains(out, "chains: 3 finished, 0 running, 0 missing") {
		t.Fatalf("eval of the tasks' run: code %d\n%s\n%s", code, out, stderr)
	}
}

// TestChainSIGTERM runs chain 2 of a 2-chain run in a child process, sends
// it SIGTERM mid-run, and checks that it checkpoints and exits with status
// 75, that the same command line resumes it, and that its samples and
// metrics then equal the uninterrupted one-process run's byte for byte.
func TestChainSIGTERM(t *testing.T) {
	data := writeData(t)
	const steps = 20000
	common := []string{"--sampler", "sgnht", "--data", data, "--arch", "16-32-10", "--validation", "100", "--batch", "32",
		"--steps", "20000", "--burnin", "500", "--thin", "50", "--log-every", "10", "--checkpoint-every", "1000", "--chains", "2", "--quiet"}
	one := filepath.Join(t.TempDir(), "one")
	if _, stderr, code := run(t, append([]string{"train", "--out", one}, common...)...); code != 0 {
		t.Fatalf("one process: %s", stderr)
	}
	tasks := filepath.Join(t.TempDir(), "tasks")
	args := append([]string{"train", "--out", tasks, "--chain", "2"}, common...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PTSGHMC_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// wait for some metrics lines (the signal handler is in place by then)
	metrics := filepath.Join(rundir.ChainDir(tasks, 2, 2), rundir.MetricsFile)
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(metrics)
		if bytes.Count(b, []byte("\n")) >= 150 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no metrics after 60 s: %s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitRequeue {
		t.Fatalf("after SIGTERM: exit status %d (%v), want %d\n%s", code, err, exitRequeue, stderr.String())
	}
	st, err := rundir.RunStatus(tasks)
	if err != nil {
		t.Fatal(err)
	}
	at := st[1].Steps
	if st[1].State != rundir.ChainRunning || at <= 0 || at >= steps || st[0].State != rundir.ChainMissing {
		t.Fatalf("after SIGTERM: %+v, want chain 2 checkpointed mid-run and chain 1 missing", st)
	}
	if at%1000 == 0 {
		t.Logf("SIGTERM landed on a periodic checkpoint step %d", at)
	}
	// eval pools what is there while a chain is missing and one stopped,
	// and reads no record past the checkpoint, such as one being written
	cd := rundir.ChainDir(tasks, 2, 2)
	h, _, err := rundir.ReadSamples(filepath.Join(cd, rundir.SamplesFile), func(int, []float64) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := os.ReadFile(filepath.Join(cd, rundir.SamplesFile))
	last := sb[len(sb)-(8+4*h.Params+4):] // a whole record past the checkpoint, then half of one
	for _, f := range []string{rundir.SamplesFile, rundir.MetricsFile} {
		fh, err := os.OpenFile(filepath.Join(cd, f), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if f == rundir.SamplesFile {
			fh.Write(last)
			fh.Write(last[:100])
		} else {
			fh.Write([]byte(`{"step": 99999, "u": 1`)) // half a line, as a running writer leaves it
		}
		fh.Close()
	}
	out, serr, code := run(t, "eval", "--run", tasks, "--json")
	if code != 0 {
		t.Fatalf("eval while running: %s", serr)
	}
	var rep evaluate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Ensemble.Samples != st[1].Samples || rep.Dropped != 0 || len(rep.Chains) != 2 || rep.Chains[1].State != rundir.ChainRunning {
		t.Fatalf("eval while running pooled %v (%d samples, %d dropped), chains %+v; want chain 2's %d checkpointed samples",
			rep.Runs, rep.Ensemble.Samples, rep.Dropped, rep.Chains, st[1].Samples)
	}
	// the same command line resumes it
	out, serr, code = run(t, args...)
	if code != 0 || !strings.Contains(serr, "resuming from its checkpoint at step") {
		t.Fatalf("requeued task: code %d\n%s\n%s", code, out, serr)
	}
	t.Logf("SIGTERM at step %d of %d; resumed", at, steps)
	sameChains(t, one, tasks, 2, 2)
}

// TestSlurmCommand writes the array job script of a 2-chain run, checks its
// Slurm directives, and runs its train command as array tasks 1 and 2 would
// (SLURM_ARRAY_TASK_ID set): the chains equal the one-process run's.
func TestSlurmCommand(t *testing.T) {
	data := writeData(t)
	settings := []string{"--data", data, "--arch", "16-8-10", "--validation", "50", "--batch", "32",
		"--steps", "100", "--burnin", "40", "--thin", "10", "--log-every", "20", "--chains", "2"}
	rd := filepath.Join(t.TempDir(), "run dir") // a space, to be quoted
	out, stderr, code := run(t, append([]string{"slurm", "--out", rd, "--time", "0:30:00", "--mem", "1G", "--cpus-per-task", "2", "--partition", "short", "--binary", "/opt/ptsghmc"}, settings...)...)
	if code != 0 {
		t.Fatalf("slurm: %s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(rd, "job.sbatch"))
	if err != nil {
		t.Fatalf("%v (stdout %s)", err, out)
	}
	script := string(b)
	for _, want := range []string{"#SBATCH --array=1-2\n", "#SBATCH --requeue\n", "#SBATCH --signal=TERM@120\n", "#SBATCH --cpus-per-task=2\n",
		"#SBATCH --mem=1G\n", "#SBATCH --time=0:30:00\n", "#SBATCH --partition=short\n", "#SBATCH --open-mode=append\n",
		"#SBATCH --output=" + filepath.Join(rd, "logs", "chain-%a.out") + "\n", `scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"`} {
		if !strings.Contains(script, want) {
			t.Errorf("script has no %q:\n%s", want, script)
		}
	}
	if st, err := os.Stat(filepath.Join(rd, "logs")); err != nil || !st.IsDir() {
		t.Errorf("no log directory: %v", err)
	}
	var line string
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(l, "srun ") {
			line = l
		}
	}
	_, cmdline, ok := strings.Cut(line, "/opt/ptsghmc ")
	if !ok {
		t.Fatalf("no srun line running /opt/ptsghmc:\n%s", script)
	}
	args := splitShell(t, cmdline)
	for i := 1; i <= 2; i++ {
		t.Setenv(cluster.EnvSlurmTask, string(rune('0'+i)))
		if _, stderr, code := run(t, args...); code != 0 {
			t.Fatalf("task %d running %v: %s", i, args, stderr)
		}
	}
	one := filepath.Join(t.TempDir(), "one")
	if _, stderr, code := run(t, append([]string{"train", "--out", one, "--quiet"}, settings...)...); code != 0 {
		t.Fatal(stderr)
	}
	sameChains(t, one, rd, 2, 1, 2)
}

// splitShell splits a command line of plain words and single-quoted ones.
func splitShell(t *testing.T, s string) []string {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == ' ':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\' || c == '"' || c == '$':
			t.Fatalf("unexpected shell syntax in %q", s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}
