package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSamples reads mutated samples files: every input is read or refused
// with an error naming the file, never a panic, and the counts agree.
func FuzzSamples(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed")
	for _, h := range []SampleHeader{{Arch: "2-1", Params: 3, DType: "float32"}, {Arch: "3-2", Params: 2, DType: "float64"}} {
		w, err := CreateSamples(path, h)
		if err != nil {
			f.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			w.Append(10*i, make([]float64, h.Params))
		}
		w.Close()
		b, _ := os.ReadFile(path)
		f.Add(b, 2)
		f.Add(b[:len(b)-3], 4)
		c := append([]byte(nil), b...)
		c[len(c)/2] ^= 0x10
		f.Add(c, 1)
	}
	f.Fuzz(func(t *testing.T, data []byte, count int) {
		path := filepath.Join(t.TempDir(), "samples")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, skip := range []bool{false, true} {
			n := 0
			sc, err := ScanSamples(path, skip, func(int, []float64) error { n++; return nil })
			if err != nil {
				if !strings.Contains(err.Error(), path) {
					t.Fatalf("error does not name the file: %v", err)
				}
				continue
			}
			if n != sc.Intact {
				t.Fatalf("%d samples passed, scan says %d intact", n, sc.Intact)
			}
			rs := sc.Header.recordSize()
			if sc.TornBytes >= rs {
				t.Fatalf("%d torn bytes, records are %d", sc.TornBytes, rs)
			}
		}
		if count < 0 || count > 1<<20 {
			return
		}
		w, err := OpenSamplesAt(path, count)
		if err != nil {
			return
		}
		defer w.Close()
		if w.Count != count {
			t.Fatalf("reopened at %d, asked %d", w.Count, count)
		}
		if err := w.Append(1, make([]float64, w.Header().Params)); err != nil {
			t.Fatal(err)
		}
		sc, err := ScanSamples(path, false, nil)
		if err != nil || sc.Intact != count+1 || sc.Dropped() {
			t.Fatalf("after reopening at %d and appending: %+v, %v", count, sc, err)
		}
	})
}
