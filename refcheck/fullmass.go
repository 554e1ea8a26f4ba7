package refcheck

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/gonum/mat"
)

// FullMassBatchShare is the minibatch FullMassCases run at: 20% of the
// data.
const FullMassBatchShare = 0.2

// FullMassSteps are TestFullMassTable's steps per posterior (burn-in a
// quarter), chosen for an ESS of a few hundred within 10 minutes on
// this project's 2 shared cores: earnings' minibatch noise, about 280
// times the (N/b - 1) times the curvature MinibatchNoiseLR's step is set
// against, makes its step small.
var FullMassSteps = map[string]int{
	"earnings-earn_height": 12000000,
	"diamonds-diamonds":    1000000,
}

// NoiseDraws is how many minibatch gradients MinibatchNoiseLR measures
// the noise's covariance from.
const NoiseDraws = 4000

// FullMassCases returns SGNHT with a dense mass and with a low-rank mass
// of rank k (both estimated in burn-in and scaled to the stiffest
// direction) on the posterior's data in dir, at a minibatch of
// FullMassBatchShare of its examples, for steps steps: issue 60's aim for
// the posteriors a diagonal mass cannot serve (earnings' correlation of
// 0.998, diamonds' 26 coordinates). Each runs at the smaller of the step
// at which that mass, exact (from the reference covariance), has omega h =
// StableOmegaH in its stiffest direction (StableLRRank) and the step at
// which the minibatch's gradient noise is NoiseShareTarget of the
// diffusion in the mass's noisiest direction (MinibatchNoiseLR).
func FullMassCases(ref Reference, dir string, rank, steps int) ([]Case, error) {
	p, ok := Posteriors[ref.Posterior]
	if !ok {
		return nil, fmt.Errorf("full-mass cases: unknown posterior %q", ref.Posterior)
	}
	d, _, err := p.Load(dir)
	if err != nil {
		return nil, err
	}
	n := len(d.Y)
	batch := int(math.Round(FullMassBatchShare * float64(n)))
	var out []Case
	for _, pc := range []adapt.Preconditioner{adapt.PrecondDense, adapt.PrecondLowRank} {
		c := Case{Posterior: ref.Posterior, Kernel: "sgnht", Precond: pc, MassScale: adapt.MassScaleStiffest, Batch: batch, Steps: steps}
		if pc == adapt.PrecondLowRank {
			c.Rank = rank
		}
		stable, err := StableLRRank(ref, pc, c.MassScale, rank, n, StableOmegaH)
		if err != nil {
			return nil, err
		}
		mm, err := exactMass(ref, pc, c.MassScale, rank)
		if err != nil {
			return nil, err
		}
		noisy, err := MinibatchNoiseLR(c, dir, ref, mm, NoiseShareTarget, NoiseDraws)
		if err != nil {
			return nil, err
		}
		c.LR = math.Min(stable, noisy)
		out = append(out, c)
	}
	return out, nil
}

// exactMass returns the dense or low-rank mass preconditioner p would set
// from the reference covariance itself.
func exactMass(ref Reference, p adapt.Preconditioner, scale adapt.MassScale, rank int) (sampler.MassMatrix, error) {
	d := len(ref.Cov)
	flat := make([]float64, d*d)
	for a := 0; a < d; a++ {
		copy(flat[a*d:], ref.Cov[a])
	}
	switch p {
	case adapt.PrecondDense:
		return adapt.DenseMassOf(flat, d, 0, scale)
	case adapt.PrecondLowRank:
		if rank == 0 {
			rank = adapt.DefaultMassRank
		}
		return adapt.LowRankMassOf(flat, d, rank, scale)
	}
	return nil, fmt.Errorf("exact mass of %s: preconditioner %v is diagonal", ref.Posterior, p)
}

// MinibatchNoiseLR returns the learning rate (train's per-example one) at
// which case c's minibatch gradient noise, measured at the reference mean
// over draws minibatches, is share of the momentum's diffusion per step
// in the noisiest direction of the mass mm: with V the noise's covariance
// and M^-1 = C C', the noise per step in the momentum's units is
// h^2 C' V C, and h^2 lambda_max(C' V C) = share/(1 - share) times the
// injected variance at c's friction. It is the step the health check's
// advice leads a user to (the noise share read, the step reduced by the
// factor it names), found here before the run: on earnings the noise is
// far from (N/b - 1) times the curvature that MinibatchOmegaH assumes
// (its income data's residuals are heavy-tailed and depend on height), up
// to about 250 times that in the posterior's whitened coordinates.
func MinibatchNoiseLR(c Case, dir string, ref Reference, mm sampler.MassMatrix, share float64, draws int) (float64, error) {
	p := Posteriors[c.Posterior]
	d, model, err := p.Load(dir)
	if err != nil {
		return 0, err
	}
	c.LR, c.Steps = 1e-9, 2 // a chain only for its potential
	ch, err := newChain(c, d, model)
	if err != nil {
		return 0, err
	}
	dim := len(ref.Mean)
	rng := sampler.NewStream(c.Seed+1, 60)
	g, k := make([]float64, dim), make([]float64, dim)
	mean := make([]float64, dim)
	m2 := mat.NewSymDense(dim, nil)
	for r := 1; r <= draws; r++ {
		if _, err := ch.pot.Gradient(ref.Mean, g, sampler.Minibatch{}, rng.Rand); err != nil {
			return 0, err
		}
		mm.Kick(k, g)
		for a := range k { // Welford's co-moment
			da := k[a] - mean[a]
			mean[a] += da / float64(r)
			k[a] = da
		}
		f := float64(r-1) / float64(r)
		for a := 0; a < dim; a++ {
			for b := a; b < dim; b++ {
				m2.SetSym(a, b, m2.At(a, b)+f*k[a]*k[b])
			}
		}
	}
	m2.ScaleSym(1/float64(draws-1), m2)
	top, ok := largestEigenvalue(m2)
	if !ok {
		return 0, fmt.Errorf("noise step of %s: eigenvalues failed", c.Posterior)
	}
	inj := -2 * math.Expm1(-c.friction())
	h := math.Sqrt(share / (1 - share) * inj / top)
	return float64(len(d.Y)) * h * h, nil
}
