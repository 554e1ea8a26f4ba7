package health

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// LangevinUnit is one graded unit of the SGLD watch: a coordinate, or an
// eigen-direction of the measured curvature (chains of at most
// MaxCoordUnits coordinates), in the mass's metric.
type LangevinUnit struct {
	// Coord is the coordinate (-1 for a direction); Direction a
	// direction's unit vector (nil for a coordinate).
	Coord     int       `json:"coord"`
	Direction []float64 `json:"direction,omitempty"`
	// Contraction is the step's contraction a = c H along the unit (1 -
	// its lag-1 autocorrelation on a Gaussian), ContractionTol its
	// statistical tolerance.
	Contraction    float64 `json:"contraction"`
	ContractionTol float64 `json:"contraction_tol"`
	// Noise is the gradient noise's variance per step, c^2 Var[G~], and
	// NoiseTol its tolerance; Injected the injected variance v; Share
	// Noise / (Noise + Injected).
	Noise    float64 `json:"noise"`
	NoiseTol float64 `json:"noise_tol"`
	Injected float64 `json:"injected"`
	Share    float64 `json:"share"`
	// IntSD is the discretisation's widening of the sd, sqrt(1/(1 - a/2))
	// - 1 (+Inf for a >= 2: unstable), NoiseSD the noise's, sqrt(1 +
	// Noise/Injected) - 1; SD both together, and SDLow SD with a and Noise
	// at the lower ends of their tolerances: the widening beyond chance,
	// which the grade compares with WarnIntSD and FailIntSD.
	IntSD   float64 `json:"int_sd"`
	NoiseSD float64 `json:"noise_sd"`
	SD      float64 `json:"sd"`
	SDLow   float64 `json:"sd_low"`
	// IntLow and NoiseLow are the two factors of SDLow's variance ratio:
	// which is the larger names the cause.
	IntLow   float64 `json:"int_low"`
	NoiseLow float64 `json:"noise_low"`
}

// LangevinFigures are an SGLD chain's figures after burn-in
// (LangevinWatch.Figures).
type LangevinFigures struct {
	// Dim is the chain's dimension, Stride the spacing of the coordinates
	// whose long-run noise is measured (LangevinStride; the others borrow
	// it, LangevinWatch.coordLongRun).
	Steps  int `json:"steps"`
	Dim    int `json:"dim"`
	Stride int `json:"stride"`
	// Injected is the mean injected variance per step v, Drift the mean
	// drift scale c.
	Injected float64 `json:"injected"`
	Drift    float64 `json:"drift"`
	// MeanShare is the gradient noise's share over all coordinates.
	MeanShare float64 `json:"mean_share"`
	// Worst is the unit (coordinate or direction) of the largest SDLow;
	// Noisiest the one of the largest noise share, Stiffest the one of the
	// largest contraction.
	Worst    LangevinUnit `json:"worst"`
	Noisiest LangevinUnit `json:"noisiest"`
	Stiffest LangevinUnit `json:"stiffest"`
	// Unsure is the unit of the largest SD among those that read more
	// than FailIntSD wide but not beyond WarnIntSD beyond chance (their
	// tolerance too wide to tell: a soft direction's long-run noise, whose
	// curvature is known only roughly, or a short run); with one the
	// figures warn, unchecked, when nothing fails. Nil when none.
	Unsure *LangevinUnit `json:"unsure,omitempty"`
	// Directions says the eigen-directions were graded.
	Directions bool `json:"directions"`
	// Unmeasured says why nothing was measured (a non-diagonal mass).
	Unmeasured string       `json:"unmeasured"`
	Exact      bool         `json:"exact"`
	Status     HealthStatus `json:"status"`
}

// unitSums are a unit's means over the pairs: of delta w, w^2 and
// delta^2, and its gradient noise's variance Var[G~] (in G's units).
type unitSums struct {
	dw, ww, dd, noiseG float64
	// per is the unit's long-run noise variance at scale k (NaN: not
	// measured), and its position's (ScaleSums.noise); nil: none.
	per func(k int) (float64, float64)
}

// coordSums returns coordinate i's unitSums over n pairs, its noise from
// its own residual delta - H_ii dy (the other coordinates' part of the
// gradient's change then reads as noise: the matrix's residual, used for
// small chains, has none).
func (w *LangevinWatch) coordSums(i int, n float64) unitSums {
	u := unitSums{dw: w.DW[i] / n, ww: w.WW[i] / n, dd: w.DD[i] / n}
	if u.ww > 0 {
		h := u.dw / u.ww
		u.noiseG = (u.dd - 2*h*w.DY[i]/n + h*h*w.YY[i]/n) / 2
	}
	return u
}

