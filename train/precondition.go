package train

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Preconditioning returns what the run's preconditioner and noise
// correction did, one line per rung: the spread of the rung's masses
// (smallest, median, largest) and of its injection scales, or "" when the
// run uses neither (or has not reached the first estimate).
func (r *Run) Preconditioning() string {
	var b strings.Builder
	for j, s := range r.state.Rungs {
		var parts []string
		if s.Mass != nil {
			lo, med, hi := spread(s.Mass)
			parts = append(parts, fmt.Sprintf("masses %.3g / %.3g / %.3g (least / median / most)", lo, med, hi))
		}
		switch m := s.MassMatrix().(type) {
		case *sampler.DenseMass:
			parts = append(parts, fmt.Sprintf("dense mass of %d coordinates", m.N))
		case *sampler.LowRankMass:
			parts = append(parts, fmt.Sprintf("low-rank mass of %d coordinates, correlation eigenvalues %s", len(m.Scale), fmtValues(m.Lambda)))
		}
		if s.InjScale != nil {
			lo, med, hi := spread(s.InjScale)
			parts = append(parts, fmt.Sprintf("injected-noise scales %.3g / %.3g / %.3g", lo, med, hi))
		}
		if len(parts) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  rung %d: %s\n", j+1, strings.Join(parts, "; "))
	}
	if b.Len() == 0 {
		return ""
	}
	head := fmt.Sprintf("preconditioner %s", r.Cfg.PreconditionValue())
	if sc := r.Cfg.MassScaleValue(); sc != adapt.MassScaleWidest {
		head += fmt.Sprintf(" (mass scale %s)", sc)
	}
	if r.Cfg.CorrectsNoise(r.Data.N) {
		head += ", per-coordinate noise correction"
		if r.Cfg.NoiseCeiling > 0 {
			head += fmt.Sprintf(" (masses raised where the noise per step exceeded %g of the injected at the end of burn-in)", r.Cfg.NoiseCeiling)
		}
		if r.Cfg.NoiseTrack {
			head += " (tracking the noise after burn-in)"
		}
	}
	if ends := adapt.MassWindowEnds(r.Cfg.BurnIn); r.Cfg.PreconditionValue() != adapt.PrecondNone && len(ends) > 0 {
		head += fmt.Sprintf(" (masses frozen from step %d)", ends[len(ends)-1])
	}
	return head + ":\n" + strings.TrimRight(b.String(), "\n")
}

// fmtValues returns v's values to 3 digits.
func fmtValues(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.3g", x)
	}
	return strings.Join(parts, " ")
}

// spread returns the smallest, median and largest of x.
func spread(x []float64) (lo, med, hi float64) {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[0], s[len(s)/2], s[len(s)-1]
}
