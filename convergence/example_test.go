package convergence_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/convergence"
)

// A Trace keeps a long chain's draws in bounded memory, thinned by
// doubling, and estimates the chain's ESS from them: here two series of
// 100,000 draws, one independent, one stuck on a slow drift.
func ExampleTrace() {
	rng := rand.New(rand.NewPCG(1, 1))
	var tr convergence.Trace
	for i := 0; i < 100000; i++ {
		tr.Add(rng.NormFloat64(), float64(i)/100000+0.01*rng.NormFloat64())
	}
	fast, _ := tr.ESS(0)
	slow, _ := tr.ESS(1)
	fmt.Printf("%d points, every %d draws\n", tr.Points(), tr.Stride)
	fmt.Printf("independent: ESS above 500: %v\n", fast > 500)
	fmt.Printf("drifting: ESS below 10: %v\n", slow < 10)
	// Output:
	// 782 points, every 128 draws
	// independent: ESS above 500: true
	// drifting: ESS below 10: true
}