// unitFigures returns a unit's figures from its sums s over n pairs, at
// mean drift c, mean squared drift c2 and injected variance v, with tolSE
// standard errors in the tolerances. With exact gradients the noise is
// taken as 0 (what the formula reads is U's departure from a quadratic).
// The noise is the smaller of its per-step variance (from the successive
// gradients' differences: right for independent minibatches) and its
// long-run variance at the unit's relaxation (longRun: right for
// minibatches drawn in epochs, whose anti-correlated noises partly cancel
// over it).
func unitFigures(s unitSums, scales []ScaleSums, n, c, c2, v, tolSE float64, exact bool) LangevinUnit {
	u := LangevinUnit{Injected: v}
	if s.ww <= 0 {
		return u
	}
	h := s.dw / s.ww
	hSE := math.Sqrt(s.dd*s.ww/n) / s.ww
	noiseG := math.Max(s.noiseG, 0)
	tolG := tolSE * noiseG * math.Sqrt(3/n)
	u.Contraction, u.ContractionTol = c*h, tolSE*c*hSE
	if s.per != nil && scales != nil {
		lr, lt, ok := longRun(u.Contraction, tolSE*tolSE*hSE*hSE, tolSE, scales, s.per)
		if ok && lr < noiseG {
			noiseG = math.Max(lr, 0)
		}
		if low := lr - lt; ok && low < noiseG-tolG { // the lower bound of the smaller
			tolG = noiseG - low
		}
	}
	if !exact {
		u.Noise, u.NoiseTol = c2*noiseG, c2*tolG
	}
	if v > 0 {
		u.Share = u.Noise / (u.Noise + v)
		u.NoiseSD = math.Sqrt(1+u.Noise/v) - 1
		u.NoiseLow = 1 + math.Max(u.Noise-u.NoiseTol, 0)/v
	}
	u.IntSD = math.Sqrt(intFactor(u.Contraction)) - 1
	u.IntLow = intFactor(math.Max(u.Contraction-u.ContractionTol, 0))
	u.SD = math.Sqrt(intFactor(u.Contraction)*(1+u.Noise/math.Max(v, 1e-300))) - 1
	u.SDLow = math.Sqrt(u.IntLow*math.Max(u.NoiseLow, 1)) - 1
	return u
}

// intFactor returns Euler-Maruyama's stationary variance over the target's
// along a direction of contraction a, 1/(1 - a/2) (+Inf at a >= 2).
func intFactor(a float64) float64 {
	if a >= 2 {
		return math.Inf(1)
	}
	return 1 / (1 - a/2)
}

// unstable reports whether the step diverges along the unit: a
// contraction of 2 or more (Euler-Maruyama's |1 - a| >= 1).
func (u LangevinUnit) unstable() bool { return u.Contraction >= 2 }

// severity is the unit's SDLow, or +Inf when its step is unstable (a
// contraction of 2 or more: the discretisation diverges along it, whatever
// the tolerance, which grows with the diverging chain and leaves SDLow
// near 0) or SDLow is NaN (a sum that is not finite).
func (u LangevinUnit) severity() float64 {
	if u.unstable() || math.IsNaN(u.SDLow) {
		return math.Inf(1)
	}
	return u.SDLow
}

// grade returns the unit's status: fail when its severity exceeds
// FailIntSD, warn above WarnIntSD (the sd tolerances of the frictional
// watch's integration error: 10% and 5%).
func (u LangevinUnit) grade() HealthStatus {
	switch sev := u.severity(); {
	case sev > FailIntSD:
		return HealthFail
	case sev > WarnIntSD:
		return HealthWarn
	}
	return HealthOK
}

// MarshalJSON writes the unit with its figures that are not finite (an
// unstable step's widening, +Inf) as null: JSON has no infinities, and
// eval --json failed on the report of the chain it most needed to flag.
func (u LangevinUnit) MarshalJSON() ([]byte, error) {
	f := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		Coord          int       `json:"coord"`
		Direction      []float64 `json:"direction,omitempty"`
		Contraction    *float64  `json:"contraction"`
		ContractionTol *float64  `json:"contraction_tol"`
		Noise          *float64  `json:"noise"`
		NoiseTol       *float64  `json:"noise_tol"`
		Injected       *float64  `json:"injected"`
		Share          *float64  `json:"share"`
		IntSD          *float64  `json:"int_sd"`
		NoiseSD        *float64  `json:"noise_sd"`
		SD             *float64  `json:"sd"`
		SDLow          *float64  `json:"sd_low"`
		IntLow         *float64  `json:"int_low"`
		NoiseLow       *float64  `json:"noise_low"`
	}{u.Coord, u.Direction, f(u.Contraction), f(u.ContractionTol), f(u.Noise), f(u.NoiseTol), f(u.Injected), f(u.Share),
		f(u.IntSD), f(u.NoiseSD), f(u.SD), f(u.SDLow), f(u.IntLow), f(u.NoiseLow)})
}

