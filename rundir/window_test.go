package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeChain writes a samples file of samples at steps 10, 20, ..., 10n
// into a new directory (each sample's one weight is its step) and returns
// the directory.
func writeChain(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	w, err := CreateSamples(filepath.Join(dir, SamplesFile), SampleHeader{Arch: "1", Params: 1, DType: "float64"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := w.Append(10*i, []float64{float64(10 * i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestScanChain(t *testing.T) {
	dir := writeChain(t, 6) // samples at steps 10..60
	for _, tc := range []struct {
		name       string
		samples    int // the checkpoint's count (-1: none, read the whole file)
		win        Window
		kept       []int // steps kept
		read       int
		errHas     string
		errWrapped error
	}{
		{"all", -1, Window{}, []int{10, 20, 30, 40, 50, 60}, 6, "", nil},
		{"from", -1, Window{From: 35}, []int{40, 50, 60}, 6, "", nil},
		{"to", -1, Window{To: 30}, []int{10, 20, 30}, 3, "", nil},
		{"both", -1, Window{From: 20, To: 45}, []int{20, 30, 40}, 4, "", nil},
		{"one step", -1, Window{From: 50, To: 50}, []int{50}, 5, "", nil},
		{"checkpointed count", 4, Window{}, []int{10, 20, 30, 40}, 4, "", nil},
		{"count and end", 4, Window{From: 15, To: 25}, []int{20}, 2, "", nil},
		{"after the last", -1, Window{From: 61}, nil, 6, "no samples at step 61 or later (6 samples, the last at step 60)", nil},
		{"past the count", 2, Window{From: 30}, nil, 2, "no samples at step 30 or later (2 samples, the last at step 20)", nil},
		{"between samples", -1, Window{From: 21, To: 29}, nil, 2, "no samples from step 21 to step 29 (2 samples before it; the first after it at step 30)", nil},
		{"before the first", -1, Window{To: 5}, nil, 0, "no samples from step 0 to step 5 (0 samples before it; the first after it at step 10)", nil},
		{"none checkpointed", 0, Window{}, nil, 0, "no samples yet", nil},
		{"inverted", -1, Window{From: 30, To: 20}, nil, 0, "step window 30 to 20", nil},
		{"negative", -1, Window{From: -1}, nil, 0, "step window -1 to 0", nil},
		{"thin 1", -1, Window{Thin: 1}, []int{10, 20, 30, 40, 50, 60}, 6, "", nil},
		{"thin 2", -1, Window{Thin: 2}, []int{10, 30, 50}, 6, "", nil},
		{"thin 4", -1, Window{Thin: 4}, []int{10, 50}, 6, "", nil},
		{"thin from the window's first", -1, Window{From: 25, Thin: 2}, []int{30, 50}, 6, "", nil},
		{"thin in the window", -1, Window{From: 20, To: 50, Thin: 3}, []int{20, 50}, 5, "", nil},
		{"thin past the count", 3, Window{Thin: 2}, []int{10, 30}, 3, "", nil},
		{"thin wider than the window", -1, Window{From: 40, Thin: 10}, []int{40}, 6, "", nil},
		{"negative thin", -1, Window{Thin: -2}, nil, 0, "thinning -2", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kept []int
			cs, err := ScanChain(ChainStatus{Dir: dir, Samples: tc.samples}, tc.win, false, func(step int, theta []float64) error {
				if theta[0] != float64(step) {
					t.Fatalf("step %d: weight %v", step, theta[0])
				}
				kept = append(kept, step)
				return nil
			})
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one saying %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(kept, tc.kept) || cs.Kept != len(tc.kept) || cs.Read != tc.read || cs.Dropped != 0 || cs.Skipped != 0 {
				t.Fatalf("kept %v (%+v), want %v, %d read", kept, cs, tc.kept, tc.read)
			}
			// the estimate of a progress report counts what the scan kept
			if n, err := CountInWindow(ChainStatus{Dir: dir, Samples: tc.samples}, tc.win); err != nil || n != len(tc.kept) {
				t.Fatalf("CountInWindow: %d, %v; the scan kept %d", n, err, len(tc.kept))
			}
		})
	}
}

// TestScanChainTorn checks a torn last record is counted as dropped when
// the checkpoint vouched for it or there is no checkpoint, and not when it
// is past the checkpoint (a chain still writing); and that keep's error
// comes back as it is.
func TestScanChainTorn(t *testing.T) {
	dir := writeChain(t, 4)
	path := filepath.Join(dir, SamplesFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-5], 0o644); err != nil { // the last record torn
		t.Fatal(err)
	}
	for _, tc := range []struct {
		samples, dropped, kept int
	}{{-1, 1, 3}, {4, 1, 3}, {3, 0, 3}, {2, 0, 2}} {
		cs, err := ScanChain(ChainStatus{Dir: dir, Samples: tc.samples}, Window{}, false, func(int, []float64) error { return nil })
		if err != nil || cs.Dropped != tc.dropped || cs.Kept != tc.kept {
			t.Fatalf("checkpointed %d: %+v, %v; want %d dropped, %d kept", tc.samples, cs, err, tc.dropped, tc.kept)
		}
	}
	stop := errors.New("stop")
	if _, err := ScanChain(ChainStatus{Dir: dir, Samples: -1}, Window{}, false, func(int, []float64) error { return stop }); err != stop {
		t.Fatalf("keep's error: got %v", err)
	}
}

// TestScanChainCorruptWithinTheCount checks a scan with skipCorrupt reads
// the records the checkpoint counted, corrupt ones included, and none past
// them (it read one more intact record per skipped one), and that a bad
// record the count ends on is corrupt, not torn.
func TestScanChainCorruptWithinTheCount(t *testing.T) {
	dir := writeChain(t, 6) // steps 10..60, records of 8 + 8 + 4 bytes
	editRecords(t, dir, func(rec []byte) {
		rec[20+10] ^= 0xff // record #2 (step 20)
	})
	for _, tc := range []struct {
		samples int
		kept    []int
		skipped int
	}{{4, []int{10, 30, 40}, 1}, {2, []int{10}, 1}, {-1, []int{10, 30, 40, 50, 60}, 1}} {
		var kept []int
		cs, err := ScanChain(ChainStatus{Dir: dir, Samples: tc.samples}, Window{}, true, func(step int, _ []float64) error {
			kept = append(kept, step)
			return nil
		})
		if err != nil || !slices.Equal(kept, tc.kept) || cs.Skipped != tc.skipped || cs.Dropped != 0 {
			t.Errorf("checkpointed %d: kept %v (%+v), %v; want %v, %d skipped", tc.samples, kept, cs, err, tc.kept, tc.skipped)
		}
	}
	_, err := ScanChain(ChainStatus{Dir: dir, Samples: 2}, Window{}, false, func(int, []float64) error { return nil })
	if !errors.Is(err, ErrCorruptSamples) || !strings.Contains(err.Error(), "record #2") || !strings.Contains(err.Error(), "none up to the 2 records counted") {
		t.Errorf("a corrupt record the count ends on: %v", err)
	}
}

// TestCountInWindowSkipsCorrupt checks CountInWindow counts what a scan
// with skipCorrupt keeps of a file with corrupt records: not the corrupt
// records, whatever their step fields say, nor in the thinning's phase.
func TestCountInWindowSkipsCorrupt(t *testing.T) {
	dir := writeChain(t, 6) // steps 10..60, records of 8 + 8 + 4 bytes
	editRecords(t, dir, func(rec []byte) {
		rec[20+10] ^= 0xff // record #2 (step 20): its weight
		rec[60] = 45       // record #4 (step 40): its step field, now 45
	})
	for _, tc := range []struct {
		name    string
		samples int
		win     Window
		want    int
	}{
		{"all", -1, Window{}, 4},
		{"from", -1, Window{From: 15}, 3},
		{"to", -1, Window{To: 45}, 2},
		{"thin 2", -1, Window{Thin: 2}, 2},
		{"thin 3 from", -1, Window{From: 15, Thin: 3}, 1},
		{"checkpointed count", 4, Window{}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := ScanChain(ChainStatus{Dir: dir, Samples: tc.samples}, tc.win, true, func(int, []float64) error { return nil })
			if err != nil || cs.Kept != tc.want {
				t.Fatalf("ScanChain kept %d (%+v), %v; want %d", cs.Kept, cs, err, tc.want)
			}
			if n, err := CountInWindow(ChainStatus{Dir: dir, Samples: tc.samples}, tc.win); err != nil || n != tc.want {
				t.Fatalf("CountInWindow: %d, %v; the scan kept %d", n, err, tc.want)
			}
		})
	}
}

// TestWindowPhrase checks Phrase for each kind of window.
func TestWindowPhrase(t *testing.T) {
	for _, tc := range []struct {
		w    Window
		want string
	}{
		{Window{}, ""},
		{Window{From: 20}, "taken at step 20 or later"},
		{Window{To: 40}, "taken at step 40 or earlier"},
		{Window{From: 20, To: 40}, "taken from step 20 to step 40"},
		{Window{From: 30, To: 30}, "taken from step 30 to step 30"},
		{Window{Thin: 1}, ""},
		{Window{Thin: 2}, "kept every 2nd of each chain"},
		{Window{From: 20, Thin: 3}, "taken at step 20 or later, every 3rd of each chain"},
		{Window{From: 20, To: 40, Thin: 11}, "taken from step 20 to step 40, every 11th of each chain"},
		{Window{To: 40, Thin: 21}, "taken at step 40 or earlier, every 21st of each chain"},
		{Window{Thin: 112}, "kept every 112th of each chain"},
	} {
		if got := tc.w.Phrase(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.w, got, tc.want)
		}
	}
}

// TestWindowJSON checks Window's JSON in a record that embeds it (as
// evaluate.Report and predictive.Info do): from_step and to_step in the
// Window's place among the record's keys (and thin), each omitted when 0, and read
// back into the Window.
func TestWindowJSON(t *testing.T) {
	type record struct {
		Before int `json:"before"`
		Window
		After int `json:"after"`
	}
	for _, tc := range []struct {
		w    Window
		want string
	}{
		{Window{}, `{"before":1,"after":2}`},
		{Window{From: 20}, `{"before":1,"from_step":20,"after":2}`},
		{Window{To: 40}, `{"before":1,"to_step":40,"after":2}`},
		{Window{From: 20, To: 40}, `{"before":1,"from_step":20,"to_step":40,"after":2}`},
		{Window{From: 20, Thin: 5}, `{"before":1,"from_step":20,"thin":5,"after":2}`},
	} {
		b, err := json.Marshal(record{Before: 1, Window: tc.w, After: 2})
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: %s (%v), want %s", tc.w, b, err, tc.want)
		}
		var back record
		if err := json.Unmarshal(b, &back); err != nil || back.Window != tc.w {
			t.Errorf("%s read back as %+v (%v), want %+v", b, back.Window, err, tc.w)
		}
	}
}

// editRecords rewrites the samples file of writeChain's chain in dir after
// edit changes the bytes of its records (20 bytes each, after the header).
func editRecords(t *testing.T, dir string, edit func(rec []byte)) {
	t.Helper()
	path := filepath.Join(dir, SamplesFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, hlen, err := ReadSampleHeader(bytes.NewReader(b))
	if err != nil || h.Params != 1 {
		t.Fatalf("header of %s: %+v, %v", path, h, err)
	}
	edit(b[hlen:])
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
