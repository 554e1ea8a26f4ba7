// Package nullspace widens the prior of a network's first layer along the
// input directions its training data do not span, so that the posterior's
// samples disagree on inputs that leave the data's subspace.
//
// A Gaussian prior on an MLP's first-layer weights constrains, through the
// likelihood, only their components along the directions the training
// inputs span; the other components keep the prior. Mutual information (the
// samples' disagreement) on an input x then grows with the prior's variance
// along the part of x outside that span. Prior.Fit finds the span (the top
// eigenvectors of the inputs' second moment E[x x^T], keeping a fraction of
// its trace), and a Prior of scale s gives each column w of the first layer
// the covariance
//
//	Sigma = sigma^2 (P + s^2 N),   N = V V^T, P = I - N,
//
// where V holds the directions left out and sigma^2 is the layer's own prior
// variance: the prior is s times wider off the data's span and unchanged on
// it. It is sampled as a reparametrisation: with A = P + s N, the chain
// samples w' under the layer's isotropic prior on the mapped inputs A x
// (Inputs), and w = A w' (FoldWeights) is the same network on the raw
// inputs, since w'^T A x = (A w')^T x. (Under a Student-t prior, train's
// --prior-df, w' has independent Student-t coordinates and w = A w' is that
// prior stretched s times off the span, not a Gaussian.) Mapping the data once costs nothing
// per step; the samples a run writes are folded, so eval, predict and serve
// read raw-input weights.
//
// A convolution's first kernel acts on patches: FitPatches finds the span
// of the training images' patches (Patches: every window position the
// convolution visits, its padding included) in the patch space of
// Channels*KH*KW values, and the kernel K, a matrix of one row per output
// channel, gets the prior of each row widened s times off that span. The
// patches overlap, so the images cannot be mapped once: the chain samples
// K' under the layer's isotropic prior and the network convolves with
// K = K' A (nn.ConvNet.FirstMap, A from Matrix), the same network as K on
// the raw images since K p = K' (A p); the samples are written as K
// (FoldKernel).
//
// Inverted images' patches lie in the span of the training patches, so a
// first kernel's prior cannot tell them; as whole images they leave the
// images' span. The skip branch (nn.ConvNet.Skip) gives a ConvNet the
// MLP's mechanism as a component of its own: a dense weight W from the
// raw image to the first dense layer, W = s N W' under Fit's image prior
// (zero on the span, s times the layer's prior off it), sampled as W'
// through SkipModel and written as W (FoldSkip).
package nullspace

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// DefaultKeep is the fraction of the inputs' second moment the data's span
// holds when none is given: the directions left out hold 0.1% of it.
const DefaultKeep = 0.999

// Prior is a first-layer prior widened by Scale off the span of the training
// inputs (or, for a convolution, of their patches: Patch): V holds the D-K
// orthonormal directions left out, column-major (V[j*D:(j+1)*D] is
// direction j).
type Prior struct {
	D, K  int       // input (or patch) size, and the dimension of the span kept
	Scale float64   // s: the prior's standard deviation off the span, relative to on it
	V     []float64 // (D-K) orthonormal directions off the span, each D values
	// Patch, when not nil, says the prior is a first convolution's
	// (FitPatches): its vectors are the patches of this geometry, and it
	// maps the kernel (Matrix, FoldKernel), not the inputs. Nil: a dense
	// first layer's, on whole inputs (Fit).
	Patch *Patches
}

// Fit returns the Prior of scale for the inputs of data: the span is the
// fewest top eigenvectors of E[x x^T] (over data's examples) whose
// eigenvalues hold at least keep of the trace, keep in (0, 1); scale > 0.
// Its products take the process's BLAS: train fits in the pinned
// arithmetic, so a run's prior is the same on every machine.
func Fit(data *datasets.Dataset, keep, scale float64) (*Prior, error) {
	if err := checkFit(keep, scale); err != nil {
		return nil, err
	}
	if data == nil || data.N == 0 || data.D == 0 {
		return nil, fmt.Errorf("null-space prior: no training inputs")
	}
	d := data.D
	buf := make([]float64, len(data.X))
	for i, v := range data.X {
		buf[i] = float64(v)
	}
	x := mat.NewDense(data.N, d, buf)
	var m mat.SymDense
	m.SymOuterK(1/float64(data.N), x.T())
	return fromMoment(&m, keep, scale, "inputs'")
}

// checkFit reports an error when keep or scale cannot make a prior.
func checkFit(keep, scale float64) error {
	if !(keep > 0 && keep < 1) {
		return fmt.Errorf("null-space prior: keep %v outside (0, 1)", keep)
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("null-space prior: scale %v must be positive and finite", scale)
	}
	return nil
}

