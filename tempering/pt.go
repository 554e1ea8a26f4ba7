package tempering

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

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

// PT is parallel-tempered SGHMC: one replica per rung of a temperature
// ladder, each advanced by Kernel on U/T_j (SGNHT in the paper), with
// exchange tests every Every steps. Exchanges move positions between rungs;
// momenta and thermostats stay with their rung, since they are adapted to
// its temperature (a swapped-in position inherits a momentum and thermostat
// at the right kinetic temperature, which keeps the rung's dynamics in
// equilibrium).
type PT struct {
	Kernel sampler.Kernel
	// StepSize is the replicas' step size for the next step, in the
	// kernel's units (sampler.Hyper.StepSize; 0: the kernel's own): a
	// schedule's Before hook sets it (sampler.Rate.StepOf), and a rung
	// whose noise-aware step has shrunk steps at its multiple. The kernel
	// itself is never rebuilt.
	StepSize float64
	// Temperature is the posterior temperature T0 that rung 1 samples,
	// exp(-U/T0) (0 means 1): rung j runs at T0 Temps[j], so the ladder
	// multiplies it, and the exchange tests use those temperatures.
	Temperature float64
	Temps       []float64 // initial ladder, Temps[0] = 1 (PTState.Temps is the current one)
	Every       int       // steps between exchange rounds; 0 disables exchanges
	Scheme      Scheme
	Exchange    ExchangeTest // the swap decision: *Exchanger (corrected Barker) or *BiasCorrectedExchange (approximate)
	Workers     int          // replicas stepped at once; default GOMAXPROCS
	// BurnIn is the step at which the window statistics restart, so that
	// they describe the sampling phase; ladder tuning rounds end by then.
	BurnIn int
	// Adapt, if not nil, tunes the ladder during burn-in.
	Adapt *LadderAdaptation
	// HealthWindow is the length in steps of the windows over which each
	// rung's Health is measured (0: DefaultHealthWindow). Rungs of a
	// Frictional kernel are watched.
	HealthWindow int
	// MixCoords makes each rung's health verdict grade the mixing of every
	// coordinate after burn-in (health.Health.NoteDraw, MixFigures): a
	// chain with fewer than health.MinMixESS effective draws in one
	// fails, "not mixed". Meant for models whose coordinates are
	// identified (a regression, a GLM: refcheck's posteriors); a neural
	// network's weights are not (permutations, sign flips, flat ridges),
	// and their per-weight ESS is low in any chain of useful length, so
	// train leaves it off and only reports the ESS of the energy U/T,
	// which every rung's verdict carries ungraded.
	MixCoords bool
	// Record are the recorders of the statistics the run reports (nil:
	// none; StandardRecorders: all the built-in ones). Their figures are
	// in PTState.Stats; what the sampler adapts itself by is kept whatever
	// is attached (see Recorder).
	Record []Recorder
	// ExactGradients says every gradient is exact (a full batch; train
	// sets it when the batch is the training set): the health check then
	// names a heating beyond the injected noise and the measured
	// integration error the integrator's (an unstable step), never
	// gradient noise (health.Health.Exact).
	ExactGradients bool
	// NoiseTarget, when positive, makes the run noise-aware: at the end of
	// every health window during burn-in, a rung whose gradient-noise
	// share exceeds NoiseTarget shrinks its step (same friction per step)
	// toward the share NoiseTarget, and one whose shrunk step now gives
	// less than half of it grows back (never beyond the configured step).
	// The steps are then fixed for sampling.
	NoiseTarget float64
	// Precondition, when not adapt.PrecondNone, estimates each rung's diagonal
	// mass during burn-in and then freezes it (see adapt.Preconditioner). It
	// needs an SGNHT, SGHMC or SGLD kernel.
	Precondition adapt.Preconditioner
	// MassScale is how the estimated mass is normalised (the zero value,
	// MassScaleWidest: the widest coordinates keep unit mass).
	MassScale adapt.MassScale
	// NoiseCorrection estimates each rung's gradient noise per coordinate
	// over the end of burn-in (after the last mass re-estimate, or its
	// second half) and from the end of burn-in injects less noise where
	// the gradient brings more (adapt.InjectionScale; Chen et al.'s B-hat), so
	// that no coordinate runs hot or cold under the one thermostat. It
	// needs an SGNHT or SGHMC kernel and a fixed step (no NoiseTarget).
	NoiseCorrection bool
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
	// Mass holds each rung's mass estimate during burn-in (PT.Precondition;
	// nil without one, and empty estimates once the masses are frozen).
	// The masses themselves are in the rungs' States.
	Mass []adapt.MassEstimate
	// Noise holds each rung's gradient-noise estimate during burn-in
	// (PT.NoiseCorrection; nil without one).
	Noise []adapt.NoiseEstimate
	// Orders holds each rung's minibatch order (nil: the potentials choose
	// their own minibatches, or have no data). Step draws rung j's
	// minibatch from Orders[j] with stream j before the rung's kernel
	// draws its noise. The orders are plain data for a checkpoint to save
	// (train's runs save datasets.Batches); they are not part of the
	// state's JSON.
	Orders []sampler.BatchOrder `json:"-"`

	kin []float64 // scratch: each rung's kinetic temperature after a step
	xi0 []float64 // scratch: each rung's thermostat before a step
	// scratch: each rung's step settings, and its kernel as it steps at
	// them (the step-scaled kernel of a noise-aware run, which Health reads)
	hypers  []sampler.Hyper
	kernels []sampler.Kernel
	errs    []error // scratch: each rung's step error
	// rungSteps runs a step's kernel steps (rungsteps.go)
	rungSteps rungSteps
}

