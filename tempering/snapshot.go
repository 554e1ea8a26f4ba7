package tempering

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Snapshot is a PT run's state as plain data: what a checkpoint saves
// (rundir.Checkpoint embeds it) and a run is restored from. PTState.Snapshot
// is the one mapping out, driver.Driver.Restore the one mapping back in, and Upgrade
// the one place where snapshots of older versions are brought up to date.
type Snapshot struct {
	Steps   int
	Rounds  int            // exchange rounds so far
	Rungs   []RungSnapshot // per rung
	Streams [][]byte       // per rung, then the exchange stream (sampler.Stream.MarshalBinary)
	Stats   PTStats
	Temps   []float64   // the current ladder
	Tuning  TuningState // ladder tuning progress and history
	// Mass holds each rung's preconditioner estimate while burn-in
	// estimates one (PTState.Mass).
	Mass []adapt.MassEstimate
	// Noise holds each rung's gradient-noise estimate while burn-in
	// estimates one (PTState.Noise).
	Noise []adapt.NoiseEstimate
}

// RungSnapshot is one rung's state as plain data: position, momentum,
// thermostat and energy, its mass (Mass its diagonal, or Dense or LowRank
// a non-diagonal one; all nil: unit mass), its noise correction (nil:
// none) and Extra, the state a sampler.StatefulKernel keeps of its own
// (sampler.MarshalExtra; nil for the built-in kernels). Snapshots written
// before the dense and low-rank masses have neither, as their runs had.
type RungSnapshot struct {
	Theta, P []float64
	Xi, U    float64
	Mass     []float64
	Dense    *sampler.DenseMass   `json:",omitempty"`
	LowRank  *sampler.LowRankMass `json:",omitempty"`
	InjScale []float64
	Extra    []byte
}

// MassMatrix returns the rung's mass as the sampler sets it
// (sampler.State.SetMassMatrix): nil for unit mass.
func (r RungSnapshot) MassMatrix() sampler.MassMatrix {
	switch {
	case r.Dense != nil:
		return r.Dense
	case r.LowRank != nil:
		return r.LowRank
	case r.Mass != nil:
		return sampler.DiagonalMass(r.Mass)
	}
	return nil
}

// rungMass returns the mass fields of a rung's snapshot; a mass of
// another type than the sampler's own has no snapshot.
func rungMass(s *sampler.State) (diag []float64, dense *sampler.DenseMass, low *sampler.LowRankMass, err error) {
	switch m := s.MassMatrix().(type) {
	case nil, sampler.DiagonalMass:
		return s.Mass, nil, nil, nil
	case *sampler.DenseMass:
		return nil, m, nil, nil
	case *sampler.LowRankMass:
		return nil, nil, m, nil
	default:
		return nil, nil, nil, fmt.Errorf("a mass of type %T has no snapshot", m)
	}
}

// Snapshot returns st as plain data, with what kernel k keeps of its own
// per rung. It shares st's slices: save it before stepping on.
func (st *PTState) Snapshot(k sampler.Kernel) (Snapshot, error) {
	s := Snapshot{Steps: st.Steps, Rounds: st.Rounds, Stats: st.Stats, Temps: st.Temps, Tuning: st.Tuning, Mass: st.Mass, Noise: st.Noise}
	for j, r := range st.Rungs {
		extra, err := sampler.MarshalExtra(k, r)
		if err != nil {
			return Snapshot{}, fmt.Errorf("rung %d: %w", j+1, err)
		}
		diag, dense, low, err := rungMass(r)
		if err != nil {
			return Snapshot{}, fmt.Errorf("rung %d: %w", j+1, err)
		}
		s.Rungs = append(s.Rungs, RungSnapshot{Theta: r.Theta, P: r.P, Xi: r.Xi, U: r.U, Mass: diag, Dense: dense, LowRank: low, InjScale: r.InjScale, Extra: extra})
	}
	for _, r := range st.Streams {
		b, err := r.MarshalBinary()
		if err != nil {
			return Snapshot{}, err
		}
		s.Streams = append(s.Streams, b)
	}
	return s, nil
}

// Figures returns a PTState holding s's steps, ladder, statistics and
// tuning, without rungs or streams: what reports of a run's state read.
func (s *Snapshot) Figures() *PTState {
	return &PTState{Steps: s.Steps, Temps: s.Temps, Stats: s.Stats, Tuning: s.Tuning}
}

// Upgrade brings a snapshot written by an older version up to date, one
// migration per version whose state lacked something, so that nothing on
// the step path depends on a snapshot's age. ladder is the run's
// configured ladder, for snapshots that did not record theirs. A snapshot
// of the current version is left as it is.
func (s *Snapshot) Upgrade(ladder []float64) {
	r := len(s.Rungs)
	pairs := max(r-1, 0)
	// before the ladder was state: the configured ladder throughout
	if s.Temps == nil {
		s.Temps = append([]float64(nil), ladder...)
	}
	// before window statistics: empty windows
	if s.Stats.WinProposed == nil && pairs > 0 {
		s.Stats.WinProposed, s.Stats.WinAccepted, s.Stats.WinReject = make([]int, pairs), make([]int, pairs), make([]float64, pairs)
	}
	// before swap probabilities: their sums start at the 0/1 counts
	s.Stats.SeedSwapProb(s.Steps)
	// before health watching: every rung's health unwatched so far
	if len(s.Stats.Health) != r {
		s.Stats.Health = make([]health.Health, r)
	}
	// before the tuning rounds' guards: round k was the k-th
	if s.Tuning.Exponent == 0 && s.Tuning.NextRound != 0 {
		s.Tuning.Exponent = len(s.Tuning.Rounds) + 1
	}
}
