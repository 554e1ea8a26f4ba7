package tempering

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Scheme chooses which pairs of rungs attempt exchanges.
type Scheme string

// Exchange schemes.
const (
	// SchemeAlternate tries adjacent pairs (1,2),(3,4),... and (2,3),(4,5),...
	// on alternate exchange rounds: deterministic even/odd alternation, the
	// non-reversible parallel tempering of Syed et al. (2019). Default.
	SchemeAlternate Scheme = "alternate"
	// SchemeToFirst tries each hotter rung against rung 1 in turn, as in the
	// PT-SGHMC paper.
	SchemeToFirst Scheme = "first"
)

// PT is what parallel tempering adds to the replicas a driver steps
// (package driver): a temperature ladder, one replica per rung, and every
// Every steps an exchange round in which pairs of rungs chosen by the
// Scheme try to swap their positions with the Exchange test. Exchanges
// move positions between rungs; momenta and thermostats stay with their
// rung, since they are adapted to its temperature (a swapped-in position
// inherits a momentum and thermostat at the right kinetic temperature,
// which keeps the rung's dynamics in equilibrium). Rung j samples at the
// posterior temperature T0 of the step times Temps[j] (TemperedRung): the
// ladder multiplies it.
type PT struct {
	Temps    []float64    // initial ladder, Temps[0] = 1 (PTState.Temps is the current one)
	Every    int          // steps between exchange rounds; 0 disables exchanges
	Scheme   Scheme       // the pairs that try to swap ("": SchemeAlternate)
	Exchange ExchangeTest // the swap decision: *Exchanger (corrected Barker) or *BiasCorrectedExchange (approximate)
	// Record are the recorders of the statistics the run reports (nil:
	// none; StandardRecorders: all the built-in ones). Their figures are
	// in PTState.Stats; what the sampler adapts itself by is kept whatever
	// is attached (see Recorder).
	Record []Recorder
}

// ExchangeTest decides a swap between the configurations of two rungs.
type ExchangeTest interface {
	Test(tp sampler.TermPotential, thetaJ, thetaK []float64, tj, tk float64, rng *rand.Rand) (ExchangeResult, error)
}

// PTState is the whole state of a PT run: the rungs' states, one random
// stream per rung plus one for exchanges (the last), the step counter and
// the statistics.
type PTState struct {
	Rungs   []*sampler.State
	Streams []*sampler.Stream
	Steps   int
	Rounds  int       // exchange rounds so far (its parity picks the pairs)
	Temps   []float64 // the current ladder (tuning changes it)
	Stats   PTStats
	Tuning  TuningState
	// Mass holds each rung's mass estimate during burn-in (the
	// driver.Mass phase; nil without one, and empty estimates once the
	// masses are frozen).
	// The masses themselves are in the rungs' States.
	Mass []adapt.MassEstimate
	// Noise holds each rung's gradient-noise estimate during burn-in
	// (the driver.NoiseCorrection phase; nil without one).
	Noise []adapt.NoiseEstimate
	// Orders holds each rung's minibatch order (nil: the potentials choose
	// their own minibatches, or have no data). driver.Driver.Step draws
	// rung j's minibatch from Orders[j] with stream j before the rung's
	// kernel draws its noise. The orders are plain data for a checkpoint to save
	// (train's runs save datasets.Batches); they are not part of the
	// state's JSON.
	Orders []sampler.BatchOrder `json:"-"`
}