// PTStats are a PT run's statistics, plain data that a checkpoint saves.
// PT keeps the walkers' labels, the window's swap figures (the ladder is
// tuned from them) and each rung's health watch (a noise-aware step
// shrinks by it); the other fields are the attached recorders' figures
// (PT.Record), empty when their recorder is not attached.
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
	// Health watches each rung's dynamics (PT; Frictional kernels only).
	Health []health.Health
}

// resetWindow restarts the window statistics at step, the recorders' too.
func (pt *PT) resetWindow(st *PTState, step int) {
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

// RungTemperature returns the temperature rung j of st samples at: the
// posterior temperature times the rung's place on the ladder.
func (pt *PT) RungTemperature(st *PTState, j int) float64 {
	return TemperedRung(pt.Temperature, st.Temps[j])
}

// TemperedRung returns the temperature a rung of ladder value ladderT
// samples at under the posterior temperature t (0 or 1: untempered): t
// times ladderT. Reports of a run's state use it to label its rungs.
func TemperedRung(t, ladderT float64) float64 {
	if t == 0 || t == 1 {
		return ladderT
	}
	return t * ladderT
}

// Validate checks the PT configuration.
func (pt *PT) Validate() error {
	if pt.Kernel == nil {
		return errors.New("pt: no kernel")
	}
	if err := CheckLadder(pt.Temps); err != nil {
		return fmt.Errorf("pt: %w", err)
	}
	if !(pt.Temperature >= 0) || math.IsInf(pt.Temperature, 1) {
		return fmt.Errorf("pt: posterior temperature %v must be positive and finite (0: 1)", pt.Temperature)
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
	if !(pt.NoiseTarget >= 0 && pt.NoiseTarget < 1) {
		return fmt.Errorf("pt: noise target %v must be in [0, 1) (0: off)", pt.NoiseTarget)
	}
	if err := pt.mass().Validate(pt.Kernel); err != nil {
		return fmt.Errorf("pt: %w", err)
	}
	if err := pt.noise().Validate(pt.Kernel, pt.NoiseTarget); err != nil {
		return fmt.Errorf("pt: %w", err)
	}
	if pt.HealthWindow < 0 {
		return fmt.Errorf("pt: health window %d must be >= 0 (0: %d steps)", pt.HealthWindow, health.DefaultHealthWindow)
	}
	if pt.Adapt != nil {
		if err := pt.Adapt.validate(pt); err != nil {
			return fmt.Errorf("pt: %w", err)
		}
	}
	return nil
}

// Init returns a state with every rung at a copy of theta0[r] (or theta0[0]
// for all rungs when only one is given) and streams seeded by seed.
func (pt *PT) Init(theta0 [][]float64, seed uint64) (*PTState, error) {
	if err := pt.Validate(); err != nil {
		return nil, err
	}
	r := len(pt.Temps)
	if len(theta0) != 1 && len(theta0) != r {
		return nil, fmt.Errorf("pt: %d initial positions for %d rungs", len(theta0), r)
	}
	st := &PTState{Temps: append([]float64(nil), pt.Temps...)}
	for j := 0; j <= r; j++ {
		st.Streams = append(st.Streams, sampler.NewStream(seed, uint64(j)))
	}
	for j := 0; j < r; j++ {
		th := theta0[0]
		if len(theta0) == r {
			th = theta0[j]
		}
		s := sampler.NewState(th)
		pt.Kernel.Init(s, st.Streams[j].Rand)
		st.Rungs = append(st.Rungs, s)
	}
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
	st.Stats.Health = make([]health.Health, r)
	for j, s := range st.Rungs {
		st.Stats.Health[j].Start(s.KineticTemperature())
	}
	if pt.Adapt != nil {
		pt.startTuning(st)
	}
	st.Mass = pt.mass().Start(st.Rungs)
	st.Noise = pt.noise().Start(st.Rungs)
	return st, nil
}

// Check reports whether st is a state of pt: as many rungs, streams and
// statistics as the ladder has, every rung of dimension dim, and a current
// ladder that is a valid one (for states restored from checkpoints).
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
	case len(st.Stats.Walker) != r || len(st.Stats.Health) != r:
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
		if s.Mass != nil && len(s.Mass) != dim {
			return fmt.Errorf("pt state: rung %d has a mass of dimension %d, the model has %d", j, len(s.Mass), dim)
		}
		if s.InjScale != nil && len(s.InjScale) != dim {
			return fmt.Errorf("pt state: rung %d has a noise correction of dimension %d, the model has %d", j, len(s.InjScale), dim)
		}
	}
	if err := pt.noise().Check(st.Steps, st.Noise, r, dim); err != nil {
		return fmt.Errorf("pt state: %w", err)
	}
	if err := pt.mass().Check(st.Steps, st.Mass, r, dim); err != nil {
		return fmt.Errorf("pt state: %w", err)
	}
	return nil
}

