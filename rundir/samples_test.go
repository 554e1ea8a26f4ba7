package rundir

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSamplesHeaderSizeBounded reads samples files whose header (its
// checksum intact) declares far more values per sample than the file
// holds: the readers find no whole record (what a crash mid-write of the
// first leaves) without allocating a record of the declared size.
func TestSamplesHeaderSizeBounded(t *testing.T) {
	const tail = 100 // bytes after the header
	for _, h := range []SampleHeader{
		{Arch: "huge", Params: 1 << 28, DType: "float64"}, // records of 2 GiB
		{Arch: "huge", Params: 1 << 28, DType: "float32"}, // of 1 GiB
	} {
		t.Run(h.DType, func(t *testing.T) {
			head, err := h.encode()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), SamplesFile)
			if err := os.WriteFile(path, append(head, make([]byte, tail)...), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				read func() (SampleScan, error)
			}{
				{"ScanSamples", func() (SampleScan, error) { return ScanSamples(path, false, nil) }},
				{"up to a checkpoint's count", func() (SampleScan, error) { return scanSamplesUpTo(path, false, 3, nil) }},
			} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				sc, err := tc.read()
				runtime.ReadMemStats(&after)
				if err != nil || sc.Intact != 0 || sc.Torn != 0 || sc.TornBytes != tail {
					t.Errorf("%s: %+v, %v; want no record and %d torn bytes", tc.name, sc, err, tail)
				}
				if n := after.TotalAlloc - before.TotalAlloc; n > 1<<24 {
					t.Errorf("%s allocated %d bytes for a file of %d", tc.name, n, len(head)+tail)
				}
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			w, err := OpenSamplesAt(path, 0)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<24 {
				t.Errorf("OpenSamplesAt allocated %d bytes", n)
			}
			if _, err := OpenSamplesAt(path, 1); err == nil {
				t.Error("reopened after a record the file does not hold")
			}
		})
	}
}
