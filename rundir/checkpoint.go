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

	"github.com/ptsghmc/ptsghmc/adapt"
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
//
// Version 2 holds a Checkpoint, its sampler state a tempering.Snapshot.
// Version 1 held the snapshot's fields flat in the checkpoint
// (checkpointV1); DecodeCheckpoint reads both, and brings the state of
// any older run up to date in one place (tempering.Snapshot.Upgrade).
// The checksum covers the payload alone: a corrupt version is caught as a
// payload of another version than the header declares.
const (
	CheckpointMagic   = "PTSGCKP1"
	CheckpointVersion = 2
	CheckpointFile    = "checkpoint"
)

// Checkpoint is everything needed to continue a run exactly: its config,
// the sampler's state (tempering.Snapshot: steps, rungs, streams,
// statistics, ladder, tuning, estimates), each rung's minibatch order, and
// the lengths of the samples and metrics files the state goes with.
type Checkpoint struct {
	Config runspec.Config
	tempering.Snapshot
	Batches []datasets.Batches
	Samples int   // samples in the samples file
	Metrics int64 // bytes of metrics.jsonl
}

// checkpointV1 is the payload of format version 1, which held the
// sampler's state flat (gob decodes by field name).
type checkpointV1 struct {
	Config  runspec.Config
	Steps   int
	Rounds  int
	Rungs   []tempering.RungSnapshot
	Streams [][]byte
	Batches []datasets.Batches
	Stats   tempering.PTStats
	Temps   []float64
	Tuning  tempering.TuningState
	Samples int
	Metrics int64
	Mass    []adapt.MassEstimate
	Noise   []adapt.NoiseEstimate
}

// checkpoint returns the version 1 payload as a Checkpoint.
func (c *checkpointV1) checkpoint() *Checkpoint {
	return &Checkpoint{Config: c.Config, Batches: c.Batches, Samples: c.Samples, Metrics: c.Metrics,
		Snapshot: tempering.Snapshot{Steps: c.Steps, Rounds: c.Rounds, Rungs: c.Rungs, Streams: c.Streams, Stats: c.Stats,
			Temps: c.Temps, Tuning: c.Tuning, Mass: c.Mass, Noise: c.Noise}}
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
	syncDir(dir)
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

// decodePayload decodes the gob payload of a checkpoint of format version
// v (1 to CheckpointVersion).
func decodePayload(v uint32, payload []byte) (*Checkpoint, error) {
	if v == 1 {
		var c1 checkpointV1
		if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&c1); err != nil {
			return nil, err
		}
		return c1.checkpoint(), nil
	}
	c := &Checkpoint{}
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(c); err != nil {
		return nil, err
	}
	return c, nil
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
	v := binary.LittleEndian.Uint32(b[8:])
	if v < 1 || v > CheckpointVersion {
		return nil, fail("format version %d, this build reads versions 1 to %d (a newer build's checkpoint, or a corrupt header)", v, CheckpointVersion)
	}
	// the payload length the file has room for, compared before adding to
	// the declared one (a corrupt length near 2^64 wraps around the sum)
	n := binary.LittleEndian.Uint64(b[12:])
	if len(b) < head+sha256.Size || n != uint64(len(b)-head-sha256.Size) {
		return nil, fail("truncated or padded: %d bytes, header declares a payload of %d bytes (a file of %d header, payload and %d checksum bytes)", len(b), n, head, sha256.Size)
	}
	payload := b[head : head+n]
	sum := sha256.Sum256(payload)
	if !bytes.Equal(sum[:], b[head+n:]) {
		return nil, fail("checksum mismatch: the file is corrupt")
	}
	c, err := decodePayload(v, payload)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: decode: %w: %w", path, err, ErrCheckpoint)
	}
	// The checksum covers the payload, not the header: a version 2 payload
	// under a corrupt version 1 decodes without error into a checkpoint of
	// no rungs (gob skips the fields it does not know). A checkpoint always
	// has rungs, so a payload that has them only under another version has
	// a corrupt header. (A version 1 payload under version 2 decodes
	// into the same checkpoint: gob fills the embedded Snapshot's fields
	// from the flat ones, by name.)
	for w := uint32(1); w <= CheckpointVersion && len(c.Rungs) == 0; w++ {
		if w == v {
			continue
		}
		if o, err := decodePayload(w, payload); err == nil && len(o.Rungs) > 0 {
			return nil, fail("header declares format version %d, the payload (its checksum intact) is of version %d: the header is corrupt", v, w)
		}
	}
	ladder, _ := c.Config.Temps() // a bad config leaves Temps nil for the resume to refuse
	c.Upgrade(ladder)
	return c, nil
}