// Step advances every rung by one kernel step (in parallel; rung j uses
// pots[j] and stream j), then runs an exchange round when the step count is
// a multiple of Every. tp supplies the energy terms for exchange tests.
func (pt *PT) Step(pots []sampler.Potential, tp sampler.TermPotential, st *PTState) error {
	r := len(pt.Temps)
	if len(pots) != r || len(st.Rungs) != r {
		return fmt.Errorf("pt: %d potentials and %d states for %d rungs", len(pots), len(st.Rungs), r)
	}
	workers := pt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if len(st.kin) != r {
		st.kin, st.xi0, st.errs = make([]float64, r), make([]float64, r), make([]error, r)
	}
	errs := st.errs // every rung's step writes its own
	_, watched := pt.Kernel.(sampler.Frictional)
	if st.Orders != nil && len(st.Orders) != r {
		return fmt.Errorf("pt: %d minibatch orders for %d rungs", len(st.Orders), r)
	}
	if len(st.kernels) != r {
		st.kernels, st.hypers = make([]sampler.Kernel, r), make([]sampler.Hyper, r)
	}
	kernels, hypers := st.kernels, st.hypers
	pt.mass().Arm(st.Rungs, st.Mass)
	pt.noise().Arm(st.Steps, st.Rungs, st.Noise)
	if watched { // the per-coordinate health watch's noise sums, after burn-in
		for j, s := range st.Rungs {
			st.Stats.Health[j].ArmCoords(s, st.Steps, pt.BurnIn)
		}
	}
	pt.rungSettings(st, kernels, hypers)
	rs := &st.rungSteps
	rs.pt, rs.pots, rs.st, rs.hypers, rs.errs = pt, pots, st, hypers, st.errs
	rs.run(workers)
	rs.pots, rs.hypers = nil, nil // hold no caller's potentials
	for j, err := range errs {
		if err != nil {
			return fmt.Errorf("pt: step %d, rung %d (T=%g): %w", st.Steps, j, st.Temps[j], err)
		}
	}
	st.Steps++
	for _, rec := range pt.Record {
		rec.Step(&st.Stats, st, st.kin)
	}
	pt.observeTuningStep(st)
	if watched {
		pt.watchHealth(st, kernels, hypers)
	}
	if err := pt.adaptKernels(st, kernels); err != nil {
		return fmt.Errorf("pt: step %d: %w", st.Steps, err)
	}
	if pt.Every > 0 && r > 1 && st.Steps%pt.Every == 0 {
		if err := pt.exchangeRound(tp, st); err != nil {
			return fmt.Errorf("pt: step %d: %w", st.Steps, err)
		}
	}
	if pt.Adapt != nil && st.Steps == st.Tuning.NextRound {
		if err := pt.tune(st); err != nil {
			return fmt.Errorf("pt: step %d: %w", st.Steps, err)
		}
	}
	if st.Steps == pt.BurnIn {
		pt.resetWindow(st, st.Steps)
	}
	return nil
}

