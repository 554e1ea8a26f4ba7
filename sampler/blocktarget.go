package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MixtureBlock is a mixture target extended along dimension: the paper's
// multimodal mixture (Mix) in the first Mix.Dim() coordinates and an
// independent D-dimensional Gaussian block N(0, BlockSD^2 I) in the rest,
//
//	U(theta) = U_mix(theta[:m]) + |theta[m:]|^2 / (2 BlockSD^2),
//
// with the mixture's minibatch-like noise: every evaluation of U carries
// Gaussian noise of variance Mix.NoiseVar (the mean of PerEval per-example
// terms, as the exchange tests see it) and every coordinate of grad U noise
// of the same variance. The modes (of unequal mass, not copies of each
// other) are the mixture's; the block adds no mode but a communication
// barrier that grows as sqrt(D): between temperatures T1 < T2 it adds
// sqrt(D/(2 pi)) ln(T2/T1) to Lambda (see StdGaussian), which is what makes
// swaps between rungs rarer as D grows.
type MixtureBlock struct {
	Mix     *Mixture
	D       int     // dimension of the Gaussian block
	BlockSD float64 // 0 means 1
}

// NewMixtureBlock returns the named mixture (gauss1d4 or gauss2d5) extended
// by a d-dimensional standard Gaussian block.
func NewMixtureBlock(target string, d int) (*MixtureBlock, error) {
	m, err := Target(target)
	if err != nil {
		return nil, err
	}
	if d < 0 {
		return nil, fmt.Errorf("mixture block: dimension %d must be >= 0", d)
	}
	return &MixtureBlock{Mix: m, D: d}, nil
}

func (b *MixtureBlock) sd() float64 {
	if b.BlockSD > 0 {
		return b.BlockSD
	}
	return 1
}

// Dim returns the mixture's dimension plus D.
func (b *MixtureBlock) Dim() int { return b.Mix.Dim() + b.D }

// Size returns 0: the noise terms are unlimited.
func (b *MixtureBlock) Size() int { return 0 }

// Start returns the mixture's start (the mean of its lowest-weight
// component, where the paper starts every chain) with the block at 0.
func (b *MixtureBlock) Start() []float64 {
	x := make([]float64, b.Dim())
	copy(x, b.Mix.Start())
	return x
}

// ModeWeights returns the fraction of samples nearest each mixture
// component, from their first Mix.Dim() coordinates.
func (b *MixtureBlock) ModeWeights(xs [][]float64) []float64 {
	m := b.Mix.Dim()
	head := make([][]float64, len(xs))
	for i, x := range xs {
		head[i] = x[:m]
	}
	return b.Mix.ModeWeights(head)
}

// Exact returns U(theta) and writes grad U(theta) into grad (if not nil).
func (b *MixtureBlock) Exact(theta, grad []float64) float64 {
	m := b.Mix.Dim()
	var gm []float64
	if grad != nil {
		gm = grad[:m]
	}
	u := b.Mix.Exact(theta[:m], gm)
	v := b.sd() * b.sd()
	for i, x := range theta[m:] {
		u += 0.5 * x * x / v
		if grad != nil {
			grad[m+i] = x / v
		}
	}
	return u
}

// Gradient returns a noisy U and writes a noisy gradient into grad.
func (b *MixtureBlock) Gradient(theta, grad []float64, _ Minibatch, rng *rand.Rand) (float64, error) {
	u := b.Exact(theta, grad)
	sd := math.Sqrt(b.Mix.NoiseVar)
	for i := range grad {
		grad[i] += sd * rng.NormFloat64()
	}
	return u + sd*rng.NormFloat64(), nil
}

// Terms writes to-from per-example terms u_i = U(theta) + e_i with e_i ~
// N(0, PerEval*NoiseVar) for each theta, as Mixture.Terms does.
func (b *MixtureBlock) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	NoisyTerms(b.Exact, thetas, to-from, math.Sqrt(b.Mix.NoiseVar*float64(b.Mix.terms())), rng, out)
	return nil
}
