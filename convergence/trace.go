package convergence

import (
	"fmt"
	"math"
)

// TraceCap is the most points a Trace stores per series: when a series
// reaches it, every other point is dropped and the stride doubles, so a
// trace of any length holds between TraceCap/2 and TraceCap points.
const TraceCap = 1024

// Trace records a chain's draws of a few scalars (its series) in bounded
// memory: every Stride-th draw is stored, and the stride doubles whenever
// TraceCap points are stored. The stored points are a chain thinned
// evenly, whose ESS (BulkESS) estimates the whole chain's as long as it
// is below the number of points (about TraceCap/2 or more). It is plain
// data, so a checkpoint can carry it and a resumed run continue it.
type Trace struct {
	Stride int         // draws between stored points (0 before the first)
	Seen   int         // draws offered
	Series [][]float64 // each series' stored points
}

// Add offers one draw of every series (the same number each time).
func (t *Trace) Add(vals ...float64) {
	if t.Stride == 0 {
		t.Stride = 1
	}
	if len(t.Series) == 0 {
		t.Series = make([][]float64, len(vals))
	}
	if t.Seen%t.Stride == 0 && len(vals) == len(t.Series) {
		for k, v := range vals {
			t.Series[k] = append(t.Series[k], v)
		}
		if len(t.Series[0]) >= TraceCap {
			for k, s := range t.Series {
				for i := 0; 2*i < len(s); i++ {
					s[i] = s[2*i]
				}
				t.Series[k] = s[:(len(s)+1)/2]
			}
			t.Stride *= 2
		}
	}
	t.Seen++
}

// Points returns the number of points stored per series.
func (t *Trace) Points() int {
	if len(t.Series) == 0 {
		return 0
	}
	return len(t.Series[0])
}

// ESS returns series k's bulk effective sample size in draws of the whole
// chain (BulkESS of the stored points: the chain thinned by Stride), NaN
// with fewer than 8 points.
func (t *Trace) ESS(k int) (float64, error) {
	if k < 0 || k >= len(t.Series) {
		return math.NaN(), fmt.Errorf("trace: series %d of %d", k, len(t.Series))
	}
	if len(t.Series[k]) < 8 {
		return math.NaN(), nil
	}
	return BulkESS([][]float64{t.Series[k]}), nil
}