// PTStats are a PT run's statistics, plain data that a checkpoint saves.
// PT keeps the walkers' labels and the window's swap figures (the ladder
// is tuned from them), the driver's StepHealth phase each rung's health
// watch (a noise-aware step shrinks by it); the other fields are the
// attached recorders' figures (PT.Record), empty when their recorder is
// not attached.
type PTStats struct {
	// Pair p is rungs (p, p+1) for SchemeAlternate, (0, p+1) for SchemeToFirst.
	// SwapRecorder: attempts and swaps per pair; exchanges that grew their
	// batch, were exact, decided early.
	Proposed, Accepted  []int
	Grown, Exact, Early int
	// Walker[r] is the label of the configuration at rung r (PT); LastEnd[w]
	// is the end of the ladder walker w visited last (-1 bottom, +1 top, 0
	// none; RoundTripRecorder).
	Walker     []int
	LastEnd    []int
	RoundTrips int // walker visits of the bottom rung after the top one (RoundTripRecorder)
	// Running sums over steps, per rung, for means (EnergyRecorder).
	XiSum, KinSum []float64
	Count         int
	// Window statistics (PT), since WinStart: the start of the current
	// tuning round, or the end of burn-in. WinReject sums each attempt's
	// Metropolis-equivalent rejection 1 - min(1, exp(deltaE)) of the
	// estimated deltaE (what the communication barrier adds up), whatever
	// test decided the swap. WinRoundTrips is RoundTripRecorder's.
	WinStart                 int
	WinProposed, WinAccepted []int
	WinReject                []float64
	WinRoundTrips            int
	// SwapProb (SwapRecorder) and WinSwapProb (PT) sum, per pair over the
	// run and over the window, each attempt's probability of swapping
	// given the test's estimate of deltaE (ExchangeResult.Outcome): the
	// Rao-Blackwellised swap acceptance, the same expectation as
	// Accepted/Proposed with the test's own noise integrated out (Syed et
	// al. 2021; Pigeons.jl). ProbSince is the step from which they hold
	// probabilities: a state restored from a checkpoint written before
	// they were recorded starts them at the 0/1 counts (the same
	// expectation, not its lower variance) and sets ProbSince to the step
	// it resumed at.
	SwapProb, WinSwapProb []float64
	ProbSince             int
	// Health watches each rung's dynamics (driver.StepHealth; Frictional
	// kernels only).
	Health []health.Health
}

// ResetWindow restarts the window statistics at step, the recorders' too
// (a tuning round's start, the end of burn-in).
func (pt *PT) ResetWindow(st *PTState, step int) {
	s := &st.Stats
	s.WinStart = step
	clear(s.WinProposed)
	clear(s.WinAccepted)
	clear(s.WinReject)
	clear(s.WinSwapProb)
	for _, rec := range pt.Record {
		rec.Window(s, step)
	}
}

// SeedSwapProb gives a state without probability sums (a snapshot written
// before they were recorded, see Snapshot.Upgrade) sums started at its 0/1
// counts, and records that probabilities are kept from its step on.
func (s *PTStats) SeedSwapProb(step int) {
	if s.SwapProb != nil || len(s.Proposed) == 0 {
		return
	}
	s.SwapProb, s.WinSwapProb = make([]float64, len(s.Proposed)), make([]float64, len(s.WinProposed))
	for p := range s.SwapProb {
		s.SwapProb[p] = float64(s.Accepted[p])
	}
	for p := range s.WinSwapProb {
		s.WinSwapProb[p] = float64(s.WinAccepted[p])
	}
	s.ProbSince = step
}

// WindowSwapProbability returns pair p's Rao-Blackwellised swap acceptance
// in the window: the mean of its attempts' swap probabilities (NaN before
// any try).
func (s *PTStats) WindowSwapProbability(p int) float64 {
	return s.WinSwapProb[p] / float64(s.WinProposed[p])
}

// SwapProbability returns pair p's Rao-Blackwellised swap acceptance over
// the run (NaN before any try).
func (s *PTStats) SwapProbability(p int) float64 {
	return s.SwapProb[p] / float64(s.Proposed[p])
}

// WindowAcceptance returns pair p's swap acceptance rate in the window (NaN
// before any try).
func (s *PTStats) WindowAcceptance(p int) float64 {
	return float64(s.WinAccepted[p]) / float64(s.WinProposed[p])
}

