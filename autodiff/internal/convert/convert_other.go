//go:build !amd64 || noasm

package convert

func sumSquares32Blocks(dst []float32, src []float64, sums *[4]float64) int { return 0 }

func addPriorGrad32Blocks(out []float64, g []float32, theta []float64, lam float64) int { return 0 }
