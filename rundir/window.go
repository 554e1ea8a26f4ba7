package rundir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Window is the steps whose samples a reader keeps: From to To, both
// included. From 0 keeps every sample up to To, To 0 every sample from
// From on. A longer burn-in chosen after the run is a later From (eval
// --from-step); a shorter run read from a longer one is an earlier To
// (eval --to-step). Thin above 1 keeps every Thin-th of a chain's samples
// in the window, starting with its first (eval --thin): a posterior of
// fewer samples, scored that many times faster. Its JSON is from_step,
// to_step and thin, each omitted when 0: the keys of eval --json and
// serve's /v1/model, which embed it.
type Window struct {
	From int `json:"from_step,omitempty"`
	To   int `json:"to_step,omitempty"`
	Thin int `json:"thin,omitempty"`
}

// Check returns an error when no step is in w: a negative bound, or an end
// before the start; or when its thinning is negative.
func (w Window) Check() error {
	if w.From < 0 || w.To < 0 || (w.To > 0 && w.To < w.From) {
		return fmt.Errorf("step window %d to %d: want 0 <= from and either to = 0 (no end) or to >= from", w.From, w.To)
	}
	if w.Thin < 0 {
		return fmt.Errorf("thinning %d: want 0 or 1 (every sample) or k > 1 (every k-th sample of a chain)", w.Thin)
	}
	return nil
}

// keeps reports whether the i-th sample of a chain in w (counting from 0)
// is kept by w's thinning.
func (w Window) keeps(i int) bool {
	return w.Thin <= 1 || i%w.Thin == 0
}

// Phrase describes the samples w keeps: "taken from step 20 to step 40",
// "taken at step 20 or later" or "taken at step 40 or earlier", followed
// by ", every 7th of each chain" when w thins (alone: "kept every 7th of
// each chain"); "" for the zero Window (every sample).
func (w Window) Phrase() string {
	steps := ""
	switch {
	case w.From > 0 && w.To > 0:
		steps = fmt.Sprintf("taken from step %d to step %d", w.From, w.To)
	case w.From > 0:
		steps = fmt.Sprintf("taken at step %d or later", w.From)
	case w.To > 0:
		steps = fmt.Sprintf("taken at step %d or earlier", w.To)
	}
	if w.Thin <= 1 {
		return steps
	}
	every := "every " + ordinal(w.Thin) + " of each chain"
	if steps == "" {
		return "kept " + every
	}
	return steps + ", " + every
}

// ordinal returns n's English ordinal: 2nd, 3rd, 4th, 11th, 21st.
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// ChainScan is what ScanChain read of one chain's samples file.
type ChainScan struct {
	// Read counts the checkpointed samples read, up to the first past the
	// window's end; Kept those of them in the window that its thinning
	// keeps.
	Read, Kept int
	// Dropped counts torn records at the end of the file (a crash
	// mid-write) that the checkpoint had counted, or all of them when the
	// chain has no checkpoint; Skipped the corrupt records skipped inside
	// it (skipCorrupt).
	Dropped, Skipped int
}

// errStop ends a scan at the checkpointed count or past the window.
var errStop = errors.New("end of the samples read")

// ScanChain calls keep with each sample of chain s taken in w (every
// w.Thin-th of them), in the file's order. It reads only what the chain's last checkpoint counted
// (s.Samples; a negative count reads the whole file), so a chain train is
// still writing is read up to its checkpoint, and it stops at the first
// sample past w.To. A chain with no sample in w is an error that says
// which samples it has; a corrupt record is an error wrapping
// ErrCorruptSamples unless skipCorrupt. Errors from keep are returned as
// they are.
func ScanChain(s ChainStatus, w Window, skipCorrupt bool, keep func(step int, theta []float64) error) (ChainScan, error) {
	var cs ChainScan
	if err := w.Check(); err != nil {
		return cs, err
	}
	last, past, in := -1, -1, 0
	sc, err := scanSamplesUpTo(filepath.Join(s.Dir, SamplesFile), skipCorrupt, s.Samples, func(step int, theta []float64) error {
		if w.To > 0 && step > w.To {
			past = step
			return errStop
		}
		cs.Read++
		last = step
		if step < w.From {
			return nil
		}
		in++
		if !w.keeps(in - 1) {
			return nil
		}
		cs.Kept++
		return keep(step, theta)
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	if err != nil {
		return cs, err
	}
	// The scan stopped at the checkpointed count: torn records it met
	// were before it (or the run is read whole), so they are lost; those
	// past it are being written (a running chain) and were not read.
	cs.Dropped = sc.Torn + min(sc.TornBytes, 1)
	cs.Skipped = len(sc.Corrupt)
	switch {
	case cs.Kept > 0:
		return cs, nil
	case past >= 0:
		return cs, fmt.Errorf("run %s has no samples from step %d to step %d (%d samples before it; the first after it at step %d)", s.Dir, w.From, w.To, cs.Read, past)
	case cs.Read == 0:
		return cs, fmt.Errorf("run %s has no samples yet (burn-in not over?)", s.Dir)
	default:
		return cs, fmt.Errorf("run %s has no samples at step %d or later (%d samples, the last at step %d)", s.Dir, w.From, cs.Read, last)
	}
}

// SampleSteps returns the steps of the first limit records of the samples
// file at path (limit < 0: of every whole record), read from their step
// fields alone without verifying the records' checksums or reading their
// values: an estimate of what a scan will return (a progress report's
// total), not a substitute for ScanSamples.
func SampleSteps(path string, limit int) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	defer f.Close()
	h, hlen, err := ReadSampleHeader(f)
	if err != nil {
		return nil, fmt.Errorf("samples %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("samples %s: %w", path, err)
	}
	rs := int64(h.recordSize())
	n := (st.Size() - int64(hlen)) / rs
	if limit >= 0 {
		n = min(n, int64(limit))
	}
	steps := make([]int, 0, max(n, 0))
	var buf [8]byte
	for i := int64(0); i < n; i++ {
		if _, err := f.ReadAt(buf[:], int64(hlen)+i*rs); err != nil {
			return nil, fmt.Errorf("samples %s: read record %d: %w", path, i, err)
		}
		steps = append(steps, int(binary.LittleEndian.Uint64(buf[:])))
	}
	return steps, nil
}

// CountInWindow returns how many samples ScanChain will keep of chain s
// in w when it skips corrupt records: the intact records its last
// checkpoint counted whose step is in w, up to the first past w's end,
// thinned as w says. It reads the records whole to verify their
// checksums (a corrupt record's step field is not to be trusted, and a
// skipped one shifts the thinning), so it costs a pass over the file.
func CountInWindow(s ChainStatus, w Window) (int, error) {
	in, n := 0, 0
	_, err := scanSamplesUpTo(filepath.Join(s.Dir, SamplesFile), true, s.Samples, func(step int, _ []float64) error {
		if w.To > 0 && step > w.To {
			return errStop
		}
		if step < w.From {
			return nil
		}
		if w.keeps(in) {
			n++
		}
		in++
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, err
	}
	return n, nil
}
