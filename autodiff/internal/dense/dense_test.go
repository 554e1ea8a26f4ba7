package dense

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/nn"
	"gonum.org/v1/gonum/blas"
)

// edges are float32 values whose bits a vector pass could get wrong: NaNs
// of both signs with payloads (quiet and signalling), signed zeros,
// subnormals of both signs, infinities, the extremes and two ordinary
// values.
var edges = []float32{
	math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002),
	math.Float32frombits(0x7f800003), math.Float32frombits(0xff800004),
	float32(math.Copysign(0, -1)), 0,
	math.Float32frombits(1), math.Float32frombits(0x807fffff),
	float32(math.Inf(1)), float32(math.Inf(-1)),
	math.MaxFloat32, -math.MaxFloat32, 0.1, -3.75,
}

// edgeMatrix returns rows x cols values: the edges in an order in which a
// row of len(edges)^2 meets every pair of edges with bias pairs(cols),
// then random values of mixed sizes and signs.
func edgeMatrix(rng *rand.Rand, rows, cols int) []float32 {
	m := make([]float32, rows*cols)
	e := len(edges)
	for i := range m {
		if i < e*e {
			m[i] = edges[i%e]
			continue
		}
		m[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20)))
		if rng.IntN(5) == 0 {
			m[i] = edges[rng.IntN(e)]
		}
	}
	return m
}

// edgeBias returns cols values: element j is edges[j/len(edges)] for the
// first len(edges)^2, so that with edgeMatrix's first row every pair of
// edges is added, then random values.
func edgeBias(rng *rand.Rand, cols int) []float32 {
	b := make([]float32, cols)
	e := len(edges)
	for j := range b {
		if j < e*e {
			b[j] = edges[j/e]
			continue
		}
		b[j] = float32(rng.NormFloat64())
	}
	return b
}

// noGemm leaves C as it is, so that a test sets the products' values.
func noGemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
}