// Figures returns the watch's figures, graded: every coordinate and, for
// chains of at most MaxCoordUnits coordinates, every eigen-direction of
// the measured curvature's symmetric part, its worst unit's SDLow against
// WarnIntSD and FailIntSD (tolerances of CoordTolSE standard errors of
// the number of units). Fewer than 2 pairs: not graded (ok).
func (w *LangevinWatch) Figures(exact bool) LangevinFigures {
	out := LangevinFigures{Steps: w.Steps, Dim: w.Dim, Stride: max(w.Stride, 1), Unmeasured: w.Unmeasured, Exact: exact}
	if w.Steps < 2 || w.Dim == 0 {
		return out
	}
	n := float64(w.Steps)
	c, c2, v := w.Drift/n, w.Drift2/n, w.Inj/n
	out.Injected, out.Drift = v, c
	units := w.Dim
	if w.MDW != nil {
		units *= 2
	}
	tolSE := CoordTolSE(units)
	noise := 0.0
	first := true
	note := func(u LangevinUnit) {
		if u.SD > FailIntSD && u.SDLow <= WarnIntSD && (out.Unsure == nil || u.SD > out.Unsure.SD) {
			uu := u
			out.Unsure = &uu
		}
		if first || u.severity() > out.Worst.severity() {
			out.Worst = u
		}
		if first || u.Share > out.Noisiest.Share {
			out.Noisiest = u
		}
		if first || u.Contraction > out.Stiffest.Contraction {
			out.Stiffest = u
		}
		first = false
	}
	var dirs []LangevinUnit
	var resid *mat.Dense
	var hs *mat.SymDense
	if w.MDW != nil {
		hs = w.curvature(n)
	}
	long := w.longRunNoise(hs, n)
	if hs != nil {
		var err error
		if dirs, resid, err = w.directions(hs, long, n, c, c2, v, tolSE, exact); err == nil {
			out.Directions = true
		}
	}
	for i := 0; i < w.Dim; i++ {
		s := w.coordSums(i, n)
		if resid != nil {
			s.noiseG = resid.At(i, i)
		}
		s.per = w.coordLongRun(i, long, s.noiseG, n)
		u := unitFigures(s, w.Scales, n, c, c2, v, tolSE, exact)
		u.Coord = i
		noise += u.Noise
		note(u)
	}
	if tot := noise + v*float64(w.Dim); tot > 0 {
		out.MeanShare = noise / tot
	}
	for _, u := range dirs {
		note(u)
	}
	out.Status = out.Worst.grade()
	if out.Status == HealthOK && out.Unsure != nil {
		out.Status = HealthWarn
	}
	return out
}

