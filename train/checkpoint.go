package train

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
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Checkpoint file format, RUNDIR/checkpoint:
//
//	magic "PTSGCKP1" | version uint32 | payload length uint64 | payload (gob) | SHA-256 of payload
//
// It is written to a temporary file, fsynced and renamed over the old one;
// the previous checkpoint is kept as checkpoint.prev.
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
	Stats   sampler.PTStats
	Temps   []float64           // the current ladder (absent in checkpoints of older versions: the config's)
	Tuning  sampler.TuningState // ladder tuning progress and history
	Samples int                 // samples in the samples file
	Metrics int64               // bytes of metrics.jsonl
}

// RungState is one rung's saved state.
type RungState struct {
	Theta, P []float64
	Xi, U    float64
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
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := f.Write(out.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("checkpoint: close %s: %w", tmp, err)
	}
	if _, err := os.Stat(path); err == nil {
		if err := os.Rename(path, path+".prev"); err != nil {
			return fmt.Errorf("checkpoint: keep previous: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ReadCheckpoint reads and verifies the checkpoint file at path.
func ReadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
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
		return nil, fail("decode: %v", err)
	}
	return &c, nil
}