// fromMoment returns the Prior of scale whose span is the fewest top
// eigenvectors of the second moment m (of the vectors what names) holding
// at least keep of its trace.
func fromMoment(m *mat.SymDense, keep, scale float64, what string) (*Prior, error) {
	d := m.SymmetricDim()
	var eig mat.EigenSym
	if !eig.Factorize(m, true) {
		return nil, fmt.Errorf("null-space prior: the eigendecomposition of the %s %dx%d second moment did not converge", what, d, d)
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	trace := 0.0
	for _, v := range vals {
		trace += math.Max(v, 0)
	}
	// The directions left out are the smallest eigenvalues whose sum stays
	// within (1 - keep) of the trace.
	left, sum := 0, 0.0
	for left < d && sum+math.Max(vals[left], 0) <= (1-keep)*trace {
		sum += math.Max(vals[left], 0)
		left++
	}
	p := &Prior{D: d, K: d - left, Scale: scale, V: make([]float64, left*d)}
	for j := 0; j < left; j++ {
		for i := 0; i < d; i++ {
			p.V[j*d+i] = vecs.At(i, j)
		}
	}
	return p, nil
}

// Digest returns the SHA-256 of the prior's directions and scale (and of a
// convolution's prior, its patch geometry): what a run records so that a
// resume refuses a prior fitted differently.
func (p *Prior) Digest() string {
	h := sha256.New()
	var b [8]byte
	vals := append([]float64{float64(p.D), float64(p.K), p.Scale}, p.V...)
	if g := p.Patch; g != nil { // a dense layer's prior hashes as it always has
		for _, v := range []int{g.Channels, g.Height, g.Width, g.KH, g.KW, g.PadH, g.PadW, g.StrideH, g.StrideW} {
			vals = append(vals, float64(v))
		}
	}
	for _, v := range vals {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// apply sets y = x + (s-1) V V^T x for the n vectors of x (each D values,
// row after row), in float64.
func (p *Prior) apply(x []float64, n int) {
	left := p.D - p.K
	if left == 0 || p.Scale == 1 {
		return
	}
	xm := mat.NewDense(n, p.D, x)
	v := mat.NewDense(left, p.D, p.V)
	var c mat.Dense // n x left: V^T x for each vector
	c.Mul(xm, v.T())
	var back mat.Dense // n x D: V V^T x
	back.Mul(&c, v)
	back.Scale(p.Scale-1, &back)
	xm.Add(xm, &back)
}

// Inputs maps data's inputs x to A x = x + (s-1) V V^T x in place: the inputs
// the sampled first layer w' sees.
func (p *Prior) Inputs(data *datasets.Dataset) error {
	if data == nil {
		return nil
	}
	if p.Patch != nil {
		return fmt.Errorf("null-space prior: a convolution's prior maps its kernel (FoldKernel), not the images: their patches overlap")
	}
	if data.D != p.D {
		return fmt.Errorf("null-space prior: inputs of %d values, the prior was fitted on %d", data.D, p.D)
	}
	const rows = 4096
	buf := make([]float64, rows*p.D)
	for start := 0; start < data.N; start += rows {
		n := min(rows, data.N-start)
		x := data.X[start*p.D : (start+n)*p.D]
		for i, v := range x {
			buf[i] = float64(v)
		}
		p.apply(buf[:len(x)], n)
		for i := range x {
			x[i] = float32(buf[i])
		}
	}
	return nil
}

// FoldWeights maps a first layer w' of shape [D, out] (row-major: input i's
// weights to the out units at w[i*out:(i+1)*out]) to w = A w' in place: the
// same network on raw inputs.
func (p *Prior) FoldWeights(w []float64, out int) error {
	if p.Patch != nil {
		return fmt.Errorf("null-space prior: fitted on a convolution's patches (FoldKernel), not on whole inputs")
	}
	if out <= 0 || len(w) != p.D*out {
		return fmt.Errorf("null-space prior: a first layer of %d values is not %d inputs by %d units", len(w), p.D, out)
	}
	// A is symmetric, so (A W)^T = W^T A: apply A to each unit's column,
	// i.e. to the rows of W^T.
	wt := make([]float64, len(w))
	for i := 0; i < p.D; i++ {
		for j := 0; j < out; j++ {
			wt[j*p.D+i] = w[i*out+j]
		}
	}
	p.apply(wt, out)
	for i := 0; i < p.D; i++ {
		for j := 0; j < out; j++ {
			w[i*out+j] = wt[j*p.D+i]
		}
	}
	return nil
}