// rungSettings sets each rung's step settings for the next step and the
// kernel as it steps at them: PT.StepSize at the rung's temperature, times
// the multiplier of a rung whose noise-aware step has shrunk; a Frictional
// kernel is the one stepping at that step (its At), whose dynamics Health
// and the noise correction read.
func (pt *PT) rungSettings(st *PTState, kernels []sampler.Kernel, hypers []sampler.Hyper) {
	fk, watched := pt.Kernel.(sampler.Frictional)
	for j := range kernels {
		kernels[j], hypers[j] = pt.Kernel, sampler.Hyper{StepSize: pt.StepSize, Temp: pt.RungTemperature(st, j)}
		if sc := st.Stats.Health[j].Multiplier(); watched && sc != 1 {
			// the noise-aware step: the rung steps at sc times the step
			h := pt.StepSize
			if h == 0 {
				h, _ = fk.Dynamics()
			}
			hypers[j].StepSize = h * sc
		}
		if watched && hypers[j].StepSize != 0 {
			// Health and the noise correction read the dynamics of the
			// kernel stepping there
			kernels[j] = fk.At(hypers[j].StepSize)
		}
	}
}

// watchHealth records the step just taken in each rung's health watch
// (kernels and hypers: what each rung stepped with; its energy for the
// window's descent, and after burn-in for the verdict's mixing), and at
// the end of a burn-in window of a noise-aware run (PT.NoiseTarget) moves
// the rung's step toward the target share.
func (pt *PT) watchHealth(st *PTState, kernels []sampler.Kernel, hypers []sampler.Hyper) {
	for j, s := range st.Rungs {
		hl := &st.Stats.Health[j]
		temp := hypers[j].Temp
		if temp == 0 {
			temp = 1
		}
		hl.NotePotential(s.U/temp, pt.HealthWindow) // the window's descent
		ended := hl.ObserveStep(kernels[j].(sampler.Frictional), st.xi0[j], st.kin[j], s.Kinetic, s.Work, len(s.P), st.Steps, pt.HealthWindow, st.Steps > pt.BurnIn)
		hl.Exact = pt.ExactGradients
		hl.ObserveCoords(kernels[j].(sampler.Frictional), st.xi0[j], s, st.Steps, pt.BurnIn, ended)
		if st.Steps > pt.BurnIn {
			hl.NoteDraw(s.U/temp, s.Theta, pt.MixCoords) // the verdict's mixing
		}
		if ended && pt.NoiseTarget > 0 && st.Steps <= pt.BurnIn {
			if g := hl.AdaptStep(pt.NoiseTarget); g != 1 {
				s.MoveStep(1, g) // the same friction per step
				hl.PrevWork.Valid = false
			}
		}
	}
}

