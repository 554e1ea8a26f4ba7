package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// TwoGaussians returns a 2-class toy problem in dim dimensions: class 0 is
// drawn from N(-mu, I) and class 1 from N(+mu, I) with mu = sep/2 along every
// axis, n examples with labels alternating.
func TwoGaussians(n, dim int, sep float64, rng *rand.Rand) *Dataset {
	d := &Dataset{N: n, D: dim, Classes: 2, X: make([]float32, n*dim), Labels: make([]int, n)}
	for i := 0; i < n; i++ {
		c := i % 2
		d.Labels[i] = c
		mu := sep / 2 / math.Sqrt(float64(dim))
		if c == 0 {
			mu = -mu
		}
		for j := 0; j < dim; j++ {
			d.X[i*dim+j] = float32(mu + rng.NormFloat64())
		}
	}
	return d
}

// SyntheticImages returns n MNIST-shaped examples (dim features in [0,1],
// classes classes): each class has a random prototype image and examples are
// noisy copies of it. It is learnable, so it serves benchmarks and tests that
// need the shape of real data without the files.
func SyntheticImages(n, dim, classes int, rng *rand.Rand) (*Dataset, error) {
	if n <= 0 || dim <= 0 || classes < 2 {
		return nil, fmt.Errorf("synthetic images: n=%d dim=%d classes=%d: need n, dim > 0 and classes >= 2", n, dim, classes)
	}
	protos := make([]float64, classes*dim)
	for i := range protos {
		protos[i] = rng.Float64()
	}
	d := &Dataset{N: n, D: dim, Classes: classes, X: make([]float32, n*dim), Labels: make([]int, n)}
	for i := 0; i < n; i++ {
		c := rng.IntN(classes)
		d.Labels[i] = c
		for j := 0; j < dim; j++ {
			v := protos[c*dim+j] + 0.5*rng.NormFloat64()
			d.X[i*dim+j] = float32(math.Min(1, math.Max(0, v)))
		}
	}
	return d, nil
}

// NoiseImages returns n examples of dim features uniform on [0,1) with
// labels uniform over classes: the data of the PyTorch twins that `ptsghmc
// bench` is compared with (scripts/pytorch_bench.py: torch.rand, torch.randint).
// There is nothing to learn, so a network trained on it never grows as
// confident as one on SyntheticImages' well-separated prototypes does within
// a few hundred steps, where the output layer's error p - y underflows to
// subnormal floats, which the CPU multiplies at a fraction of its speed; a
// step's time on it is what a step costs on real data.
func NoiseImages(n, dim, classes int, rng *rand.Rand) (*Dataset, error) {
	if n <= 0 || dim <= 0 || classes < 2 {
		return nil, fmt.Errorf("noise images: n=%d dim=%d classes=%d: need n, dim > 0 and classes >= 2", n, dim, classes)
	}
	d := &Dataset{N: n, D: dim, Classes: classes, X: make([]float32, n*dim), Labels: make([]int, n)}
	for i := range d.X {
		d.X[i] = rng.Float32()
	}
	for i := range d.Labels {
		d.Labels[i] = rng.IntN(classes)
	}
	return d, nil
}

// Regression1D returns n examples of y = sin(3x) + noise*eps with x uniform
// on [-2,2]: a toy regression problem with one input and one target.
func Regression1D(n int, noise float64, rng *rand.Rand) *Dataset {
	d := &Dataset{N: n, D: 1, Outputs: 1, X: make([]float32, n), Targets: make([]float32, n)}
	for i := 0; i < n; i++ {
		x := -2 + 4*rng.Float64()
		d.X[i] = float32(x)
		d.Targets[i] = float32(math.Sin(3*x) + noise*rng.NormFloat64())
	}
	return d
}
