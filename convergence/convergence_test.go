package convergence

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestRHatESS(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	iid := make([][]float64, 4)
	shifted := make([][]float64, 4)
	for c := range iid {
		for i := 0; i < 400; i++ {
			v := rng.NormFloat64()
			iid[c] = append(iid[c], v)
			shifted[c] = append(shifted[c], v+float64(c))
		}
	}
	if r := SplitRHat(iid); r > 1.02 {
		t.Errorf("iid chains: R-hat %v", r)
	}
	if r := SplitRHat(shifted); r < 1.5 {
		t.Errorf("shifted chains: R-hat %v", r)
	}
	if e := BulkESS(iid); e < 1200 || e > 2000 {
		t.Errorf("iid chains: ESS %v of 1600 draws", e)
	}
	// AR(1) with rho 0.9: ESS about n (1-rho)/(1+rho) = 1600/19 = 84
	ar := make([][]float64, 4)
	for c := range ar {
		x := 0.0
		for i := 0; i < 400; i++ {
			x = 0.9*x + math.Sqrt(1-0.81)*rng.NormFloat64()
			ar[c] = append(ar[c], x)
		}
	}
	if e := BulkESS(ar); e < 40 || e > 170 {
		t.Errorf("AR(1) chains: ESS %v, expected about 84", e)
	}
}

// TestNotFinite checks that a NaN or infinite draw gives NaN R-hat and ESS
// at once (a NaN's tie group in the rank normalisation never ended: the
// call hung).
func TestNotFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1)} {
		rng := rand.New(rand.NewPCG(2, 2))
		chains := make([][]float64, 2)
		for c := range chains {
			for range 200 {
				chains[c] = append(chains[c], rng.NormFloat64())
			}
		}
		chains[1][50] = bad
		done := make(chan [2]float64, 1)
		go func() { done <- [2]float64{SplitRHat(chains), BulkESS(chains)} }()
		select {
		case got := <-done:
			if !math.IsNaN(got[0]) || !math.IsNaN(got[1]) {
				t.Errorf("draw %v: R-hat %v, ESS %v, want NaN", bad, got[0], got[1])
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("draw %v: R-hat and ESS did not return in 10 s", bad)
		}
	}
}