// sameBits reports the first element whose bits differ, or -1.
func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestVectorPassesSame: Forward's bias addition and activation, Activate's
// ReLU, ActivateGrad's ReLU adjoint and Backward's bias sums give the same
// bits with the float32 vector passes as with the Go loops, over widths
// that end inside a block of 16 and every pair of edge values (NaN
// payloads, -0 and +0, subnormals, infinities).
func TestVectorPassesSame(t *testing.T) {
	defer func() { vectorPasses = true }()
	passes := []struct {
		name string
		run  func(rng *rand.Rand, rows, cols int) []float32
	}{
		{"Forward relu", func(rng *rand.Rand, rows, cols int) []float32 {
			out, b := edgeMatrix(rng, rows, cols), edgeBias(rng, cols)
			Forward(noGemm, nn.ReLU, true, make([]float32, rows), make([]float32, cols), b, out, rows, 1, cols)
			return out
		}},
		{"Forward tanh", func(rng *rand.Rand, rows, cols int) []float32 {
			out, b := edgeMatrix(rng, rows, cols), edgeBias(rng, cols)
			Forward(noGemm, nn.Tanh, true, make([]float32, rows), make([]float32, cols), b, out, rows, 1, cols)
			return out
		}},
		{"Forward last layer", func(rng *rand.Rand, rows, cols int) []float32 {
			out, b := edgeMatrix(rng, rows, cols), edgeBias(rng, cols)
			Forward(noGemm, nn.ReLU, false, make([]float32, rows), make([]float32, cols), b, out, rows, 1, cols)
			return out
		}},
		{"Activate relu", func(rng *rand.Rand, rows, cols int) []float32 {
			z := edgeMatrix(rng, rows, cols)
			Activate(nn.ReLU, z)
			return z
		}},
		{"ActivateGrad relu", func(rng *rand.Rand, rows, cols int) []float32 {
			a, d := edgeMatrix(rng, rows, cols), edgeMatrix(rng, rows, cols)
			for i := range d { // the adjoint: every value, in another order
				d[i] = d[(i*7+3)%len(d)]
			}
			ActivateGrad(nn.ReLU, a, d)
			return d
		}},
		{"Backward bias sums", func(rng *rand.Rand, rows, cols int) []float32 {
			delta, gb := edgeMatrix(rng, rows, cols), make([]float32, cols)
			Backward(noGemm, make([]float32, rows), make([]float32, cols), delta, make([]float32, cols), gb, nil, rows, 1, cols)
			return gb
		}},
	}
	for _, p := range passes {
		for _, cols := range []int{1, 10, 15, 16, 17, 31, 196, 400} {
			for _, rows := range []int{1, 3, 5} {
				run := func(vec bool) []float32 {
					vectorPasses = vec
					return p.run(rand.New(rand.NewPCG(uint64(rows), uint64(cols))), rows, cols)
				}
				want, got := run(false), run(true)
				if i := sameBits(got, want); i >= 0 {
					t.Errorf("%s %dx%d: element %d: bits %#x with the vector pass, %#x with the Go loop",
						p.name, rows, cols, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
}

// TestReLUEdges pins the ReLU's and its adjoint's values at the edges, with
// and without the vector passes: max(v, 0) is v for v > 0, +0 for -0 and
// negative values, a NaN with its sign bit cleared for a NaN; the adjoint
// is zero exactly where the output is +0 or -0.
func TestReLUEdges(t *testing.T) {
	defer func() { vectorPasses = true }()
	want := []uint32{0x7fc00001, 0x7fc00002, 0x7f800003, 0x7f800004, 0, 0, 1, 0, 0x7f800000, 0, 0x7f7fffff, 0, math.Float32bits(0.1), 0}
	for _, vec := range []bool{false, true} {
		vectorPasses = vec
		z := append([]float32{}, edges...)
		Activate(nn.ReLU, z)
		d := make([]float32, len(edges))
		for i := range d {
			d[i] = 2
		}
		ActivateGrad(nn.ReLU, edges, d)
		for i, v := range z {
			if math.Float32bits(v) != want[i] {
				t.Errorf("vector %v: max(%#x, 0) = %#x, want %#x", vec, math.Float32bits(edges[i]), math.Float32bits(v), want[i])
			}
			if keep := edges[i] != 0; (d[i] == 2) != keep {
				t.Errorf("vector %v: adjoint at output %#x is %v", vec, math.Float32bits(edges[i]), d[i])
			}
		}
	}
}

// BenchmarkPasses times the float32 passes of a 400-unit ReLU layer at
// batch 128 (the products left out) with the Go loops and with the vector
// passes: Forward's bias addition and ReLU, ActivateGrad's ReLU adjoint and
// Backward's bias sums, on standard normal values (no subnormals, whose
// arithmetic is slower).
func BenchmarkPasses(b *testing.B) {
	defer func() { vectorPasses = true }()
	const rows, cols = 128, 400
	rng := rand.New(rand.NewPCG(1, 2))
	normal := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	z, bias, d, gb := normal(rows*cols), normal(cols), normal(rows*cols), make([]float32, cols)
	in, w := make([]float32, rows), make([]float32, cols)
	passes := []struct {
		name string
		run  func()
	}{
		{"bias+relu", func() { Forward(noGemm, nn.ReLU, true, in, w, bias, z, rows, 1, cols) }},
		{"relu adjoint", func() { ActivateGrad(nn.ReLU, z, d) }},
		{"bias sums", func() { Backward(noGemm, in, w, d, w, gb, nil, rows, 1, cols) }},
	}
	for _, p := range passes {
		for _, vec := range []bool{false, true} {
			name := map[bool]string{false: "go", true: "vector"}[vec]
			b.Run(p.name+"/"+name, func(b *testing.B) {
				vectorPasses = vec
				for i := 0; i < b.N; i++ {
					p.run()
				}
			})
		}
	}
}
