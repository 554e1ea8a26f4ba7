package nullspace_test

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nullspace"
)

// Images of three pixels whose last pixel is always dark: the prior widens
// along that pixel alone, and a first layer sampled on the mapped inputs
// folds back to the raw inputs' network.
func ExampleFit() {
	data := &datasets.Dataset{N: 4, D: 3, X: []float32{
		1, 0, 0,
		0, 1, 0,
		1, 1, 0,
		0.5, 0.2, 0,
	}}
	p, err := nullspace.Fit(data, 0.999, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("span %d of %d inputs\n", p.K, p.D)
	noise := &datasets.Dataset{N: 1, D: 3, X: []float32{0.5, 0.5, 0.5}}
	if err := p.Inputs(noise); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mapped noise image: %.1f\n", noise.X)
	w := []float64{1, 2, 3} // a first layer of one unit, sampled on mapped inputs
	if err := p.FoldWeights(w, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("folded weights: %.1f\n", w)
	// Output:
	// span 2 of 3 inputs
	// mapped noise image: [0.5 0.5 5.0]
	// folded weights: [1.0 2.0 30.0]
}

// Images whose rows are constant: every 1x2 patch is (a, a), so the
// patches leave the direction (1, -1) out, and the prior widens the kernel
// along it. The chain's kernel K' folds to the raw images' K = K' A.
func ExampleFitPatches() {
	data := &datasets.Dataset{N: 2, D: 6, X: []float32{
		1, 1, 1,
		2, 2, 2,

		0.5, 0.5, 0.5,
		3, 3, 3,
	}}
	g := nullspace.Patches{Channels: 1, Height: 2, Width: 3, KH: 1, KW: 2, StrideH: 1, StrideW: 1}
	p, err := nullspace.FitPatches(data, g, 0.999, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("span %d of %d patch values\n", p.K, p.D)
	k := []float64{1, 0} // one output channel's kernel, sampled as K'
	if err := p.FoldKernel(k, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("folded kernel: %.1f\n", k)
	// Output:
	// span 1 of 2 patch values
	// folded kernel: [5.5 -4.5]
}

// Images of three pixels whose last pixel is always dark, as in ExampleFit:
// a CNN's skip branch (nn.ConvNet.Skip) from these pixels to one unit is
// sampled as W' and written as W = s V V^T W', zero along the pixels the
// images use and s times W' along the dark one, so that the branch adds
// nothing to an image in the span and moves an image lit there.
func ExamplePrior_FoldSkip() {
	data := &datasets.Dataset{N: 4, D: 3, X: []float32{
		1, 0, 0,
		0, 1, 0,
		1, 1, 0,
		0.5, 0.2, 0,
	}}
	p, err := nullspace.Fit(data, 0.999, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	w := []float64{1, 2, 3} // the branch's W' to one unit, as the chain samples it
	if err := p.FoldSkip(w, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("folded branch: %.1f\n", w)
	for _, x := range [][]float64{{0.3, 0.7, 0}, {0.3, 0.7, 0.5}} {
		fmt.Printf("image %.1f: branch adds %.1f\n", x, x[0]*w[0]+x[1]*w[1]+x[2]*w[2])
	}
	// Output:
	// folded branch: [0.0 0.0 30.0]
	// image [0.3 0.7 0.0]: branch adds 0.0
	// image [0.3 0.7 0.5]: branch adds 15.0
}
