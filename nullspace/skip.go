package nullspace

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/ptsghmc/ptsghmc/nn"
)

// The skip branch (nn.ConvNet.Skip) gives a ConvNet the MLP's mechanism as
// a component of its own: a dense weight W [D, n] from the raw image x (D
// values) to the first dense layer's pre-activation, under the prior of an
// image Prior p (Fit's) restricted to the directions off the images' span,
//
//	W = s N W',   N = V V^T,   W' under the layer's isotropic prior,
//
// so that each column of W has the covariance sigma^2 s^2 N: exactly zero
// on the span (the branch adds nothing to an image in it) and s times the
// layer's prior off it, where the samples of W' spread as the prior does
// and disagree on an image with a part off the span. The chain samples W'
// (SkipModel's graph computes s (x V) (V^T W')) and the samples are
// written as W (FoldSkip).

// CheckSkip reports an error when m cannot take the skip branch: m must be
// a ConvNet (nn.Model.Conv) built with it (nn.ConvNet.Skip) on images of d
// values.
func CheckSkip(m nn.Model, d int) error {
	if m.Conv == nil {
		return fmt.Errorf("null-space skip: model %s is not a ConvNet (lenet, cnn3): an MLP's --null-space-prior already widens its first layer in image space", m.Name)
	}
	if !m.Conv.Skip {
		return fmt.Errorf("null-space skip: model %s was built without its skip branch (nn.ConvNet.Skip)", m.Name)
	}
	if c := m.Conv; c.Channels*c.Height*c.Width != d {
		return fmt.Errorf("null-space skip: model %s reads images of %d values, the data have %d", m.Name, c.Channels*c.Height*c.Width, d)
	}
	return nil
}

// checkImage reports an error when p is not an image prior (Fit's) with
// at least one direction off the span.
func (p *Prior) checkImage() error {
	if p.Patch != nil {
		return fmt.Errorf("null-space skip: the prior was fitted on a convolution's patches, the skip branch needs the images' (Fit)")
	}
	if p.K >= p.D {
		return fmt.Errorf("null-space skip: the training images span all %d directions: the branch would be zero", p.D)
	}
	return nil
}

// SkipModel returns the model a chain samples under the skip branch's
// prior: m's ConvNet (which must have the branch, CheckSkip) whose branch
// weight is s V V^T W' (nn.ConvNet.SkipBasis, SkipScale), with m's name,
// layout, priors and any other map (a first kernel's, FirstMap) kept.
func (p *Prior) SkipModel(m nn.Model) (nn.Model, error) {
	if err := p.checkImage(); err != nil {
		return m, err
	}
	if err := CheckSkip(m, p.D); err != nil {
		return m, err
	}
	net := *m.Conv
	net.SkipBasis, net.SkipScale = p.V, p.Scale
	return remapped(m, net, "null-space skip")
}

// FoldSkip maps the skip branch's sampled weight W' of shape [D, out]
// (row-major) to W = s V V^T W' in place: the branch of the network on raw
// images.
func (p *Prior) FoldSkip(w []float64, out int) error {
	if err := p.checkImage(); err != nil {
		return err
	}
	if out <= 0 || len(w) != p.D*out {
		return fmt.Errorf("null-space skip: a branch of %d values is not %d image values by %d units", len(w), p.D, out)
	}
	vt := mat.NewDense(p.D-p.K, p.D, p.V)
	wm := mat.NewDense(p.D, out, w)
	var c mat.Dense // [L, out]: V^T W'
	c.Mul(vt, wm)
	wm.Mul(vt.T(), &c) // writes w
	wm.Scale(p.Scale, wm)
	return nil
}