func (pt *PT) exchangeRound(tp sampler.TermPotential, st *PTState) error {
	r := len(pt.Temps)
	rng := st.Streams[r].Rand
	try := func(pair, j, k int) error {
		res, err := pt.Exchange.Test(tp, st.Rungs[j].Theta, st.Rungs[k].Theta, pt.RungTemperature(st, j), pt.RungTemperature(st, k), rng)
		if err != nil {
			return fmt.Errorf("exchange rungs %d and %d: %w", j, k, err)
		}
		st.Stats.WinProposed[pair]++
		st.Stats.WinReject[pair] += MetropolisRejection(res.DeltaE)
		st.Stats.WinSwapProb[pair] += res.Outcome()
		pt.observeTuningSwap(st, pair, res.DeltaE)
		for _, rec := range pt.Record {
			rec.Swap(&st.Stats, SwapAttempt{Pair: pair, Result: res})
		}
		if res.Accepted {
			st.Stats.WinAccepted[pair]++
			a, b := st.Rungs[j], st.Rungs[k]
			a.Theta, b.Theta = b.Theta, a.Theta
			a.U, b.U = b.U, a.U
			a.GradValid, b.GradValid = false, false
			// the next kick is at another position: no energy error
			st.Stats.Health[j].PrevWork.Valid, st.Stats.Health[k].PrevWork.Valid = false, false
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

// mass returns the run's mass estimation (PT.Precondition, PT.MassScale).
func (pt *PT) mass() adapt.Mass {
	return adapt.Mass{Precondition: pt.Precondition, Scale: pt.MassScale, BurnIn: pt.BurnIn}
}

// noise returns the run's noise correction (PT.NoiseCorrection).
func (pt *PT) noise() adapt.Noise {
	return adapt.Noise{Correct: pt.NoiseCorrection, BurnIn: pt.BurnIn, Precondition: pt.Precondition}
}

// adaptKernels runs the burn-in's mass estimation and noise correction
// for the step just taken (kernels: the kernel each rung stepped with);
// a rung whose mass or noise changed pairs no kick terms across the
// change in its health watch.
func (pt *PT) adaptKernels(st *PTState, kernels []sampler.Kernel) error {
	changed, err := pt.mass().Update(st.Steps, st.Rungs, st.Mass, func(j int) float64 { return pt.RungTemperature(st, j) })
	if changed {
		for j := range st.Rungs {
			st.Stats.Health[j].PrevWork.Valid = false
		}
	}
	if err != nil {
		return err
	}
	changed, err = pt.noise().Update(st.Steps, st.Rungs, st.Noise, kernels)
	if changed {
		for j := range st.Rungs {
			st.Stats.Health[j].PrevWork.Valid = false
		}
	}
	return err
}

// Run calls Step n times, then returns; sample, if not nil, is called after
// every step with the state (to record rung-1 samples). It is RunUntil
// with sample as the recorder.
func (pt *PT) Run(pots []sampler.Potential, tp sampler.TermPotential, st *PTState, n int, sample func(*PTState) error) error {
	return pt.RunUntil(context.Background(), pots, tp, st, st.Steps+n, Hooks{After: sample})
}
