package rundir

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/runspec"
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
	CheckpointMagic   = "PTSGCKP1"
	CheckpointVersion = 1
	CheckpointFile    = "checkpoint"
)

// Checkpoint is everything needed to continue a run exactly.
type Checkpoint struct {
	Config  runspec.Config
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
	out.WriteString(CheckpointMagic)
	binary.Write(&out, binary.LittleEndian, uint32(CheckpointVersion))
	binary.Write(&out, binary.LittleEndian, uint64(payload.Len()))
	out.Write(payload.Bytes())
	sum := sha256.Sum256(payload.Bytes())
	out.Write(sum[:])

	path := filepath.Join(dir, CheckpointFile)
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
	return DecodeCheckpoint(path, b)
}

// DecodeCheckpoint verifies and decodes the bytes b of the checkpoint file
// at path (named in errors).
func DecodeCheckpoint(path string, b []byte) (*Checkpoint, error) {
	fail := func(f string, args ...any) error {
		return fmt.Errorf("checkpoint %s: %s: %w", path, fmt.Sprintf(f, args...), ErrCheckpoint)
	}
	const head = 8 + 4 + 8
	if len(b) < head {
		return nil, fail("truncated: %d bytes, header needs %d", len(b), head)
	}
	if string(b[:8]) != CheckpointMagic {
		return nil, fail("bad magic %q: not a ptsghmc checkpoint", b[:8])
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != CheckpointVersion {
		return nil, fail("format version %d, this build reads version %d", v, CheckpointVersion)
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
