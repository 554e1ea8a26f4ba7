package train

import (
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Each rung's minibatch order (a datasets.Batches: a permutation of the
// training examples and the position in it) decides which examples its
// next gradient sees. It is plain state the run owns, beside the sampler
// state: drawn from the rungs' random streams when a run starts, handed to
// the sampler's state (PTState.Orders: PT draws each rung's minibatch and
// passes it to the kernel's step), and saved in and restored from
// checkpoints by saveBatches and restoreBatches.

// newBatches returns a fresh minibatch order per stream over n examples
// in batches of size: rung j's is shuffled by streams[j].
func newBatches(n, size int, streams []*sampler.Stream) ([]*datasets.Batches, error) {
	out := make([]*datasets.Batches, len(streams))
	for j, s := range streams {
		b, err := datasets.NewBatches(n, size, s.Rand)
		if err != nil {
			return nil, err
		}
		out[j] = b
	}
	return out, nil
}

// saveBatches returns the orders as a checkpoint stores them. The values
// share their Order slices with b: write the checkpoint before the run
// steps on.
func saveBatches(b []*datasets.Batches) []datasets.Batches {
	out := make([]datasets.Batches, len(b))
	for j, o := range b {
		out[j] = *o
	}
	return out
}

// restoreBatches returns the orders a checkpoint stored (checked by
// Checkpoint.validateFor), sharing their Order slices.
func restoreBatches(saved []datasets.Batches) []*datasets.Batches {
	out := make([]*datasets.Batches, len(saved))
	for j := range saved {
		b := saved[j]
		out[j] = &b
	}
	return out
}

// setBatches makes b the run's minibatch orders: the sampler's state draws
// rung j's minibatches from b[j] (tempering.PTState.Orders), and the
// checkpoint saves them.
func (r *Run) setBatches(b []*datasets.Batches) {
	r.batches = b
	r.state.Orders = make([]sampler.BatchOrder, len(b))
	for j, o := range b {
		r.state.Orders[j] = o
	}
}
