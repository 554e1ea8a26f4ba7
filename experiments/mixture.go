package experiments

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// MixtureSummary is the JSON summary of a mixture experiment.
type MixtureSummary struct {
	Target      string    `json:"target"`
	Sampler     string    `json:"sampler"`
	Steps       int       `json:"steps"`
	Seed        uint64    `json:"seed"`
	Samples     int       `json:"samples"`
	ModeWeights []float64 `json:"mode_weights"` // fraction of samples nearest each component
	TrueWeights []float64 `json:"true_weights"`
	MaxAbsError float64   `json:"max_abs_error"`
	StepsPerSec float64   `json:"steps_per_sec"`
	SwapRate    []float64 `json:"swap_rate,omitempty"`
	RoundTrips  int       `json:"round_trips,omitempty"`
	MeanXi      []float64 `json:"mean_xi,omitempty"`
	MeanKinetic []float64 `json:"mean_kinetic,omitempty"`
	HMCAccept   float64   `json:"hmc_accept,omitempty"`
}

// MixtureSamplers returns the samplers of the mixture experiment: ptsghmc,
// then the kernels of sampler.Kernels that sample (the mixture is scored by
// its samples' mode weights, so sgd, an optimiser, is not offered; hmc,
// the paper's baseline, is).
func MixtureSamplers() []string {
	names := []string{runspec.PTSGHMC}
	for _, k := range sampler.Kernels {
		if k.Sampler {
			names = append(names, k.Name)
		}
	}
	return names
}

// MixtureSettings configure one run of the paper's mixture experiment.
type MixtureSettings struct {
	Target     string        // gauss1d4 or gauss2d5 (sampler.Target)
	Sampler    string        // one of MixtureSamplers
	Steps      int           // steps of every chain
	BurnIn     int           // steps before the first kept sample
	Thin       int           // keep every this many steps
	Seed       uint64        // the run's seed
	Kernel     MixtureKernel // step sizes, diffusion, leapfrog steps
	Replicas   int           // PT rungs (ptsghmc only)
	TMax       float64       // PT's top temperature
	Every      int           // steps between PT's exchange rounds
	Scheme     string        // PT's exchange scheme: alternate or first
	Correction string        // PT's noise correction: nnls or hermite
}

// MixtureKernel are the hand-set dynamics of the mixture experiment's
// samplers, in the kernels' own terms (the paper's h, A, eps and L) rather
// than a training run's learning rate: the mixture's potential has no data
// set size to divide a rate by.
type MixtureKernel struct {
	StepSize  float64 // h: sgnht (ptsghmc's rungs), sghmc, hmc
	Diffusion float64 // sgnht's injected diffusion A, sghmc's friction C
	SGLDStep  float64 // sgld's step eps
	Leapfrog  int     // hmc's leapfrog steps L
}

// build returns the kernel named (a sampling kernel of sampler.Kernels)
// with these dynamics, and its step size.
func (m MixtureKernel) build(name string) (sampler.Kernel, float64, error) {
	switch name {
	case sampler.SGNHT{}.Name():
		return sampler.SGNHT{StepSize: m.StepSize, Diffusion: m.Diffusion}, m.StepSize, nil
	case sampler.SGHMC{}.Name():
		return sampler.SGHMC{StepSize: m.StepSize, Friction: m.Diffusion}, m.StepSize, nil
	case sampler.SGLD{}.Name():
		return sampler.SGLD{StepSize: m.SGLDStep}, m.SGLDStep, nil
	case sampler.HMC{}.Name():
		return sampler.HMC{StepSize: m.StepSize, Leapfrog: m.Leapfrog}, m.StepSize, nil
	}
	return nil, 0, fmt.Errorf("kernel %s: the mixture experiment has no dynamics for it", name)
}

// MixtureRun is the outcome of RunMixture.
type MixtureRun struct {
	Summary MixtureSummary
	Mixture *sampler.Mixture
	Samples [][]float64 // rung 1's kept samples (after burn-in, every Thin steps)
	Trace   []float64   // rung 1's first coordinate every Thin steps, burn-in included
}

