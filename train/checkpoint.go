package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Checkpoint file format, RUNDIR/checkpoint:
//
//	magic "PTSGCKP1" | version uint32 | payload length uint64 | payload (gob) | SHA-256 of payload
//
// It is written to a temporary file, fsynced and renamed over the old one
// (atomic: a crash or signal at any moment leaves a complete checkpoint);
// the previous checkpoint is kept as checkpoint.prev (a hard link).
const (
	checkpointMagic   = "PTSGCKP1"
	checkpointVersion = 1
	checkpointName    = "checkpoint"
)

// Checkpoint is everything needed to continue a run exactly.
type Checkpoint struct {
	Config  Config
	Steps   int
	Rounds  int
	Rungs   []RungState
	Streams [][]byte // per rung, then the exchange stream
	Batches []datasets.Batches
	Stats   tempering.PTStats
	Temps   []float64             // the current ladder (absent in checkpoints of older versions: the config's)
	Tuning  tempering.TuningState // ladder tuning progress and history
	Samples int                   // samples in the samples file
	Metrics int64                 // bytes of metrics.jsonl
	// Mass holds each rung's preconditioner estimate while burn-in
	// estimates one (absent otherwise, and in checkpoints older than it).
	Mass []tempering.MassEstimate
	// Noise holds each rung's gradient-noise estimate while burn-in
	// estimates one (Config.NoiseCorrection).
	Noise []tempering.NoiseEstimate
}

// RungState is one rung's saved state. Mass is its diagonal mass matrix
// (nil: unit mass, and in checkpoints older than it) and InjScale its
// noise correction (nil: none). Extra is the state a
// sampler.StatefulKernel keeps of its own (sampler.MarshalExtra; nil for
// the built-in kernels, and in checkpoints older than it: gob leaves the
// field out when it is nil, so the format version is unchanged and older
// checkpoints load as before).
type RungState struct {
	Theta, P []float64
	Xi, U    float64
	Mass     []float64
	InjScale []float64
	Extra    []byte
}

// ErrCheckpoint is wrapped by errors about an unusable checkpoint.
var ErrCheckpoint = errors.New("unusable checkpoint")

