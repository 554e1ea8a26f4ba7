package health

import (
	"fmt"
	"math"
)

// MinMixESS is the smallest effective sample size, in every coordinate
// whose mixing is graded, with which a chain's verdict can be ok or warn.
// A marginal sd estimated from n effective draws has a relative standard
// error of about 1/sqrt(2 n) (Gaussian draws): 7.1% at 100, so an sd
// more than 15% off is then beyond 2 standard errors; it is also Stan's
// and ArviZ's usual minimum per chain (Vehtari et al. 2021 ask for 100
// per chain, 400 over four). Below it the chain has not mixed enough for
// its sds to be bounded within about 15%, whatever its dynamics.
const MinMixESS = 100

// MixFigures are a chain's mixing figures after burn-in
// (Health.Mixing): the bulk effective sample sizes (convergence.BulkESS,
// rank-normalised, Geyer's initial monotone sequence, split halves) of its
// energy U/T and, when its run traces them (driver.StepHealth.MixCoords), of
// every coordinate, estimated from the chain thinned by doubling to at most
// convergence.TraceCap points (an ESS above a few hundred reads as about
// the points held: enough to tell it from MinMixESS).
type MixFigures struct {
	// Draws is the number of steps after burn-in traced; Points the points
	// held (every Stride-th draw).
	Draws  int `json:"draws"`
	Points int `json:"points"`
	Stride int `json:"stride"`
	// EnergyESS is the ESS of U/T (0 with fewer than 8 points). It is
	// reported, not graded: with minibatches U/T is an estimate whose
	// noise makes its ESS read high, and a network's energy mixes at its
	// own pace, not its weights'.
	EnergyESS float64 `json:"energy_ess"`
	// Graded is whether the coordinates were traced, and so graded; ESS
	// is then the smallest coordinate ESS, at Coord (0-based; 0 when too
	// few points: a chain too short after burn-in to tell).
	Graded bool    `json:"graded"`
	ESS    float64 `json:"ess"`
	Coord  int     `json:"coord"`
	// Watched is whether the coordinates were traced though not graded
	// (a model of at most MaxCoordUnits coordinates run without
	// driver.StepHealth.MixCoords, Health.MixWatch): ESS and Coord are then
	// their least mixed one's, and a chain short of MinMixESS is not
	// called ok but unchecked (Unsure).
	Watched bool `json:"watched,omitempty"`
}

// Unsure reports whether the coordinates were watched, not graded, and
// the least mixed of them has fewer than MinMixESS effective draws: the
// verdict cannot tell its sds within about 15%, and says so (a warning,
// cause CauseUnchecked) instead of ok.
func (m MixFigures) Unsure() bool { return m.Watched && !(m.ESS >= MinMixESS) }

// Short reports whether the coordinates are graded and the least mixed
// of them has fewer than MinMixESS effective draws: the chain has not
// mixed enough for its sds to be bounded within about 15%.
func (m MixFigures) Short() bool { return m.Graded && !(m.ESS >= MinMixESS) }

// LongerFactor returns about how many times as many steps after burn-in
// the chain needs for MinMixESS effective draws in its least mixed
// coordinate (the ESS grows about as the steps): MinMixESS/ESS, at least
// 1. A chain that has not yet crossed its posterior reads an ESS too high
// (it cannot see what it never visited), so the factor is a lower bound.
func (m MixFigures) LongerFactor() float64 {
	return math.Max(MinMixESS/math.Max(m.ESS, 1), 1)
}

// String describes the mixing in a few words.
func (m MixFigures) String() string {
	if m.Draws == 0 {
		return "mixing: no draws after burn-in"
	}
	s := fmt.Sprintf("mixing: %d steps after burn-in (%d points, every %d), energy U/T ESS %.0f", m.Draws, m.Points, m.Stride, m.EnergyESS)
	if m.Graded {
		s += fmt.Sprintf(", smallest coordinate ESS %.0f (coordinate %d; %d needed)", m.ESS, m.Coord, MinMixESS)
	} else {
		s += " (coordinates not graded)"
	}
	return s
}

// NoteDraw records the chain's state after a step after burn-in: its
// energy U/T and, when coords is true, its position theta (driver.StepHealth
// calls it for every step after burn-in, with coords from StepHealth.MixCoords;
// the first call fixes whether coordinates are traced).
func (hl *Health) NoteDraw(uOverT float64, theta []float64, coords bool) {
	if math.IsNaN(uOverT) || math.IsInf(uOverT, 0) { // no energy this step
		return
	}
	if hl.Mix.Seen == 0 {
		hl.MixCoords = coords
		hl.MixWatch = !coords && len(theta) <= MaxCoordUnits
	}
	if !hl.MixCoords && !hl.MixWatch {
		hl.Mix.Add(uOverT)
		return
	}
	if cap(hl.mixBuf) < len(theta)+1 {
		hl.mixBuf = make([]float64, len(theta)+1)
	}
	v := hl.mixBuf[:len(theta)+1]
	v[0] = uOverT
	copy(v[1:], theta)
	hl.Mix.Add(v...)
}

// Mixing returns the chain's mixing figures after burn-in, from the draws
// NoteDraw recorded.
func (hl *Health) Mixing() MixFigures {
	t := &hl.Mix
	m := MixFigures{Draws: t.Seen, Points: t.Points(), Stride: t.Stride, Graded: hl.MixCoords && len(t.Series) > 1,
		Watched: hl.MixWatch && !hl.MixCoords && len(t.Series) > 1}
	if m.Points < 8 {
		return m
	}
	if e, err := t.ESS(0); err == nil && !math.IsNaN(e) {
		m.EnergyESS = e
	}
	if !m.Graded && !m.Watched {
		return m
	}
	m.ESS = math.Inf(1)
	for k := 1; k < len(t.Series); k++ {
		e, err := t.ESS(k)
		if err != nil || math.IsNaN(e) { // a coordinate that never moved
			e = 0
		}
		if e < m.ESS {
			m.ESS, m.Coord = e, k-1
		}
	}
	return m
}
