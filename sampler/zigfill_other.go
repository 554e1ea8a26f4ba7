//go:build !amd64 || noasm

package sampler

// zigFastBlocks writes nothing without the assembly: fill draws every
// variate itself.
func (n *normalSource) zigFastBlocks(dst []float64) int { return 0 }

func hasZigAVX512Build() bool { return false }
