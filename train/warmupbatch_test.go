package train

import (
	"slices"
	"testing"
)

// TestWarmupBatch checks that --warmup-batch is the SGD warm-up's batch
// size and --batch the sampler's: a run warmed up for 30 steps on batches
// of 8 and sampling on 32 reaches, at the end of its warm-up, exactly the
// point that a run on batches of 8 throughout reaches (one on batches of 32
// does not), and its batch orders hold 8 examples a batch during the
// warm-up and 32 after it.
func TestWarmupBatch(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	base := smallConfig()
	base.Sampler, base.SGDWarmup, base.Steps, base.BurnIn = "sgnht", 30, 30, 20
	warmupAt := func(batch, warmupBatch int) []float64 {
		cfg := base
		cfg.Batch, cfg.WarmupBatch = batch, warmupBatch
		r, _ := trainRef(t, cfg, setupOf(data))
		defer r.Close()
		for _, b := range r.batches {
			if want := cfg.StepBatch(29, data.N); b.Size != want {
				t.Errorf("batch %d, warm-up batch %d: the warm-up's batch order holds %d examples a batch, want %d", batch, warmupBatch, b.Size, want)
			}
		}
		return slices.Clone(r.State().Rungs[0].Theta)
	}
	own := warmupAt(32, 8)
	if small := warmupAt(8, 0); !slices.Equal(own, small) {
		t.Errorf("a warm-up on --warmup-batch 8 differs from one on --batch 8")
	}
	if large := warmupAt(32, 0); slices.Equal(own, large) {
		t.Errorf("a warm-up on --warmup-batch 8 is the one on --batch 32: the warm-up batch is not used")
	}

	// after the warm-up, the sampler's steps take --batch
	cfg := base
	cfg.Batch, cfg.WarmupBatch, cfg.Steps, cfg.BurnIn = 32, 8, 40, 30
	r, _ := trainRef(t, cfg, setupOf(data))
	defer r.Close()
	for _, b := range r.batches {
		if b.Size != 32 {
			t.Errorf("after the warm-up the batch order holds %d examples a batch, want 32", b.Size)
		}
	}
}
