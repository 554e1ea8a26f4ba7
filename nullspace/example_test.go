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
