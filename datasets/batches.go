package datasets

import (
	"fmt"
	"math/rand/v2"
)

// Batches iterates over minibatches of example indices: each epoch visits a
// fresh random permutation of 0..N-1 in consecutive batches of Size; the last
// batch of an epoch holds the remaining N mod Size examples when Size does not
// divide N. Its fields are its whole state, so it can be saved and restored.
type Batches struct {
	N, Size int
	Order   []int // this epoch's permutation
	Pos     int   // index into Order of the next batch's first example
	Epoch   int   // epochs started so far, minus one
}

// NewBatches returns an iterator over batches of size drawn from n examples,
// with the first epoch's order shuffled by rng.
func NewBatches(n, size int, rng *rand.Rand) (*Batches, error) {
	if n <= 0 || size <= 0 {
		return nil, fmt.Errorf("batches: %d examples, batch size %d: both must be positive", n, size)
	}
	if size > n {
		size = n
	}
	b := &Batches{N: n, Size: size, Order: make([]int, n)}
	for i := range b.Order {
		b.Order[i] = i
	}
	rng.Shuffle(n, func(i, j int) { b.Order[i], b.Order[j] = b.Order[j], b.Order[i] })
	return b, nil
}

// Next returns the next batch's indices, a view valid until the next call.
// At the end of an epoch it reshuffles the order with rng.
func (b *Batches) Next(rng *rand.Rand) []int {
	if b.Pos >= b.N {
		rng.Shuffle(b.N, func(i, j int) { b.Order[i], b.Order[j] = b.Order[j], b.Order[i] })
		b.Pos = 0
		b.Epoch++
	}
	end := min(b.Pos+b.Size, b.N)
	idx := b.Order[b.Pos:end]
	b.Pos = end
	return idx
}

// Examples returns N, the number of examples the batches are drawn from
// (sampler.BatchOrder).
func (b *Batches) Examples() int { return b.N }
