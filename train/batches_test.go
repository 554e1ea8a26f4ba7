package train

import (
	"slices"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestBatchesSaveRestore checks restored minibatch orders continue as the
// saved ones do, across an epoch boundary, and that each rung's order is
// its own stream's.
func TestBatchesSaveRestore(t *testing.T) {
	t.Parallel()
	streams := func() []*sampler.Stream {
		return []*sampler.Stream{sampler.NewStream(7, 0), sampler.NewStream(7, 1)}
	}
	st := streams()
	b, err := newBatches(10, 4, st)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(b[0].Order, b[1].Order) {
		t.Fatalf("rungs share the order %v", b[0].Order)
	}
	for j := range b {
		b[j].Next(st[j].Rand)
		b[j].Next(st[j].Rand)
	}
	saved := saveBatches(b)
	saved[0].Order = slices.Clone(saved[0].Order) // as a checkpoint file holds them
	saved[1].Order = slices.Clone(saved[1].Order)
	restored := restoreBatches(saved)
	for j := range b {
		ck, err := st[j].MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		rs := &sampler.Stream{}
		if err := rs.UnmarshalBinary(ck); err != nil {
			t.Fatal(err)
		}
		for step := 0; step < 5; step++ { // into the next two epochs
			want, got := b[j].Next(st[j].Rand), restored[j].Next(rs.Rand)
			if !slices.Equal(want, got) {
				t.Fatalf("rung %d, batch %d after restore: %v, want %v", j, step, got, want)
			}
		}
	}
}
