package adapt

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkMassEstimate times one burn-in step of each mass's estimate
// for a chain of D coordinates (Mass.Update's share of a step): the
// diagonal variance's Welford update, a dense mass's gradient window
// (g g', D(D+1)/2 multiply-adds) and draws window (its co-moment, as
// many), and a low-rank mass's draws window of rank 4 (the subspace
// iterations on the draws and the gradients, 3 D l multiply-adds, l =
// k + 10). It reports ns per step and per coordinate.
//
//	go test -run XXX -bench MassEstimate -benchtime 2000x ./adapt/
func BenchmarkMassEstimate(b *testing.B) {
	for _, d := range []int{26, 300, 1000, 10000, 100000} {
		rng := rand.New(rand.NewPCG(1, uint64(d)))
		theta, g := make([]float64, d), make([]float64, d)
		for i := range theta {
			theta[i], g[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		for _, tc := range []struct {
			name string
			p    Preconditioner
			grad bool
		}{{"variance", PrecondVariance, false}, {"dense-gradients", PrecondDense, true}, {"dense-draws", PrecondDense, false}, {"lowrank-4", PrecondLowRank, false}} {
			if tc.p == PrecondDense && d > MaxDenseDim {
				continue
			}
			b.Run("D="+strconv.Itoa(d)+"/"+tc.name, func(b *testing.B) {
				var e MassEstimate
				e.reset(tc.p, d, false, 4)
				if tc.grad {
					e.reset(PrecondNone, d, false, 0)
					e.GradCross = make([]float64, d*(d+1)/2)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					theta[i%d] += 1e-3
					switch {
					case tc.grad:
						e.observeGrad(g)
					case tc.p == PrecondVariance:
						e.observe(theta)
					default:
						e.observeFull(theta, g)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d), "ns/coord")
			})
		}
	}
}