// WriteCheckpoint writes c to dir atomically, keeping the previous one as
// checkpoint.prev.
func WriteCheckpoint(dir string, c *Checkpoint) error {
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(c); err != nil {
		return fmt.Errorf("checkpoint: encode: %w", err)
	}
	var out bytes.Buffer
	out.WriteString(checkpointMagic)
	binary.Write(&out, binary.LittleEndian, uint32(checkpointVersion))
	binary.Write(&out, binary.LittleEndian, uint64(payload.Len()))
	out.Write(payload.Bytes())
	sum := sha256.Sum256(payload.Bytes())
	out.Write(sum[:])

	path := filepath.Join(dir, checkpointName)
	tmp := path + ".tmp"
	if err := writeSynced(tmp, out.Bytes()); err != nil {
		os.Remove(tmp) // a partial file (disk full) frees its space
		return fmt.Errorf("checkpoint: %w", err)
	}
	// Keep the current checkpoint as checkpoint.prev by a hard link (a copy
	// where links are not supported), then rename the new one over it: at
	// every moment "checkpoint" names a complete file, the old or the new.
	if _, err := os.Stat(path); err == nil {
		prev := path + ".prev"
		os.Remove(prev)
		if err := os.Link(path, prev); err != nil {
			if err := copyFile(path, prev); err != nil {
				os.Remove(tmp)
				return fmt.Errorf("checkpoint: keep previous: %w", err)
			}
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("checkpoint: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// checkpointOf assembles the checkpoint of a run from plain state: its
// config, the sampler state st (with what its kernel k keeps of its own), each rung's minibatch order, and the
// lengths of its samples file (records) and metrics file (bytes). The
// checkpoint shares st's slices; write it before stepping on.
func checkpointOf(cfg Config, k sampler.Kernel, st *tempering.PTState, batches []datasets.Batches, samples int, metrics int64) (*Checkpoint, error) {
	c := &Checkpoint{Config: cfg, Steps: st.Steps, Rounds: st.Rounds, Stats: st.Stats,
		Temps: st.Temps, Tuning: st.Tuning, Samples: samples, Metrics: metrics, Batches: batches, Mass: st.Mass, Noise: st.Noise}
	for j, s := range st.Rungs {
		extra, err := sampler.MarshalExtra(k, s)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: rung %d: %w", j+1, err)
		}
		c.Rungs = append(c.Rungs, RungState{Theta: s.Theta, P: s.P, Xi: s.Xi, U: s.U, Mass: s.Mass, InjScale: s.InjScale, Extra: extra})
	}
	for _, s := range st.Streams {
		b, err := s.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		c.Streams = append(c.Streams, b)
	}
	return c, nil
}

// checkpoint writes the run's whole state, after committing the samples
// and metrics it records to stable storage.
func (r *Run) checkpoint() error {
	if err := r.samples.Sync(); err != nil {
		return fmt.Errorf("samples: sync: %w", err)
	}
	if err := r.metrics.Sync(); err != nil {
		return fmt.Errorf("metrics: sync: %w", err)
	}
	c, err := checkpointOf(r.Cfg, r.pt.Kernel, r.state, saveBatches(r.batches), r.samples.Count, r.mbytes)
	if err != nil {
		return err
	}
	return WriteCheckpoint(r.Dir, c)
}

// checkpointWrite writes b to f; tests replace it to inject write errors.
var checkpointWrite = func(f *os.File, b []byte) (int, error) { return f.Write(b) }

// writeSynced creates path holding b, fsynced.
func writeSynced(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	// the errors of *os.File name the operation and the path
	if _, err := checkpointWrite(f, b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyFile copies src to dst, fsynced.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeSynced(dst, b)
}

// ReadCheckpoint reads and verifies the checkpoint file at path.
func ReadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return decodeCheckpoint(path, b)
}

// decodeCheckpoint verifies and decodes the bytes b of the checkpoint file
// at path (named in errors).
func decodeCheckpoint(path string, b []byte) (*Checkpoint, error) {
	fail := func(f string, args ...any) error {
		return fmt.Errorf("checkpoint %s: %s: %w", path, fmt.Sprintf(f, args...), ErrCheckpoint)
	}
	const head = 8 + 4 + 8
	if len(b) < head {
		return nil, fail("truncated: %d bytes, header needs %d", len(b), head)
	}
	if string(b[:8]) != checkpointMagic {
		return nil, fail("bad magic %q: not a ptsghmc checkpoint", b[:8])
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != checkpointVersion {
		return nil, fail("format version %d, this build reads version %d", v, checkpointVersion)
	}
	n := binary.LittleEndian.Uint64(b[12:])
	if uint64(len(b)) != head+n+sha256.Size {
		return nil, fail("truncated or padded: %d bytes, header declares %d", len(b), head+n+sha256.Size)
	}
	payload := b[head : head+n]
	sum := sha256.Sum256(payload)
	if !bytes.Equal(sum[:], b[head+n:]) {
		return nil, fail("checksum mismatch: the file is corrupt")
	}
	var c Checkpoint
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&c); err != nil {
		return nil, fmt.Errorf("checkpoint %s: decode: %w: %w", path, err, ErrCheckpoint)
	}
	return &c, nil
}

// validateFor checks everything c holds against the run it is restored
// into: a model of dim parameters, numRungs rungs and training data of n
// examples. It returns an error wrapping ErrCheckpoint naming what does not
// fit; a checkpoint it accepts cannot make the resumed run index outside
// its data or its model.
func (c *Checkpoint) validateFor(cfg Config, dim, numRungs, n int) error {
	bad := func(f string, args ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(f, args...), ErrCheckpoint)
	}
	switch {
	case len(c.Rungs) != numRungs || len(c.Streams) != numRungs+1 || len(c.Batches) != numRungs:
		return bad("%d rungs, %d streams, %d batch states for a %d-rung run (need %d, %d, %d)",
			len(c.Rungs), len(c.Streams), len(c.Batches), numRungs, numRungs, numRungs+1, numRungs)
	case c.Steps < 0 || c.Steps > cfg.Steps:
		return bad("%d steps done, outside [0, %d] (the run's steps)", c.Steps, cfg.Steps)
	case c.Rounds < 0 || c.Rounds > c.Steps:
		return bad("%d exchange rounds in %d steps", c.Rounds, c.Steps)
	case c.Samples < 0 || c.Samples > c.Steps:
		return bad("%d samples after %d steps", c.Samples, c.Steps)
	case c.Metrics < 0:
		return bad("metrics length %d", c.Metrics)
	case c.Temps != nil && len(c.Temps) != numRungs:
		return bad("a ladder of %d temperatures for %d rungs", len(c.Temps), numRungs)
	}
	for j, rs := range c.Rungs {
		if len(rs.Theta) != dim || len(rs.P) != dim {
			return bad("rung %d has %d parameters and %d momenta, model %s has %d", j+1, len(rs.Theta), len(rs.P), cfg.ModelName(), dim)
		}
		if !finiteAll(rs.Theta) || !finiteAll(rs.P) || !finiteAll([]float64{rs.Xi}) {
			return bad("rung %d holds a non-finite position, momentum or thermostat", j+1)
		}
	}
	want := min(cfg.Batch, n)
	for j, b := range c.Batches {
		if b.N != n || b.Size != want || len(b.Order) != n {
			return bad("rung %d's batch state is over %d examples in batches of %d (order of %d), the run has %d examples in batches of %d",
				j+1, b.N, b.Size, len(b.Order), n, want)
		}
		if b.Pos < 0 || b.Pos > n || b.Epoch < 0 {
			return bad("rung %d's batch state is at position %d of epoch %d, outside [0, %d]", j+1, b.Pos, b.Epoch, n)
		}
		seen := make([]bool, n)
		for _, i := range b.Order {
			if i < 0 || i >= n || seen[i] {
				return bad("rung %d's batch order is not a permutation of the %d examples", j+1, n)
			}
			seen[i] = true
		}
	}
	return nil
}

// finiteAll reports whether every value of x is finite; the sum is not
// finite when a value is not (or when they overflow, which is no state to
// resume either).
func finiteAll(x []float64) bool {
	s := 0.0
	for _, v := range x {
		s += v * 0 // NaN for NaN and ±Inf, 0 otherwise
	}
	return s == 0
}

// restore validates c against the run it is restored into (pt, a model of
// dim parameters, n training examples) and returns its sampler state.
// Every error wraps ErrCheckpoint.
func (c *Checkpoint) restore(cfg Config, pt *tempering.PT, dim, n int) (*tempering.PTState, error) {
	if err := c.validateFor(cfg, dim, len(pt.Temps), n); err != nil {
		return nil, err
	}
	st := &tempering.PTState{Steps: c.Steps, Rounds: c.Rounds, Stats: c.Stats, Temps: c.Temps, Tuning: c.Tuning, Mass: c.Mass, Noise: c.Noise}
	if st.Temps == nil { // written before the ladder was state
		st.Temps = append([]float64(nil), pt.Temps...)
	}
	if pairs := len(c.Rungs) - 1; st.Stats.WinProposed == nil && pairs > 0 { // written before window statistics
		st.Stats.WinProposed, st.Stats.WinAccepted, st.Stats.WinReject = make([]int, pairs), make([]int, pairs), make([]float64, pairs)
	}
	for _, rs := range c.Rungs {
		s := sampler.NewState(rs.Theta)
		copy(s.P, rs.P)
		s.Xi, s.U = rs.Xi, rs.U
		if err := s.SetMass(rs.Mass); err != nil {
			return nil, fmt.Errorf("rung %d: %w: %w", len(st.Rungs)+1, err, ErrCheckpoint)
		}
		for i, v := range rs.InjScale {
			if !(v >= 0 && v <= math.Sqrt2) {
				return nil, fmt.Errorf("rung %d: noise correction %d is %v, outside [0, sqrt(2)]: %w", len(st.Rungs)+1, i, v, ErrCheckpoint)
			}
		}
		s.InjScale = rs.InjScale
		if err := sampler.UnmarshalExtra(pt.Kernel, s, rs.Extra); err != nil {
			return nil, fmt.Errorf("rung %d: %w: %w", len(st.Rungs)+1, err, ErrCheckpoint)
		}
		st.Rungs = append(st.Rungs, s)
	}
	for j, b := range c.Streams {
		s := &sampler.Stream{}
		if err := s.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("random stream %d: %w: %w", j+1, err, ErrCheckpoint)
		}
		st.Streams = append(st.Streams, s)
	}
	if err := pt.Check(st, dim); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrCheckpoint)
	}
	return st, nil
}
