package train

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// fuzzRun is a finished small run whose files the checkpoint fuzzer
// restores before each input.
var fuzzRun struct {
	once                      sync.Once
	dir                       string
	payload, samples, metrics []byte
	err                       error
}

func fuzzBase(t testing.TB) (dir string, payload, samples, metrics []byte) {
	fuzzRun.once.Do(func() {
		dir, err := os.MkdirTemp("", "ptsghmc-fuzz")
		if err != nil {
			fuzzRun.err = err
			return
		}
		cfg := smallConfig()
		cfg.Steps = 60
		cfg.Corr = "hermite" // its table builds in milliseconds (nnls: most of a second per input)
		r, err := NewFromData(dir, cfg, smallData(t))
		if err != nil {
			fuzzRun.err = err
			return
		}
		if err := r.Train(context.Background(), nil); err != nil {
			fuzzRun.err = err
			return
		}
		r.Close()
		b, err := os.ReadFile(filepath.Join(dir, checkpointName))
		if err != nil {
			fuzzRun.err = err
			return
		}
		fuzzRun.dir, fuzzRun.payload = dir, b[20:len(b)-sha256.Size]
		fuzzRun.samples, _ = os.ReadFile(filepath.Join(dir, SamplesFile))
		fuzzRun.metrics, _ = os.ReadFile(filepath.Join(dir, MetricsFile))
	})
	if fuzzRun.err != nil {
		t.Fatal(fuzzRun.err)
	}
	return fuzzRun.dir, fuzzRun.payload, fuzzRun.samples, fuzzRun.metrics
}

// checkpointFile wraps a gob payload as a checkpoint file with a valid
// header and checksum, so the fuzzer reaches the decoder and the resume
// validation rather than the checksum test.
func checkpointFile(payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(checkpointMagic)
	binary.Write(&b, binary.LittleEndian, uint32(checkpointVersion))
	binary.Write(&b, binary.LittleEndian, uint64(len(payload)))
	b.Write(payload)
	sum := sha256.Sum256(payload)
	b.Write(sum[:])
	return b.Bytes()
}

// FuzzCheckpoint decodes mutated checkpoint payloads (checksum recomputed)
// and resumes the small run from each one that decodes, then steps it: no
// input may panic; each must resume or fail with an error.
func FuzzCheckpoint(f *testing.F) {
	_, payload, _, _ := fuzzBase(f)
	f.Add(payload)
	// a few structured variants of the real state
	var c Checkpoint
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&c); err != nil {
		f.Fatal(err)
	}
	for _, mutate := range []func(c *Checkpoint){
		func(c *Checkpoint) { c.Batches[0].Pos = -3 },
		func(c *Checkpoint) { c.Batches[1].Order[0] = 1 << 20 },
		func(c *Checkpoint) { c.Rungs[0].P = c.Rungs[0].P[:3] },
		func(c *Checkpoint) { c.Streams = c.Streams[:1] },
		func(c *Checkpoint) { c.Samples = 1 << 30 },
	} {
		d := c
		d.Batches = append([]datasets.Batches(nil), c.Batches...)
		d.Batches[1].Order = append([]int(nil), c.Batches[1].Order...)
		d.Rungs = append([]RungState(nil), c.Rungs...)
		mutate(&d)
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(&d); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	data := smallData(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		c, err := decodeCheckpoint("fuzzed", checkpointFile(payload))
		if err != nil {
			if !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("error does not wrap ErrCheckpoint: %v", err)
			}
			return
		}
		// Everything resume checks before it builds evaluators and opens
		// files (those cost too much per input; TestCheckpointMismatch
		// resumes mismatched checkpoints through the real path).
		cfg := c.Config
		if err := cfg.Validate(); err != nil {
			return
		}
		spec, err := cfg.Spec(16, 3)
		if err != nil {
			return
		}
		temps, err := cfg.Temps()
		if err != nil {
			return
		}
		tr, _, err := splitData(cfg, data)
		if err != nil {
			return
		}
		n := tr.N
		st, err := c.restore(cfg, &tempering.PT{Temps: temps}, spec.NumParams(), n)
		if err != nil {
			if !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("error does not wrap ErrCheckpoint: %v", err)
			}
			return
		}
		// an accepted state can be stepped without indexing outside
		// the data or the model: draw a batch from every rung's state
		for j := range st.Rungs {
			b := c.Batches[j]
			for _, i := range b.Next(st.Streams[j].Rand) {
				if i < 0 || i >= n {
					t.Fatalf("rung %d: batch index %d outside [0, %d)", j, i, n)
				}
			}
		}
	})
}

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

// FuzzConfig parses mutated JSON and YAML configs over the defaults and
// validates them: errors, never a panic.
func FuzzConfig(f *testing.F) {
	f.Add([]byte(`{"arch": "784-100-10", "lr": 0.01, "sampler": "ptsghmc", "ladder": "1,1.2,1.5", "replicas": 3}`), true)
	f.Add([]byte(`{"steps": "many"}`), true)
	f.Add([]byte("arch: 784-100-10\nsampler: ptsghmc\nladder: adaptive\nreplicas: 4\nburnin: 2000\n"), false)
	f.Add([]byte("steps: [1, 2]\n"), false)
	f.Add([]byte("data_fingerprint: {n: 3, d: 2, classes: 2, sha256: ab}\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		ext := ".yaml"
		if isJSON {
			ext = ".json"
		}
		c := DefaultConfig()
		if err := parseConfig(data, ext, &c); err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			return
		}
		c.Spec(784, 10)
		c.Temps()
		for k := 1; k < 50; k++ {
			c.keepSample(k)
			c.stepScale(k)
		}
	})
}
