package nullspace

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// ConvPatches returns the patches the first convolution of a ConvNet
// reads: its Kernel x Kernel window over Channels x Height x Width images,
// "same" padding (Kernel/2 on each side), stride 1.
func ConvPatches(c nn.ConvNet) Patches {
	pad := c.Kernel / 2
	return Patches{Channels: c.Channels, Height: c.Height, Width: c.Width, KH: c.Kernel, KW: c.Kernel,
		PadH: pad, PadW: pad, StrideH: 1, StrideW: 1}
}

// denseFirst reports whether m's first learnable is a dense layer W0 of
// d inputs (an MLP's, or a model's laid out as one).
func denseFirst(m nn.Model, d int) bool {
	if len(m.Layout) == 0 {
		return false
	}
	first := m.Layout[0]
	return first.Name == "W0" && len(first.Shape) == 2 && first.Shape[0] == d
}

// CheckModel reports an error when a prior cannot widen the first layer of
// m on inputs of d values: a dense layer W0 of d inputs (Fit) or the first
// convolution of a ConvNet (nn.Model.Conv; FitPatches) can be; other
// models (an imported network) cannot. It is cheap: call it before a fit.
func CheckModel(m nn.Model, d int) error {
	if denseFirst(m, d) || m.Conv != nil {
		return nil
	}
	if len(m.Layout) == 0 {
		return fmt.Errorf("null-space prior: model %s has no learnables", m.Name)
	}
	first := m.Layout[0]
	return fmt.Errorf("null-space prior: model %s's first learnable is %s %v, neither a dense layer of %d inputs nor the first convolution of a ConvNet (lenet, cnn3)", m.Name, first.Name, first.Shape, d)
}

// FitModel returns the prior of scale (keep of the second moment, as Fit)
// for the first layer of m on data's inputs: Fit's for a dense first layer
// (whose inputs the caller maps, Inputs), FitPatches' of the first
// convolution's patches for a ConvNet (whose kernel Model maps).
func FitModel(m nn.Model, data *datasets.Dataset, keep, scale float64) (*Prior, error) {
	if data == nil {
		return nil, fmt.Errorf("null-space prior: no training inputs")
	}
	if err := CheckModel(m, data.D); err != nil {
		return nil, err
	}
	if denseFirst(m, data.D) {
		return Fit(data, keep, scale)
	}
	return FitPatches(data, ConvPatches(*m.Conv), keep, scale)
}

// Model returns the model a chain samples under the prior: m itself for a
// dense layer's (its inputs are mapped instead), and for a convolution's,
// m's ConvNet whose first kernel is K' A (nn.ConvNet.FirstMap, A =
// Matrix()), with m's name, layout and priors.
func (p *Prior) Model(m nn.Model) (nn.Model, error) {
	if p.Patch == nil {
		return m, nil
	}
	if m.Conv == nil {
		return m, fmt.Errorf("null-space prior: model %s is not a ConvNet: a patch prior maps a ConvNet's first kernel", m.Name)
	}
	if g := ConvPatches(*m.Conv); g != *p.Patch {
		return m, fmt.Errorf("null-space prior: fitted to patches %+v, model %s's first convolution reads %+v", *p.Patch, m.Name, g)
	}
	net := *m.Conv
	net.FirstMap = p.Matrix()
	return remapped(m, net, "null-space prior")
}

// remapped returns m rebuilt from its ConvNet net with a map set (a first
// kernel's or a skip branch's): m's name, weights, digest and description,
// and an error naming what when the map changed m's layout.
func remapped(m nn.Model, net nn.ConvNet, what string) (nn.Model, error) {
	mm, err := net.Model(m.Name)
	if err != nil {
		return m, err
	}
	if mm.Layout.String() != m.Layout.String() {
		return m, fmt.Errorf("%s: model %s mapped has parameters %s, not %s", what, m.Name, mm.Layout, m.Layout)
	}
	mm.Weights, mm.SHA256, mm.Description = m.Weights, m.SHA256, m.Description
	return mm, nil
}
