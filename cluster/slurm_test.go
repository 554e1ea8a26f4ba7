package cluster

import (
	"fmt"
	"strings"
	"testing"
)

// TestChainIndex checks the chain a --chain value names: a number, or
// "env", from Slurm's array task id (as is) or Kubernetes' completion
// index (plus one), and the refusals.
func TestChainIndex(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		arg       string
		env       map[string]string
		chain     int
		from, err string
	}{
		{"2", nil, 2, "--chain 2", ""},
		{"env", map[string]string{EnvSlurmTask: "3"}, 3, "SLURM_ARRAY_TASK_ID=3", ""},
		{"env", map[string]string{EnvK8sIndex: "0"}, 1, "JOB_COMPLETION_INDEX=0", ""},
		{"env", map[string]string{EnvSlurmTask: " 1 ", EnvK8sIndex: "2"}, 1, "SLURM_ARRAY_TASK_ID=1", ""},
		{"4", nil, 0, "", "chains are 1..3 (--chains 3)"},
		{"x", nil, 0, "", "expected a chain number 1..3 or env"},
		{"env", map[string]string{EnvK8sIndex: "3"}, 0, "", "the Indexed Job needs completions: 3"},
		{"env", map[string]string{EnvSlurmTask: "a"}, 0, "", `SLURM_ARRAY_TASK_ID="a" is not a number`},
		{"env", nil, 0, "", "neither SLURM_ARRAY_TASK_ID"},
	} {
		i, from, err := ChainIndex(c.arg, 3, func(k string) string { return c.env[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %v: %v, want an error with %q", c.arg, c.env, err, c.err)
			}
			continue
		}
		if err != nil || i != c.chain || from != c.from {
			t.Errorf("%s %v: chain %d from %q (%v), want %d from %q", c.arg, c.env, i, from, err, c.chain, c.from)
		}
	}
}

// TestScript checks the array job script's lines: the array (with and
// without a cap on parallel tasks), the resources, the optional
// partition, the quoted train command and the requeue on ExitRequeue.
func TestScript(t *testing.T) {
	t.Parallel()
	j := SlurmJob{Binary: "/opt/my bin/ptsghmc", RunDir: "/nfs/run", WorkDir: "/home/me", Chains: 4, TrainArgs: []string{"--lr", "0.01", "--arch", "it's"},
		CPUs: 2, Mem: "1G", Time: "0:30:00", SignalLead: 90, Partition: "short", Name: "ptsghmc-run", Command: "ptsghmc slurm --chains 4"}
	s := j.Script()
	for _, want := range []string{
		"#!/bin/bash\n",
		"#SBATCH --array=1-4\n",
		"#SBATCH --cpus-per-task=2\n#SBATCH --mem=1G\n#SBATCH --time=0:30:00\n#SBATCH --partition=short\n",
		"#SBATCH --output=/nfs/run/logs/chain-%a.out\n",
		"#SBATCH --signal=TERM@90\n",
		`srun --ntasks=1 --cpus-per-task=2 '/opt/my bin/ptsghmc' train --out /nfs/run --chains 4 --chain env --lr 0.01 --arch 'it'\''s'` + "\n",
		fmt.Sprintf("if [ \"$rc\" -eq %d ]; then\n", ExitRequeue),
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "--account") {
		t.Error("an account line without an account")
	}
	j.MaxParallel = 2
	if s := j.Script(); !strings.Contains(s, "#SBATCH --array=1-4%2\n") {
		t.Errorf("capped array:\n%s", s)
	}
}

// ExampleShellQuote quotes what a shell would split or expand.
func ExampleShellQuote() {
	fmt.Println(ShellQuote("runs/a-1"), ShellQuote("two words"), ShellQuote("it's"), ShellQuote(""))
	// Output: runs/a-1 'two words' 'it'\''s' ''
}