// WindowRejection returns pair p's mean Metropolis-equivalent rejection
// rate in the window (NaN before any try).
func (s *PTStats) WindowRejection(p int) float64 {
	return s.WinReject[p] / float64(s.WinProposed[p])
}

// AcceptanceRate returns pair p's swap acceptance rate (NaN before any try).
func (s *PTStats) AcceptanceRate(p int) float64 {
	return float64(s.Accepted[p]) / float64(s.Proposed[p])
}

// MeanXi returns rung r's mean thermostat value over the run.
func (s *PTStats) MeanXi(r int) float64 { return s.XiSum[r] / float64(s.Count) }

// MeanKinetic returns rung r's mean kinetic temperature p'p/D.
func (s *PTStats) MeanKinetic(r int) float64 { return s.KinSum[r] / float64(s.Count) }

// TemperedRung returns the temperature a rung of ladder value ladderT
// samples at under the posterior temperature t (0 or 1: untempered): t
// times ladderT. Reports of a run's state use it to label its rungs.
func TemperedRung(t, ladderT float64) float64 {
	if t == 0 || t == 1 {
		return ladderT
	}
	return t * ladderT
}

// Validate checks the tempering configuration.
func (pt *PT) Validate() error {
	if err := CheckLadder(pt.Temps); err != nil {
		return fmt.Errorf("pt: %w", err)
	}
	if pt.Every < 0 {
		return fmt.Errorf("pt: exchange interval %d must be >= 0", pt.Every)
	}
	switch pt.Scheme {
	case SchemeAlternate, SchemeToFirst, "":
	default:
		return fmt.Errorf("pt: unknown exchange scheme %q: expected alternate or first", pt.Scheme)
	}
	if pt.Every > 0 && len(pt.Temps) > 1 {
		if pt.Exchange == nil {
			return errors.New("pt: exchanges need an exchange test")
		}
		if x, ok := pt.Exchange.(*Exchanger); ok && x.Correction == nil {
			return errors.New("pt: exchanges need a correction table")
		}
	}
	return nil
}

// Start sets up the tempering part of a new state st of len(pt.Temps)
// rungs: its ladder, the walkers' labels, the window's statistics and
// the attached recorders' figures.
func (pt *PT) Start(st *PTState) {
	r := len(pt.Temps)
	st.Temps = append([]float64(nil), pt.Temps...)
	pairs := max(r-1, 0)
	st.Stats = PTStats{
		Walker:      make([]int, r),
		WinProposed: make([]int, pairs), WinAccepted: make([]int, pairs), WinReject: make([]float64, pairs),
		WinSwapProb: make([]float64, pairs),
	}
	for _, rec := range pt.Record {
		rec.Start(&st.Stats, r)
	}
	for j := range st.Stats.Walker {
		st.Stats.Walker[j] = j
	}
}

// Check reports whether the tempering part of st is a state of pt: as
// many rungs, streams and statistics as the ladder has, every rung of
// dimension dim, and a current ladder that is a valid one (for states
// restored from checkpoints).
func (pt *PT) Check(st *PTState, dim int) error {
	r := len(pt.Temps)
	pairs := max(r-1, 0)
	switch {
	case len(st.Rungs) != r:
		return fmt.Errorf("pt state: %d rungs for a %d-rung ladder", len(st.Rungs), r)
	case len(st.Streams) != r+1:
		return fmt.Errorf("pt state: %d random streams for %d rungs (need %d)", len(st.Streams), r, r+1)
	case len(st.Temps) != r:
		return fmt.Errorf("pt state: a ladder of %d temperatures for %d rungs", len(st.Temps), r)
	case len(st.Stats.WinProposed) != pairs || len(st.Stats.WinAccepted) != pairs || len(st.Stats.WinReject) != pairs ||
		len(st.Stats.WinSwapProb) != pairs:
		return fmt.Errorf("pt state: exchange statistics for the wrong number of pairs (%d rungs)", r)
	case len(st.Stats.Walker) != r:
		return fmt.Errorf("pt state: per-rung statistics for the wrong number of rungs (%d)", r)
	}
	for _, rec := range pt.Record {
		if err := rec.Check(&st.Stats, r); err != nil {
			return fmt.Errorf("pt state: %w", err)
		}
	}
	if err := CheckLadder(st.Temps); err != nil {
		return fmt.Errorf("pt state: %w", err)
	}
	seen := make([]bool, r)
	for _, w := range st.Stats.Walker {
		if w < 0 || w >= r || seen[w] {
			return fmt.Errorf("pt state: walker labels %v are not a permutation of the rungs", st.Stats.Walker)
		}
		seen[w] = true
	}
	for j, s := range st.Rungs {
		if len(s.Theta) != dim || len(s.P) != dim {
			return fmt.Errorf("pt state: rung %d has %d parameters and %d momenta, the model has %d", j, len(s.Theta), len(s.P), dim)
		}
	}
	return nil
}

