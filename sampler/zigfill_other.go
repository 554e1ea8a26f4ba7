//go:build !amd64 || noasm

package sampler

// zigFastBlocks writes nothing without the assembly: fill draws every
// variate itself.
func (n *normalSource) zigFastBlocks(dst []float64) int { return 0 }

func hasZigAVX512Build() bool { return false }

// unitUpdateBlocks updates nothing without the assembly: chunk's loop
// updates every coordinate.
func unitUpdateBlocks(tc, pc, gc, z []float64, c *[4]float64, sums *[5]float64) int { return 0 }