// directions returns the figures of the eigen-directions of the symmetric
// part H of the measured curvature E[delta w']/E[w^2], and the gradient
// noise's covariance E[(delta - H dy)(delta - H dy)']/2.
func (w *LangevinWatch) directions(h *mat.SymDense, long [][2][]float64, n, c, c2, v, tolSE float64, exact bool) ([]LangevinUnit, *mat.Dense, error) {
	d := w.Dim
	ww := w.meanWW(n)
	resid := w.residual(h, n)
	var es mat.EigenSym
	if !es.Factorize(h, true) {
		return nil, nil, fmt.Errorf("langevin watch: eigen-decomposition failed")
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	out := make([]LangevinUnit, d)
	for k := range out {
		vec := mat.Col(nil, k, &vecs)
		vv := mat.NewVecDense(d, vec)
		s := unitSums{dw: quad(w.MDW, vec) / n, ww: ww, dd: quad(w.MDD, vec) / n, noiseG: mat.Inner(vv, resid, vv)}
		s.per = func(k int) (float64, float64) {
			if long[k][0] == nil {
				return math.NaN(), 0
			}
			return quad(long[k][0], vec), quad(long[k][1], vec)
		}
		out[k] = unitFigures(s, w.Scales, n, c, c2, v, tolSE, exact)
		out[k].Coord, out[k].Direction = -1, vec
	}
	return out, resid, nil
}

// coordLongRun returns coordinate i's long-run noise by scale (unitSums'
// per), from the long-run covariances long (ScaleSums.noise): its own with
// a stride of 1; else, with noiseG its per-step noise over n pairs, that
// of the nearest coordinate below it that has long-run sums (every
// Stride-th), scaled by the two per-step noises' ratio (the time
// structure of a neighbour in the layout, usually of the same layer).
func (w *LangevinWatch) coordLongRun(i int, long [][2][]float64, noiseG, n float64) func(k int) (float64, float64) {
	st := max(w.Stride, 1)
	j := i / st
	ratio := 1.0
	if st > 1 {
		ref := w.coordSums(j*st, n).noiseG
		if !(ref > 0) {
			return nil
		}
		ratio = math.Max(noiseG, 0) / ref
	}
	return func(k int) (float64, float64) {
		switch r, y := long[k][0], long[k][1]; {
		case r == nil:
			return math.NaN(), 0
		case st == 1 && len(r) == w.Dim*w.Dim && w.Dim > 1:
			return r[i*w.Dim+i], y[i*w.Dim+i]
		default:
			return ratio * r[j], y[j]
		}
	}
}

// meanWW returns the injected noise's measured variance per step and
// coordinate, over n pairs.
func (w *LangevinWatch) meanWW(n float64) float64 {
	ww := 0.0
	for _, x := range w.WW {
		ww += x
	}
	return ww / (float64(w.Dim) * n)
}

// curvature returns the symmetric part of the measured curvature
// E[delta w']/E[w^2] (D x D), over n pairs.
func (w *LangevinWatch) curvature(n float64) *mat.SymDense {
	d := w.Dim
	ww := w.meanWW(n)
	h := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			h.SetSym(a, b, (w.MDW[a*d+b]+w.MDW[b*d+a])/(2*n*ww))
		}
	}
	return h
}

// longRunNoise returns the noise's long-run covariance at each scale
// (ScaleSums.noise) by the curvature hs, or by each coordinate's own
// curvature when hs is nil (large chains).
func (w *LangevinWatch) longRunNoise(hs *mat.SymDense, n float64) [][2][]float64 {
	if len(w.Scales) == 0 { // a watch of a checkpoint before the long-run sums: the per-step noise alone
		return nil
	}
	st := max(w.Stride, 1)
	hd := make([]float64, len(w.Scales[0].BG))
	for j := range hd {
		if i := j * st; w.WW[i] > 0 {
			hd[j] = w.DW[i] / w.WW[i]
		}
	}
	out := make([][2][]float64, len(w.Scales))
	for k := range w.Scales {
		out[k][0], out[k][1] = w.Scales[k].noise(hs, hd)
	}
	return out
}

// residual returns the gradient noise's covariance (in G's units) by the
// curvature h: (E[delta delta'] - h E[dy delta'] - E[delta dy'] h + h
// E[dy dy'] h)/2, means over n pairs.
func (w *LangevinWatch) residual(h *mat.SymDense, n float64) *mat.Dense {
	d := w.Dim
	dd := mat.NewDense(d, d, append([]float64(nil), w.MDD...))
	dy := mat.NewDense(d, d, append([]float64(nil), w.MDY...))
	yy := mat.NewDense(d, d, append([]float64(nil), w.MYY...))
	var t, r mat.Dense
	t.Mul(dy, h) // E[delta dy'] h
	r.Sub(dd, &t)
	r.Sub(&r, t.T()) // h E[dy delta']
	t.Mul(h, yy)
	t.Mul(&t, h)
	r.Add(&r, &t)
	r.Scale(0.5/n, &r)
	return &r
}

// quad returns v'Mv for the D x D row-major M.
func quad(m, v []float64) float64 {
	d := len(v)
	s := 0.0
	for a, va := range v {
		for b, vb := range v {
			s += va * m[a*d+b] * vb
		}
	}
	return s
}

// Cause returns the main cause of the figures' problems: gradient noise
// when its factor of the worst unit's variance beyond chance exceeds the
// discretisation's, else integration error; CauseNone when ok.
func (f LangevinFigures) Cause() HealthCause {
	switch {
	case f.Status == HealthOK:
		return CauseNone
	case f.Worst.grade() == HealthOK:
		return CauseUnchecked
	case f.Worst.unstable():
		return CauseIntegration
	case !f.Exact && f.Worst.NoiseLow > f.Worst.IntLow:
		return CauseNoise
	}
	return CauseIntegration
}

