package health

import (
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// LangevinWatch is the health watch of an SGLD chain (no momentum, so no
// kinetic temperature or energy balance to read) after burn-in (issue
// 60). In the mass's metric, y = M^1/2 theta and G = M^-1/2 grad U~ (a
// diagonal mass M), an SGLD step (sampler.SGLD.Scales) is
//
//	y' = y - c G(y) + w,  w ~ N(0, v I),
//
// and the watch recovers the injected noise w = y' - y + c G exactly. On a
// quadratic U (locally: over one step's displacement) G(y) = H y + b + e
// with e the minibatch noise, so the change of successive gradients,
// delta_t = G_t - G_{t-1}, is H dy + e_t - e_{t-1} (dy the step between
// them) and
//
//	E[delta w'] = H v   (w is independent of everything before it),
//	E[(delta - H dy)(delta - H dy)'] = 2 Var[e].
//
// So the curvature H is measured with the injected noise as instrument,
// needing neither an extra gradient nor a mixed chain, and the gradient
// noise is the successive gradients' differences less the true gradient's
// change H dy (the plain estimate Var(delta)/2 without that subtraction
// would read the curvature's part, (hH)^2 v, as noise). It assumes U
// quadratic over a step, the minibatch noises of successive steps
// independent (with minibatches drawn in epochs they are slightly
// anti-correlated and the noise reads a little high) and the step and mass
// fixed after burn-in (a cyclical step enters through the mean c and v).
//
// A Gaussian direction of curvature H then has a = c H, the step's
// contraction (its lag-1 autocorrelation is 1 - a, whatever the noise),
// and Euler-Maruyama's stationary variance along it is the target's times
//
//	(1 + c^2 Var[e]/v) / (1 - a/2):
//
// the discretisation widens the sd by sqrt(1/(1 - a/2)) = sqrt(2/(1 +
// rho)), the gradient noise by sqrt(1 + c^2 Var[e]/v), the injected
// variance plus the noise's over the injected (its share s gives 1/(1 -
// s)). The watch keeps, per coordinate, the sums of delta w, w^2, delta^2,
// delta dy and dy^2 over pairs of successive steps, and for chains of at
// most MaxCoordUnits coordinates the same D x D outer products, whose
// symmetric curvature matrix's eigen-directions are graded as well
// (LangevinFigures). Plain data, checkpointed with the Health; memory
// O(D) (O(D^2) for small chains), cost per step the same.
type LangevinWatch struct {
	// Dim is the chain's dimension; the long-run sums (Scales) are kept
	// for every Stride-th coordinate (LangevinStride), so that a large
	// model's watch holds them for at most about MaxLangevinCoords. Steps
	// counts the pairs summed; Unmeasured says why the watch measures
	// nothing (a non-diagonal mass).
	Dim, Stride, Steps int
	Unmeasured         string
	// DW, WW, DD, DY and YY are the per-coordinate sums of delta w, w^2,
	// delta^2, delta dy and dy^2.
	DW, WW, DD, DY, YY []float64
	// Drift, Drift2 and Inj sum c, c^2 and v over the pairs' steps.
	Drift, Drift2, Inj float64
	// MDW, MDD, MDY and MYY are the sums of the outer products delta w',
	// delta delta', delta dy' and dy dy', D x D row-major (nil for more
	// than MaxCoordUnits coordinates).
	MDW, MDD, MDY, MYY []float64
	// PrevG and PrevY are the last step's G (at its start) and y (at its
	// end), PrevW and PrevDY its injected noise and displacement; PrevN
	// says how many of them are set (0: none, 1: PrevG and PrevY, 2: all):
	// an exchange, or a step before the watch, unsets them.
	PrevG, PrevY, PrevW, PrevDY []float64
	PrevN                       int
	// Scales are the long-run sums at block lengths 1 to
	// LangevinMaxL (nil in a watch from before them: the per-step noise
	// alone).
	Scales        []ScaleSums
	delta, gs, ys []float64
}

// MaxLangevinCoords is about the most coordinates the SGLD watch keeps
// long-run sums for (42 numbers each, checkpointed, besides the 9 every
// coordinate has): a larger chain's watch keeps them for every
// LangevinStride-th coordinate, and borrows their time structure for the
// coordinates between (LangevinFigures.Stride).
const MaxLangevinCoords = 4096

// LangevinStride returns the spacing of the coordinates the SGLD watch
// keeps for a chain of d coordinates: 1 up to MaxLangevinCoords, then
// ceil(d / MaxLangevinCoords).
func LangevinStride(d int) int { return max(1, (d+MaxLangevinCoords-1)/MaxLangevinCoords) }

// reset starts the watch afresh for a chain of d coordinates.
func (w *LangevinWatch) reset(d int) {
	stride := LangevinStride(d)
	*w = LangevinWatch{Dim: d, Stride: stride}
	w.DW, w.WW, w.DD, w.DY, w.YY = make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	w.PrevG, w.PrevY, w.PrevW, w.PrevDY = make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	if d <= MaxCoordUnits {
		w.MDW, w.MDD, w.MDY, w.MYY = make([]float64, d*d), make([]float64, d*d), make([]float64, d*d), make([]float64, d*d)
	}
	w.Scales = newScales((d + stride - 1) / stride)
}

// Forget makes the next step pair with none before it (an exchange moved
// the chain, or the mass changed).
func (w *LangevinWatch) Forget() { w.PrevN = 0 }

// observe adds the SGLD step just taken on s (s.Grad the stochastic
// gradient at its start, s.Theta its end) at drift scale c and injected
// variance v (sampler.SGLD.Scales): the step's G and y at its start to
// the long-run sums, the pair of the last step and this one's start to
// the sums (and outer products) of pairs, and the step kept for the next.
// The long-run sums and outer products read the last step's values
// before sweep moves them on.
func (w *LangevinWatch) observe(s *sampler.State, c, v float64) {
	if s.Mass == nil && s.MassMatrix() != nil {
		w.Unmeasured = "a dense or low-rank mass (the watch measures in a diagonal mass's metric)"
		return
	}
	d := len(s.Theta)
	if w.Dim != d || len(w.PrevG) != d {
		w.reset(d)
	}
	if w.PrevN >= 1 {
		w.addScales(s)
	}
	if w.PrevN >= 2 {
		if w.MDW != nil {
			w.outer(s)
		}
		w.Steps++
		w.Drift += c
		w.Drift2 += c * c
		w.Inj += v
	}
	w.sweep(s, c)
	w.PrevN = min(w.PrevN+1, 2)
}

// metric returns coordinate i of the step in the mass's metric: G =
// M^-1/2 grad U~ at its start and y = M^1/2 theta at its end (M the
// diagonal mass, I without one).
func metric(s *sampler.State, i int) (g, y float64) {
	sq := 1.0
	if s.Mass != nil {
		sq = math.Sqrt(s.Mass[i])
	}
	return s.Grad[i] / sq, s.Theta[i] * sq
}

// sweep is observe's pass over the coordinates: the pair of the last step
// (PrevW, PrevDY) with the gradient's change delta = G - PrevG to this
// step's start (the sums DW, WW, DD, DY, YY, when PrevN >= 2), the last
// step's injected noise w = dy + c G and displacement dy (when PrevN >=
// 1), and this step's G and y kept for the next.
func (w *LangevinWatch) sweep(s *sampler.State, c float64) {
	paired, kept := w.PrevN >= 2, w.PrevN >= 1
	for i := range s.Theta {
		g, y := metric(s, i)
		if paired {
			dl := g - w.PrevG[i]
			wi, dy := w.PrevW[i], w.PrevDY[i]
			w.DW[i] += dl * wi
			w.WW[i] += wi * wi
			w.DD[i] += dl * dl
			w.DY[i] += dl * dy
			w.YY[i] += dy * dy
		}
		if kept {
			w.PrevDY[i] = y - w.PrevY[i]
			w.PrevW[i] = w.PrevDY[i] + c*g
		}
		w.PrevG[i], w.PrevY[i] = g, y
	}
}

// addScales adds the step's G and y at its start (PrevY) of every
// Stride-th coordinate to the long-run sums.
func (w *LangevinWatch) addScales(s *sampler.State) {
	st := max(w.Stride, 1)
	if len(w.gs) != len(w.Scales[0].BG) {
		w.gs, w.ys = make([]float64, len(w.Scales[0].BG)), make([]float64, len(w.Scales[0].BG))
	}
	for j := range w.gs {
		w.gs[j], _ = metric(s, j*st)
		w.ys[j] = w.PrevY[j*st]
	}
	for k := range w.Scales {
		w.Scales[k].add(w.gs, w.ys)
	}
}

// outer adds the pair's outer products (MDW, MDD, MDY, MYY) of a chain of
// at most MaxCoordUnits coordinates: delta = G - PrevG against the last
// step's injected noise and displacement.
func (w *LangevinWatch) outer(s *sampler.State) {
	d := w.Dim
	if len(w.delta) != d {
		w.delta = make([]float64, d)
	}
	for i := range w.delta {
		g, _ := metric(s, i)
		w.delta[i] = g - w.PrevG[i]
	}
	for a, da := range w.delta {
		ya := w.PrevDY[a]
		row := a * d
		for b := 0; b < d; b++ {
			w.MDW[row+b] += da * w.PrevW[b]
			w.MDD[row+b] += da * w.delta[b]
			w.MDY[row+b] += da * w.PrevDY[b]
			w.MYY[row+b] += ya * w.PrevDY[b]
		}
	}
}

// ObserveLangevin records one SGLD step on chain s at drift scale c and
// injected variance v (sampler.SGLD.Scales) for step number step, in
// health windows of window steps (0: DefaultHealthWindow): after burn-in
// in the watch (Langevin), and at the end of each window its figures in
// Last (graded, counted after burn-in as the frictional windows are). It
// returns true at the end of a window. driver.StepHealth calls it after
// each step of an SGLD kernel.
func (hl *Health) ObserveLangevin(s *sampler.State, c, v float64, step, window int, afterBurnIn bool) bool {
	if window <= 0 {
		window = DefaultHealthWindow
	}
	if hl.Langevin == nil {
		hl.Langevin = &LangevinWatch{}
	}
	if afterBurnIn {
		hl.Langevin.observe(s, c, v)
	}
	if hl.Steps++; hl.Steps < window {
		return false
	}
	fig := hl.langevinFigures(step, window, len(s.Theta))
	hl.Last = fig
	hl.Windows++
	hl.Steps = 0
	if afterBurnIn {
		hl.tally(fig)
	}
	return true
}

// langevinFigures returns the SGLD watch's figures over every step after
// burn-in so far, as HealthFigures of the window of window steps ending at
// step (their LangevinFigures count the steps summed).
func (hl *Health) langevinFigures(step, window, dim int) HealthFigures {
	lf := hl.Langevin.Figures(hl.Exact)
	f := HealthFigures{Step: step, Steps: window, Dim: dim, Injected: lf.Injected, Share: lf.MeanShare, Exact: hl.Exact, Langevin: &lf}
	f.Status = lf.Status
	return f
}

// langevinVerdict is Verdict for an SGLD chain: the watch's figures over
// every step after burn-in (not the worst window's: each window's figures
// are those of the steps so far, the last the most precise), with the
// chain's mixing.
func (hl *Health) langevinVerdict() (HealthStatus, HealthFigures) {
	if hl.After == 0 {
		return hl.Worst, hl.WorstWindow
	}
	fig := hl.langevinFigures(hl.Last.Step, hl.Last.Steps, hl.Last.Dim)
	fig.Mix = hl.Mixing()
	if m := fig.Mix; m.Unsure() {
		fig.Coord.addUnchecked(unsureText(m))
	}
	if lf := fig.Langevin; lf.Unmeasured != "" {
		fig.Coord.addUnchecked("the gradient noise and the discretisation's widening under " + lf.Unmeasured)
	}
	fig.Status = max(fig.Status, fig.mixGrade(), fig.Coord.Status)
	return fig.Status, fig
}
