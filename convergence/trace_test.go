package convergence

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTrace checks the thinning by doubling: after any number of draws
// the trace holds between TraceCap/2 and TraceCap points per series (all
// of them while fewer), each the draw at a multiple of the stride, and
// its ESS of an independent series is about the points held, of an AR(1)
// series with rho 0.9995 about the whole chain's n (1 - rho)/(1 + rho).
func TestTrace(t *testing.T) {
	for _, n := range []int{1, 7, TraceCap - 1, TraceCap, TraceCap + 1, 5000, 100003} {
		var tr Trace
		for i := 0; i < n; i++ {
			tr.Add(float64(i), -float64(i))
		}
		p := tr.Points()
		if n < TraceCap && p != n || n >= TraceCap && (p < TraceCap/2 || p > TraceCap) {
			t.Errorf("%d draws: %d points (stride %d)", n, p, tr.Stride)
		}
		for i, v := range tr.Series[0] {
			if v != float64(i*tr.Stride) || tr.Series[1][i] != -v {
				t.Fatalf("%d draws: point %d is %v, want draw %d (stride %d)", n, i, v, i*tr.Stride, tr.Stride)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var iid, ar Trace
	x := 0.0
	const n, rho = 400000, 0.9995
	for i := 0; i < n; i++ {
		x = rho*x + math.Sqrt(1-rho*rho)*rng.NormFloat64()
		iid.Add(rng.NormFloat64())
		ar.Add(x)
	}
	e, err := iid.ESS(0)
	if err != nil || e < 0.7*float64(iid.Points()) || e > 1.3*float64(iid.Points()) {
		t.Errorf("independent draws: ESS %.0f of %d points (%v)", e, iid.Points(), err)
	}
	want := n * (1 - rho) / (1 + rho) // 100: the thinned points are correlated too
	if e, _ := ar.ESS(0); e < want/2 || e > 2*want {
		t.Errorf("AR(1), rho %v: ESS %.0f, expected about %.0f", rho, e, want)
	} else {
		t.Logf("AR(1), rho %v: ESS %.0f from %d points (stride %d), expected about %.0f", rho, e, ar.Points(), ar.Stride, want)
	}
	if _, err := iid.ESS(1); err == nil {
		t.Error("a series that does not exist: no error")
	}
}