// RunMixture runs the paper's experiment: noisy U and grad U (noise
// variance 0.25, the mean of 16 per-example terms), the chain (or PT's
// every rung) started at the lowest-weight mode, and scores rung 1's
// samples by their mode weights.
func RunMixture(o MixtureSettings) (*MixtureRun, error) {
	m, err := sampler.Target(o.Target)
	if err != nil {
		return nil, err
	}
	if o.Steps <= o.BurnIn {
		return nil, fmt.Errorf("--steps %d must be more than --burnin %d (samples are kept after the burn-in)", o.Steps, o.BurnIn)
	}
	if o.Thin <= 0 {
		return nil, fmt.Errorf("--thin %d: expected 1 or more (keep a sample every this many steps)", o.Thin)
	}
	info, ok := runspec.KernelOf(o.Sampler)
	if !ok || !info.Sampler {
		return nil, fmt.Errorf("unknown sampler %q: expected one of %s", o.Sampler, strings.Join(MixtureSamplers(), ", "))
	}
	k, h, err := o.Kernel.build(info.Name)
	if err != nil {
		return nil, err
	}
	temps := []float64{1}
	if o.Sampler == runspec.PTSGHMC {
		if temps, err = tempering.GeometricLadder(o.Replicas, o.TMax); err != nil {
			return nil, err
		}
	}
	pt := &tempering.PT{Temps: temps, Record: tempering.StandardRecorders()}
	if len(temps) > 1 {
		c, err := tempering.NewCorrection(1, tempering.CorrectionOptions{Method: tempering.CorrectionMethod(o.Correction)})
		if err != nil {
			return nil, err
		}
		pt.Every, pt.Scheme = o.Every, tempering.Scheme(o.Scheme)
		pt.Exchange = &tempering.Exchanger{Batch: 16, Correction: c}
	}
	d := &driver.Driver{Kernel: k, Schedule: driver.Fixed(k, h, 1), PT: pt, Workers: 1, Phases: driver.Watched()}
	st, err := d.Init([][]float64{m.Start()}, o.Seed)
	if err != nil {
		return nil, err
	}
	pots := make([]sampler.Potential, len(temps))
	for i := range pots {
		pots[i] = m
	}
	r := &MixtureRun{Mixture: m}
	start := time.Now()
	err = d.Run(pots, m, st, o.Steps, func(s *tempering.PTState) error {
		if s.Steps%o.Thin == 0 {
			r.Trace = append(r.Trace, s.Rungs[0].Theta[0])
			if s.Steps > o.BurnIn {
				r.Samples = append(r.Samples, append([]float64(nil), s.Rungs[0].Theta...))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	el := time.Since(start).Seconds()
	sum := MixtureSummary{Target: o.Target, Sampler: o.Sampler, Steps: o.Steps, Seed: o.Seed, Samples: len(r.Samples),
		TrueWeights: m.Weights, StepsPerSec: float64(o.Steps) / el, ModeWeights: m.ModeWeights(r.Samples)}
	for c := range m.Weights {
		sum.MaxAbsError = math.Max(sum.MaxAbsError, math.Abs(sum.ModeWeights[c]-m.Weights[c]))
	}
	if len(temps) > 1 {
		for p := range st.Stats.Proposed {
			sum.SwapRate = append(sum.SwapRate, st.Stats.AcceptanceRate(p))
		}
		sum.RoundTrips = st.Stats.RoundTrips
	}
	if _, ok := k.(sampler.HMC); ok {
		sum.HMCAccept = float64(st.Rungs[0].Accepted) / float64(max(1, st.Rungs[0].Proposed))
	} else if _, ok := k.(sampler.Frictional); ok { // a thermostat to report
		for j := range temps {
			sum.MeanXi = append(sum.MeanXi, st.Stats.MeanXi(j))
			sum.MeanKinetic = append(sum.MeanKinetic, st.Stats.MeanKinetic(j))
		}
	}
	r.Summary = sum
	return r, nil
}

// WriteSamplesCSV writes samples (one row each, as MixtureRun.Samples holds
// them) as CSV to w: comma-separated, 8 significant digits, no header.
func WriteSamplesCSV(w io.Writer, xs [][]float64) error {
	bw := bufio.NewWriter(w)
	for _, x := range xs {
		s := make([]string, len(x))
		for i, v := range x {
			s[i] = strconv.FormatFloat(v, 'g', 8, 64)
		}
		fmt.Fprintln(bw, strings.Join(s, ","))
	}
	return bw.Flush()
}