// RecordStep hands the step just taken to the attached recorders (kin:
// each rung's kinetic temperature after it).
func (pt *PT) RecordStep(st *PTState, kin []float64) {
	for _, rec := range pt.Record {
		rec.Step(&st.Stats, st, kin)
	}
}

// SwapObserver is told of every exchange attempt of a round besides the
// recorders: a driver's adaptations (the ladder's tuning, the health
// watch that pairs no kick terms across a swap).
type SwapObserver interface {
	Swap(st *PTState, sw SwapAttempt)
}

// Communicate runs an exchange round when one is due after the step just
// taken (every Every steps, with more than one rung): Pigeons.jl's
// communication step. t0 is the posterior temperature of the step, which
// the ladder multiplies (TemperedRung); tp supplies the energy terms of
// the exchange tests; obs, if not nil, sees every attempt.
func (pt *PT) Communicate(tp sampler.TermPotential, st *PTState, t0 float64, obs SwapObserver) error {
	r := len(st.Temps)
	if pt.Every <= 0 || r < 2 || st.Steps%pt.Every != 0 {
		return nil
	}
	rng := st.Streams[r].Rand
	try := func(pair, j, k int) error {
		res, err := pt.Exchange.Test(tp, st.Rungs[j].Theta, st.Rungs[k].Theta, TemperedRung(t0, st.Temps[j]), TemperedRung(t0, st.Temps[k]), rng)
		if err != nil {
			return fmt.Errorf("exchange rungs %d and %d: %w", j, k, err)
		}
		st.Stats.WinProposed[pair]++
		st.Stats.WinReject[pair] += MetropolisRejection(res.DeltaE)
		st.Stats.WinSwapProb[pair] += res.Outcome()
		sw := SwapAttempt{Pair: pair, J: j, K: k, Result: res}
		if obs != nil {
			obs.Swap(st, sw)
		}
		for _, rec := range pt.Record {
			rec.Swap(&st.Stats, sw)
		}
		if res.Accepted {
			st.Stats.WinAccepted[pair]++
			a, b := st.Rungs[j], st.Rungs[k]
			a.Theta, b.Theta = b.Theta, a.Theta
			a.U, b.U = b.U, a.U
			a.GradValid, b.GradValid = false, false
			w := st.Stats.Walker
			w[j], w[k] = w[k], w[j]
		}
		return nil
	}
	if pt.Scheme == SchemeToFirst {
		for k := 1; k < r; k++ {
			if err := try(k-1, 0, k); err != nil {
				return err
			}
		}
	} else {
		for j := st.Rounds % 2; j+1 < r; j += 2 {
			if err := try(j, j, j+1); err != nil {
				return err
			}
		}
	}
	st.Rounds++
	for _, rec := range pt.Record {
		rec.Round(&st.Stats, st.Stats.Walker)
	}
	return nil
}
