package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// TimingFile is the file in a run directory where train records the
// wall-clock its sessions took. It is kept apart from config.json and
// metrics.jsonl, which hold no times, so that a resumed or re-run run
// writes those byte for byte again.
const TimingFile = "timing.json"

// Timing is the content of TimingFile: the wall-clock of every train
// session that stepped the run (a first run, each resume), added up.
type Timing struct {
	WallSeconds float64 `json:"wall_seconds"` // wall-clock of all sessions
	Sessions    int     `json:"sessions"`     // train sessions counted
	Steps       int     `json:"steps"`        // steps reached at the end of the last one
}

// ReadTiming reads dir's TimingFile; ok is false when it has none (runs
// older than it, or whose train was killed before it wrote one).
func ReadTiming(dir string) (t Timing, ok bool, err error) {
	path := filepath.Join(dir, TimingFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("timing: %w", err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, false, fmt.Errorf("timing %s: %w", path, err)
	}
	return t, true, nil
}

// RecordTiming adds one train session of wall-clock elapsed, ending at
// step steps, to dir's TimingFile (written to a temporary file, synced and
// renamed).
func RecordTiming(dir string, elapsed time.Duration, steps int) error {
	t, _, err := ReadTiming(dir)
	if err != nil {
		return err
	}
	t.WallSeconds += elapsed.Seconds()
	t.Sessions++
	t.Steps = steps
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("timing: %w", err)
	}
	if err := replaceFile(filepath.Join(dir, TimingFile), append(b, '\n')); err != nil {
		return fmt.Errorf("timing: %w", err)
	}
	return nil
}
