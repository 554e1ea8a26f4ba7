package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ptsghmc/ptsghmc/tempering"
)

// States of a chain in ChainStatus.
const (
	ChainFinished = "finished" // its last checkpoint is at its last step
	ChainRunning  = "running"  // its last checkpoint is before its last step: running, queued or stopped
	ChainMissing  = "missing"  // no checkpoint yet: not started, or started and not yet checkpointed
)

// ChainStatus is the state of one chain of a run as its files show it. Its
// figures are those of its last checkpoint, which vouches for the samples
// and metrics before it: everything written before a checkpoint was synced
// before the checkpoint was (atomically) written.
type ChainStatus struct {
	Chain   int    `json:"chain"` // 1-based
	Dir     string `json:"dir"`
	State   string `json:"state"`          // ChainFinished, ChainRunning or ChainMissing
	Steps   int    `json:"steps"`          // steps at the last checkpoint
	Target  int    `json:"target"`         // the chain's configured steps
	Samples int    `json:"samples"`        // kept samples at the last checkpoint
	Note    string `json:"note,omitempty"` // why a chain with files counts as missing

	MetricsBytes int64 `json:"-"` // bytes of metrics.jsonl at the last checkpoint
	// Stats are the last checkpoint's ladder and statistics (no weights),
	// which the tempering figures and the health verdict are computed from;
	// nil without a checkpoint.
	Stats *tempering.PTState `json:"-"`
}

// RunStatus returns the state of every chain of the run in dir: chains
// 1..K of a run of K chains, whether or not their directories exist yet
// (array tasks start at different times), or the one chain of any other
// run directory.
func RunStatus(dir string) ([]ChainStatus, error) {
	cfg, err := ReadRunConfig(dir)
	if err != nil {
		return nil, err
	}
	if cfg.Chains <= 1 || cfg.Chain != 0 {
		return []ChainStatus{chainStatus(dir, max(cfg.Chain, 1), cfg.Steps)}, nil
	}
	var out []ChainStatus
	for i := 1; i <= cfg.Chains; i++ {
		out = append(out, chainStatus(ChainDir(dir, cfg.Chains, i), i, cfg.Steps))
	}
	return out, nil
}

func chainStatus(dir string, i, target int) ChainStatus {
	s := ChainStatus{Chain: i, Dir: dir, State: ChainMissing, Target: target}
	ck, err := ReadCheckpoint(filepath.Join(dir, CheckpointFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.Note = err.Error()
		}
		return s
	}
	s.Steps, s.Target, s.Samples, s.MetricsBytes = ck.Steps, ck.Config.Steps, ck.Samples, ck.Metrics
	s.Stats = ck.Figures()
	s.State = ChainRunning
	if ck.Steps >= ck.Config.Steps {
		s.State = ChainFinished
	}
	return s
}

// PoolDirs expands the run directories given to eval into the chain
// directories to pool, with their statuses: a run of several chains
// becomes those of its chains that have samples at their last checkpoint
// (the others are reported, not pooled); any other directory stays (read
// up to its checkpoint's counts, or whole without a usable checkpoint, when
// Samples is -1).
func PoolDirs(dirs []string) ([]ChainStatus, []ChainStatus, error) {
	var pool, all []ChainStatus
	for _, d := range dirs {
		st, err := RunStatus(d)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, st...)
		if len(st) == 1 && st[0].Dir == d {
			s := st[0]
			if s.State == ChainMissing { // no usable checkpoint: every intact record counts
				s.Samples, s.MetricsBytes = -1, -1
			}
			pool = append(pool, s)
			continue
		}
		n := len(pool)
		for _, s := range st {
			if s.State != ChainMissing && s.Samples > 0 {
				pool = append(pool, s)
			}
		}
		if len(pool) == n {
			return nil, nil, fmt.Errorf("run %s: none of its %d chains has samples at its last checkpoint yet (burn-in not over?)", d, len(st))
		}
	}
	return pool, all, nil
}

// ReadMetricsUpTo reads the first n bytes of a run's metrics.jsonl (all of
// it when n < 0): the lines its checkpoint vouches for.
func ReadMetricsUpTo(dir string, n int64) ([]MetricsLine, error) {
	if n < 0 {
		return ReadMetrics(dir)
	}
	path := filepath.Join(dir, MetricsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	return scanMetrics(path, io.LimitReader(f, n))
}

// ChainsReport describes chains as eval and export print them: a line of
// how many are finished, running and missing, then one line per chain and
// a blank line; "" for a single finished chain (nothing to say).
func ChainsReport(chains []ChainStatus) string {
	if len(chains) == 1 && chains[0].State == ChainFinished {
		return ""
	}
	var b strings.Builder
	count := map[string]int{}
	for _, c := range chains {
		count[c.State]++
	}
	fmt.Fprintf(&b, "chains: %d finished, %d running, %d missing (pooled: the samples each chain's last checkpoint vouches for)\n",
		count[ChainFinished], count[ChainRunning], count[ChainMissing])
	for _, c := range chains {
		switch c.State {
		case ChainMissing:
			note := "no checkpoint yet"
			if c.Note != "" {
				note = c.Note
			}
			fmt.Fprintf(&b, "  chain %d  %-8s  %s (%s)\n", c.Chain, c.State, c.Dir, note)
		default:
			fmt.Fprintf(&b, "  chain %d  %-8s  step %d of %d, %d samples  %s\n", c.Chain, c.State, c.Steps, c.Target, c.Samples, c.Dir)
		}
	}
	b.WriteString("\n")
	return b.String()
}
