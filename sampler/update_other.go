//go:build !amd64 || noasm

package sampler

// unitUpdateBlocks updates nothing without the assembly: chunk's loop
// updates every coordinate.
func unitUpdateBlocks(tc, pc, gc, z []float64, c *[4]float64, sums *[5]float64) int { return 0 }

// scaledUpdateBlocks updates nothing without the assembly: general's loop
// updates every coordinate.
func scaledUpdateBlocks(tc, pc, gc, z, rc, sc, na []float64, c *[6]float64, sums *[5]float64) int {
	return 0
}
