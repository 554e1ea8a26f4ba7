package tempering

import "fmt"

// A Recorder gathers one statistic of a PT run that the sampler itself
// does not need: a run attaches the ones it reports (PT.Record), as
// Pigeons.jl's recorders are chosen by its `record` input. PT calls every
// attached recorder at the same points of each step; a recorder only
// reads the state and the event and writes its own figures, which live in
// the state's statistics (PTStats) so that a checkpoint saves them and a
// resumed run continues them. What the sampler adapts itself by (the
// window of swap figures the ladder is tuned from, each rung's health
// watch that a noise-aware step shrinks by, the walkers' labels) PT keeps
// itself, whatever is attached.
//
// The built-in recorders are SwapRecorder, RoundTripRecorder and
// EnergyRecorder (StandardRecorders: all three, what train attaches).
type Recorder interface {
	// Start makes the recorder's figures in s for a new run of r rungs.
	Start(s *PTStats, r int)
	// Check reports whether s holds the recorder's figures for r rungs
	// (a state restored from a checkpoint).
	Check(s *PTStats, r int) error
	// Step records the end of a step: st after its rungs stepped (st.Steps
	// already counts it), with each rung's kinetic temperature kin.
	Step(s *PTStats, st *PTState, kin []float64)
	// Swap records one exchange attempt.
	Swap(s *PTStats, sw SwapAttempt)
	// Round records the end of an exchange round, with walker[r] the label
	// of the configuration now at rung r.
	Round(s *PTStats, walker []int)
	// Window records the restart of the window statistics at step (a
	// tuning round's start, or the end of burn-in).
	Window(s *PTStats, step int)
}

// SwapAttempt is one exchange attempt as the recorders see it: the pair
// it tried (PTStats' pair numbering), its rungs J and K, and the exchange
// test's result.
type SwapAttempt struct {
	Pair   int
	J, K   int
	Result ExchangeResult
}

// StandardRecorders returns the built-in recorders, every statistic a
// training run reports and checkpoints: swap counts and probabilities,
// round trips, and the thermostat and kinetic means.
func StandardRecorders() []Recorder {
	return []Recorder{SwapRecorder{}, RoundTripRecorder{}, EnergyRecorder{}}
}

// SwapRecorder counts exchange attempts and swaps per pair over the run
// (PTStats.Proposed, Accepted; AcceptanceRate), sums each attempt's swap
// probability (SwapProb; SwapProbability) and counts the attempts whose
// test grew its batch, was exact or decided early (Grown, Exact, Early).
type SwapRecorder struct{}

// Start implements Recorder.
func (SwapRecorder) Start(s *PTStats, r int) {
	pairs := max(r-1, 0)
	s.Proposed, s.Accepted, s.SwapProb = make([]int, pairs), make([]int, pairs), make([]float64, pairs)
}

// Check implements Recorder.
func (SwapRecorder) Check(s *PTStats, r int) error {
	pairs := max(r-1, 0)
	if len(s.Proposed) != pairs || len(s.Accepted) != pairs || len(s.SwapProb) != pairs {
		return fmt.Errorf("swap counts for %d, %d and %d pairs (%d rungs)", len(s.Proposed), len(s.Accepted), len(s.SwapProb), r)
	}
	return nil
}

// Step implements Recorder.
func (SwapRecorder) Step(*PTStats, *PTState, []float64) {}

// Swap implements Recorder.
func (SwapRecorder) Swap(s *PTStats, sw SwapAttempt) {
	res := sw.Result
	s.Proposed[sw.Pair]++
	s.SwapProb[sw.Pair] += res.Outcome()
	if res.Grown {
		s.Grown++
	}
	if res.Exact {
		s.Exact++
	}
	if res.Early {
		s.Early++
	}
	if res.Accepted {
		s.Accepted[sw.Pair]++
	}
}

// Round implements Recorder.
func (SwapRecorder) Round(*PTStats, []int) {}

// Window implements Recorder.
func (SwapRecorder) Window(*PTStats, int) {}

// RoundTripRecorder counts round trips: a walker (a configuration,
// followed through its swaps) reaching the bottom rung after last visiting
// the top one (PTStats.RoundTrips over the run, WinRoundTrips in the
// window; LastEnd is each walker's last end).
type RoundTripRecorder struct{}

// Start implements Recorder.
func (RoundTripRecorder) Start(s *PTStats, r int) { s.LastEnd = make([]int, r) }

// Check implements Recorder.
func (RoundTripRecorder) Check(s *PTStats, r int) error {
	if len(s.LastEnd) != r {
		return fmt.Errorf("round trips of %d walkers for %d rungs", len(s.LastEnd), r)
	}
	return nil
}

// Step implements Recorder.
func (RoundTripRecorder) Step(*PTStats, *PTState, []float64) {}

// Swap implements Recorder.
func (RoundTripRecorder) Swap(*PTStats, SwapAttempt) {}

// Round implements Recorder.
func (RoundTripRecorder) Round(s *PTStats, walker []int) {
	r := len(walker)
	wb, wt := walker[0], walker[r-1]
	if s.LastEnd[wb] == 1 {
		s.RoundTrips++
		s.WinRoundTrips++
	}
	s.LastEnd[wb] = -1
	s.LastEnd[wt] = 1
}

// Window implements Recorder.
func (RoundTripRecorder) Window(s *PTStats, _ int) { s.WinRoundTrips = 0 }

// EnergyRecorder sums each rung's thermostat xi and kinetic temperature
// over the steps (PTStats.XiSum, KinSum, Count; MeanXi, MeanKinetic).
type EnergyRecorder struct{}

// Start implements Recorder.
func (EnergyRecorder) Start(s *PTStats, r int) {
	s.XiSum, s.KinSum = make([]float64, r), make([]float64, r)
}

// Check implements Recorder.
func (EnergyRecorder) Check(s *PTStats, r int) error {
	if len(s.XiSum) != r || len(s.KinSum) != r {
		return fmt.Errorf("energy sums of %d and %d rungs for %d rungs", len(s.XiSum), len(s.KinSum), r)
	}
	return nil
}

// Step implements Recorder.
func (EnergyRecorder) Step(s *PTStats, st *PTState, kin []float64) {
	s.Count++
	for j, q := range st.Rungs {
		s.XiSum[j] += q.Xi
		s.KinSum[j] += kin[j]
	}
}

// Swap implements Recorder.
func (EnergyRecorder) Swap(*PTStats, SwapAttempt) {}

// Round implements Recorder.
func (EnergyRecorder) Round(*PTStats, []int) {}

// Window implements Recorder.
func (EnergyRecorder) Window(*PTStats, int) {}