// Name names the unit.
func (u LangevinUnit) Name() string {
	if u.Direction == nil {
		return fmt.Sprintf("coordinate %d", u.Coord)
	}
	return DirFigures{Direction: u.Direction}.describe()
}

// String summarises the unit's figures.
func (u LangevinUnit) String() string {
	return fmt.Sprintf("%s: sd %+.1f%% (beyond chance %+.1f%%; step's contraction %.3g +- %.2g: discretisation %+.1f%%; gradient noise %.3g +- %.2g per step against %.3g injected, share %.0f%%: %+.1f%%)",
		u.Name(), 100*u.SD, 100*u.SDLow, u.Contraction, u.ContractionTol, 100*u.IntSD, u.Noise, u.NoiseTol, u.Injected, 100*u.Share, 100*u.NoiseSD)
}

// String summarises the figures on one line.
func (f LangevinFigures) String() string {
	if f.Unmeasured != "" {
		return "SGLD watch: not measured (" + f.Unmeasured + ")"
	}
	if f.Steps < 2 {
		return "SGLD watch: no steps after burn-in yet"
	}
	what := "coordinates"
	if f.Stride > 1 {
		what = fmt.Sprintf("coordinates, the noise's time structure from every %d-th", f.Stride)
	}
	if f.Directions {
		what = "coordinates and directions"
	}
	return fmt.Sprintf("SGLD watch (%d steps after burn-in, %d %s): gradient noise %.0f%% of the diffusion over all coordinates; worst %s; noisiest %s share %.0f%%; stiffest %s contraction %.3g",
		f.Steps, f.Dim, what, 100*f.MeanShare, f.Worst, f.Noisiest.Name(), 100*f.Noisiest.Share, f.Stiffest.Name(), f.Stiffest.Contraction)
}

// Problems returns the figures' problems in words, with the fix: empty
// when ok.
func (f LangevinFigures) Problems() []string {
	if f.Status == HealthOK {
		return nil
	}
	u := f.Worst
	var out []string
	if f.Cause() == CauseUnchecked {
		x := f.Unsure
		return []string{fmt.Sprintf("could not check %s: its sd reads %+.0f%% wide (gradient noise %.3g +- %.2g per step against %.3g injected, contraction %.3g +- %.2g) but only %+.0f%% beyond chance: run longer after burn-in (--steps), so that its noise's time structure and its curvature are measured within the tolerance",
			x.Name(), 100*x.SD, x.Noise, x.NoiseTol, x.Injected, x.Contraction, x.ContractionTol, 100*x.SDLow)}
	}
	if f.Cause() == CauseNoise {
		out = append(out, fmt.Sprintf("gradient noise: %s's sd is about %.0f%% wide (%.0f%% beyond chance): SGLD has no friction to absorb the minibatch noise, %.3g +- %.2g per step against %.3g injected (share %.0f%%; %.0f%% over all coordinates), so every bit of it widens the posterior: a larger --batch, a preconditioner, or a smaller --lr (the noise's share falls as the lr)",
			u.Name(), 100*u.SD, 100*u.SDLow, u.Noise, u.NoiseTol, u.Injected, 100*u.Share, 100*f.MeanShare))
	} else {
		out = append(out, fmt.Sprintf("discretisation (integration) error: the step contracts %s by %.3g +- %.2g per step (its lag-1 autocorrelation %.3f), and Euler-Maruyama's stationary sd along it is then sqrt(2/(1 + rho)) = %.0f%% wide, %.0f%% with the gradient noise (%.0f%% beyond chance): a smaller --lr (the widening grows about as the lr); a larger --batch will not help",
			u.Name(), u.Contraction, u.ContractionTol, 1-u.Contraction, 100*u.IntSD, 100*u.SD, 100*u.SDLow))
	}
	return out
}

// Key names the figure behind the cause in a few words.
func (f LangevinFigures) Key() string {
	u := f.Worst
	return fmt.Sprintf("%s: sd %+.0f%% (beyond chance %+.0f%%), discretisation %+.0f%%, noise share %.0f%%", u.Name(), 100*u.SD, 100*u.SDLow, 100*u.IntSD, 100*u.Share)
}

// describeLangevin is HealthFigures.String for an SGLD chain's figures.
func (f HealthFigures) describeLangevin() string {
	s := fmt.Sprintf("%s: %s", f.Status, f.Langevin)
	if p := f.Problems(); len(p) > 0 {
		s += ": " + strings.Join(p, "; ")
	}
	return s
}
