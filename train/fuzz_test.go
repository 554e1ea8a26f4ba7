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
	"sync"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
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
		r, err := New(dir, cfg, true, setupOf(smallData(t)))
		if err != nil {
			fuzzRun.err = err
			return
		}
		if err := r.Train(context.Background(), nil); err != nil {
			fuzzRun.err = err
			return
		}
		r.Close()
		b, err := os.ReadFile(filepath.Join(dir, rundir.CheckpointFile))
		if err != nil {
			fuzzRun.err = err
			return
		}
		fuzzRun.dir, fuzzRun.payload = dir, b[20:len(b)-sha256.Size]
		fuzzRun.samples, _ = os.ReadFile(filepath.Join(dir, rundir.SamplesFile))
		fuzzRun.metrics, _ = os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
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
	b.WriteString(rundir.CheckpointMagic)
	binary.Write(&b, binary.LittleEndian, uint32(rundir.CheckpointVersion))
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
	var c rundir.Checkpoint
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&c); err != nil {
		f.Fatal(err)
	}
	for _, mutate := range []func(c *rundir.Checkpoint){
		func(c *rundir.Checkpoint) { c.Batches[0].Pos = -3 },
		func(c *rundir.Checkpoint) { c.Batches[1].Order[0] = 1 << 20 },
		func(c *rundir.Checkpoint) { c.Rungs[0].P = c.Rungs[0].P[:3] },
		func(c *rundir.Checkpoint) { c.Streams = c.Streams[:1] },
		func(c *rundir.Checkpoint) { c.Samples = 1 << 30 },
	} {
		d := c
		d.Batches = append([]datasets.Batches(nil), c.Batches...)
		d.Batches[1].Order = append([]int(nil), c.Batches[1].Order...)
		d.Rungs = append([]tempering.RungSnapshot(nil), c.Rungs...)
		mutate(&d)
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(&d); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	data := smallData(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		c, err := rundir.DecodeCheckpoint("fuzzed", checkpointFile(payload))
		if err != nil {
			if !errors.Is(err, rundir.ErrCheckpoint) {
				t.Fatalf("error does not wrap ErrCheckpoint: %v", err)
			}
			return
		}
		// Everything resume checks before it builds evaluators and opens
		// files (those cost too much per input; TestCheckpointMismatch
		// resumes mismatched checkpoints through the real path).
		cfg := c.Config
		if err := cfg.Validate(runspec.DefaultSetup()); err != nil {
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
		tr, _, err := runspec.SplitData(cfg, data)
		if err != nil {
			return
		}
		n := tr.N
		st, err := restore(c, cfg, &driver.Driver{PT: &tempering.PT{Record: tempering.StandardRecorders(), Temps: temps}, Phases: []driver.Phase{&driver.StepHealth{}}}, spec.NumParams(), n)
		if err != nil {
			if !errors.Is(err, rundir.ErrCheckpoint) {
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
		c := runspec.DefaultConfig()
		if err := runspec.ParseConfig(data, ext, &c); err != nil {
			return
		}
		if err := c.Validate(runspec.DefaultSetup()); err != nil {
			return
		}
		c.Spec(784, 10)
		c.Temps()
		for k := 1; k < 50; k++ {
			keepSample(c, k, c.Optimiser(runspec.DefaultSetup().Kernels))
			stepScale(c, k)
		}
	})
}
