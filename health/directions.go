package health

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/gonum/mat"
)

// DirWatch is the per-direction energy error of a small chain (at most
// MaxCoordUnits coordinates) after burn-in: the matrix of sums over
// successive steps t, t+1 of
//
//	q_{t+1} (k_{t+1} - k_t)' - k_t k_t'
//
// (q_{t+1} the momentum after step t, k the kick per coordinate,
// sampler.State.SaveKick), whose trace is D times IntegrationError and in
// which the gradient noise cancels as it does there. In the eigenbasis of
// its symmetric part each eigenvalue is the energy error, the heating per
// step, of one direction: the widening of the sd along it follows as for
// the window's (IntSDWidening). A direction that mixes several
// coordinates (a correlated posterior's stiff direction under a diagonal
// mass) is diluted in each coordinate's figures and in their mean, but not
// here. Sums are kept over blocks (the health windows) for the tolerance.
// Memory O(D^2), checkpointed; cost per step O(D^2).
type DirWatch struct {
	Dim, Steps, BlockSteps, Blocks int
	// Sum, Block, Means and Sq are D x D, row-major: the completed
	// blocks' sums, the current block's, and the sums of the blocks'
	// means and of their squares, elementwise.
	Sum, Block, Means, Sq []float64
	// PrevKick is the last observed step's kick and PrevValid whether the
	// next step pairs with it (checkpointed, so that a resumed run pairs
	// as an uninterrupted one).
	PrevKick  []float64
	PrevValid bool
	kick      []float64
}

// arm prepares the watch for the next step of chain s (valid says the
// step pairs with the last: no exchange or change between them).
func (w *DirWatch) arm(s *sampler.State, valid bool) {
	d := len(s.P)
	if w.Dim != d {
		*w = DirWatch{Dim: d, Sum: make([]float64, d*d), Block: make([]float64, d*d), Means: make([]float64, d*d), Sq: make([]float64, d*d)}
	}
	if len(w.kick) != d {
		w.kick = make([]float64, d)
	}
	if len(w.PrevKick) != d {
		w.PrevKick, w.PrevValid = make([]float64, d), false
	}
	w.PrevValid = w.PrevValid && valid
	s.SaveKick(w.kick)
}

// observe adds the step just taken, whose momentum before it was prev.
func (w *DirWatch) observe(prev []float64) {
	d := w.Dim
	if w.PrevValid {
		for a := 0; a < d; a++ {
			row := w.Block[a*d : (a+1)*d]
			qa, ka := prev[a], w.PrevKick[a]
			for b, kb := range w.kick {
				row[b] += qa*(kb-w.PrevKick[b]) - ka*w.PrevKick[b]
			}
		}
		w.Steps++
		w.BlockSteps++
	}
	copy(w.PrevKick, w.kick)
	w.PrevValid = true
}

// endBlock folds the current block into the sums.
func (w *DirWatch) endBlock() {
	if w.BlockSteps == 0 {
		return
	}
	n := float64(w.BlockSteps)
	for i, v := range w.Block {
		w.Sum[i] += v
		m := v / n
		w.Means[i] += m
		w.Sq[i] += m * m
		w.Block[i] = 0
	}
	w.Blocks++
	w.BlockSteps = 0
}

// DirFigures are the worst direction's energy error after burn-in: its
// heating per step (the largest eigenvalue of the symmetric part of
// DirWatch's mean), the sd widening it makes at friction Friction per step
// and its tolerance, and the direction, with its largest components.
type DirFigures struct {
	Measured    bool         `json:"measured"`
	Integration float64      `json:"integration"`
	IntSDError  float64      `json:"int_sd_error"`
	IntSDTol    float64      `json:"int_sd_tol"`
	Direction   []float64    `json:"direction"`
	Status      HealthStatus `json:"status"`
}

// figures returns the worst direction's figures at friction f per step,
// with tolSE standard errors in the tolerance.
func (w DirWatch) figures(f, tolSE float64) (DirFigures, error) {
	d := w.Dim
	if w.Steps < 2 || d == 0 {
		return DirFigures{}, nil
	}
	n := float64(w.Steps)
	m := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			ab, ba := a*d+b, b*d+a
			m.SetSym(a, b, (w.Sum[ab]+w.Block[ab]+w.Sum[ba]+w.Block[ba])/(2*n))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(m, true) {
		return DirFigures{}, fmt.Errorf("direction watch: eigen-decomposition failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	top := 0
	for k, v := range vals {
		if v > vals[top] {
			top = k
		}
	}
	out := DirFigures{Measured: true, Integration: vals[top], Direction: make([]float64, d)}
	se := 0.0
	for a := 0; a < d; a++ {
		out.Direction[a] = vecs.At(a, top)
	}
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			se += math.Abs(out.Direction[a]*out.Direction[b]) * blockSE(w.Means[a*d+b], w.Sq[a*d+b], w.Blocks)
		}
	}
	out.IntSDError = IntSDWidening(out.Integration, f)
	out.IntSDTol = IntSDWidening(math.Max(out.Integration, 0)+tolSE*se, f) - out.IntSDError
	switch dev := out.IntSDError - out.IntSDTol; {
	case dev > FailIntSD:
		out.Status = HealthFail
	case dev > WarnIntSD:
		out.Status = HealthWarn
	}
	return out, nil
}

// describe names the direction by its largest components (at most 3,
// of at least 0.2).
func (f DirFigures) describe() string {
	used := map[int]bool{}
	s := "the direction"
	for k := 0; k < 3; k++ {
		best, bi := 0.2, -1
		for i, v := range f.Direction {
			if math.Abs(v) >= best && !used[i] {
				best, bi = math.Abs(v), i
			}
		}
		if bi < 0 {
			break
		}
		used[bi] = true
		s += fmt.Sprintf(" %+.2f x%d", f.Direction[bi], bi)
	}
	return s
}
