package compile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"gorgonia.org/tensor"
)

// convShapes are the column kernels' test shapes: LeNet's two
// convolutions, CNN3's 3x3 ones, a dilated same convolution, and shapes
// the fast paths leave to the reference (a valid convolution, stride 2).
var convShapes = []im2col{
	{b: 1, c: 1, h: 28, w: 28, oh: 28, ow: 28, kh: 5, kw: 5, padH: 2, padW: 2, strideH: 1, strideW: 1, dilH: 1, dilW: 1},
	{b: 1, c: 32, h: 14, w: 14, oh: 14, ow: 14, kh: 5, kw: 5, padH: 2, padW: 2, strideH: 1, strideW: 1, dilH: 1, dilW: 1},
	{b: 1, c: 3, h: 7, w: 7, oh: 7, ow: 7, kh: 3, kw: 3, padH: 1, padW: 1, strideH: 1, strideW: 1, dilH: 1, dilW: 1},
	{b: 1, c: 2, h: 3, w: 3, oh: 3, ow: 3, kh: 3, kw: 3, padH: 1, padW: 1, strideH: 1, strideW: 1, dilH: 1, dilW: 1},
	{b: 1, c: 2, h: 9, w: 9, oh: 9, ow: 9, kh: 3, kw: 3, padH: 2, padW: 2, strideH: 1, strideW: 1, dilH: 2, dilW: 2},
	{b: 1, c: 2, h: 4, w: 4, oh: 4, ow: 4, kh: 5, kw: 5, padH: 2, padW: 2, strideH: 1, strideW: 1, dilH: 1, dilW: 1},
	{b: 1, c: 2, h: 8, w: 8, oh: 6, ow: 6, kh: 3, kw: 3, padH: 0, padW: 0, strideH: 1, strideW: 1, dilH: 1, dilW: 1},
	{b: 1, c: 2, h: 8, w: 8, oh: 4, ow: 4, kh: 3, kw: 3, padH: 1, padW: 1, strideH: 2, strideW: 2, dilH: 1, dilW: 1},
}

// randomWithZeros fills a slice with normal values, a tenth of them -0 and
// a tenth +0.
func randomWithZeros[T float](n int, rng *rand.Rand) []T {
	out := make([]T, n)
	for i := range out {
		switch rng.IntN(10) {
		case 0:
			out[i] = T(math.Copysign(0, -1))
		case 1:
		default:
			out[i] = T(rng.NormFloat64())
		}
	}
	return out
}

func sameBits[T float](a, b []T) int {
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) {
			return i
		}
	}
	return -1
}

// TestColumnKernelsMatchReference checks the fast im2col, col2im and
// addTo against the reference kernels bit for bit (signs of zero
// included), in float32 and float64, over same, dilated, valid and strided
// convolutions.
func TestColumnKernelsMatchReference(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testColumnKernels[float32](t) })
	t.Run("float64", func(t *testing.T) { testColumnKernels[float64](t) })
}

func testColumnKernels[T float](t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ic := range convShapes {
		name := fmt.Sprintf("c%d_%dx%d_k%d_pad%d_stride%d_dil%d", ic.c, ic.h, ic.w, ic.kh, ic.padH, ic.strideH, ic.dilH)
		img := randomWithZeros[T](ic.c*ic.h*ic.w, rng)
		ncol := ic.c * ic.kh * ic.kw * ic.oh * ic.ow
		got, want := randomWithZeros[T](ncol, rng), randomWithZeros[T](ncol, rng) // stale contents must be overwritten
		im2colImage(&ic, img, got)
		im2colImageRef(&ic, img, want)
		if i := sameBits(got, want); i >= 0 {
			t.Errorf("%s: im2col entry %d: %v, reference %v", name, i, got[i], want[i])
		}
		dcol := randomWithZeros[T](ncol, rng)
		dcolRef := append([]T(nil), dcol...)
		dimg := randomWithZeros[T](len(img), rng)
		dimgRef := append([]T(nil), dimg...)
		col2imImage(&ic, dcol, dimg)
		col2imImageRef(&ic, dcolRef, dimgRef)
		if i := sameBits(dimg, dimgRef); i >= 0 {
			t.Errorf("%s: col2im pixel %d: %v, reference %v", name, i, dimg[i], dimgRef[i])
		}
		// All -0: every sum stays -0 only if the padding entries add -0.
		negZero := T(math.Copysign(0, -1))
		for i := range dcol {
			dcol[i], dcolRef[i] = negZero, negZero
		}
		for i := range dimg {
			dimg[i], dimgRef[i] = negZero, negZero
		}
		col2imImage(&ic, dcol, dimg)
		col2imImageRef(&ic, dcolRef, dimgRef)
		if i := sameBits(dimg, dimgRef); i >= 0 {
			t.Errorf("%s: col2im of -0s: pixel %d: %v, reference %v", name, i, dimg[i], dimgRef[i])
		}
	}
	for _, n := range []int{3, 16, 17, 100, 1000} {
		x, y := randomWithZeros[T](n, rng), randomWithZeros[T](n, rng)
		yRef := append([]T(nil), y...)
		addTo(y, x)
		addToRef(yRef, x)
		if i := sameBits(y, yRef); i >= 0 {
			t.Errorf("addTo of %d: entry %d: %v, reference %v", n, i, y[i], yRef[i])
		}
	}
}

// lenetSetup is a compiled LeNet evaluator's inputs for the A/B tests.
func lenetSetup(tb testing.TB, batch int) (nn.Model, *datasets.Dataset, []float64, []int) {
	return convNetSetup(tb, nn.LeNet(nn.PriorConfig{Precision: 1}), batch)
}

// convNetSetup is lenetSetup for another CNN of 28x28 images.
func convNetSetup(tb testing.TB, net nn.ConvNet, batch int) (nn.Model, *datasets.Dataset, []float64, []int) {
	model, err := net.Model("cnn")
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data, err := datasets.SyntheticImages(4*batch, 784, 10, rng)
	if err != nil {
		tb.Fatal(err)
	}
	theta := make([]float64, model.NumParams())
	model.Layout.Init(theta, rng)
	return model, data, theta, rng.Perm(4 * batch)[:batch]
}

// TestLeNetKernelsBitExact checks a compiled LeNet gradient (float32 and
// float64) is the same bit for bit with the fast kernels as with the
// reference ones, so that runs resume bit-exactly across the change:
// every fast kernel but the kernel-row factorisation (kernelRows), which
// sums in another order (TestKernelRowsMatchReference).
func TestLeNetKernelsBitExact(t *testing.T) {
	model, data, theta, idx := lenetSetup(t, 8)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		ev, err := New(model, 8, dt)
		if err != nil {
			t.Fatal(err)
		}
		eval := func(ref kernelSet) (float64, []float64) {
			referenceKernels = ref
			defer func() { referenceKernels = 0 }()
			grad := make([]float64, len(theta))
			u, err := ev.Eval(theta, data, idx, 100, grad, nil)
			if err != nil {
				t.Fatal(err)
			}
			return u, grad
		}
		u0, g0 := eval(allFast)
		u1, g1 := eval(fastRows) // every faster kernel but the kernel-row factorisation, which is not bit-exact
		if u0 != u1 {
			t.Errorf("%s: potential %v with the fast kernels, %v with the reference", dt, u1, u0)
		}
		if i := sameBits(g1, g0); i >= 0 {
			t.Errorf("%s: gradient %d: %v with the fast kernels, %v with the reference", dt, i, g1[i], g0[i])
		}
	}
}

// TestMaxPoolF32MatchesReference checks the branch-free float32 2x2 max
// pooling, forward (maxima and argmaxes; on its input and on a ReLU's
// input) and backward, and the fused pooling and ReLU adjoint, against the reference kernels bit for bit, on values with ties, zeros of both signs,
// NaNs, infinities and the starting lowest value.
func TestMaxPoolF32MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		-math.MaxFloat32, 1, 1, -1}
	// planes of 12 windows, and of 49 (three blocks of 16 for the vector
	// scatter and one left over)
	for _, mp := range []*maxPool{
		{b: 1, c: 3, h: 6, w: 8, oh: 3, ow: 4, kh: 2, kw: 2, strideH: 2, strideW: 2},
		{b: 1, c: 2, h: 14, w: 14, oh: 7, ow: 7, kh: 2, kw: 2, strideH: 2, strideW: 2},
	} {
		testMaxPoolF32(t, rng, mp, special)
	}
}

func testMaxPoolF32(t *testing.T, rng *rand.Rand, mp *maxPool, special []float32) {
	for trial := 0; trial < 50; trial++ {
		in := make([]float32, mp.c*mp.h*mp.w)
		for i := range in {
			if rng.IntN(3) == 0 {
				in[i] = special[rng.IntN(len(special))]
			} else {
				in[i] = float32(rng.NormFloat64())
			}
		}
		if trial%2 == 0 { // a window of NaNs in the second plane: no argmax (-1), nothing to scatter
			w0 := (trial / 2) % (mp.oh * mp.ow)
			at := mp.h*mp.w + 2*(w0/mp.ow)*mp.w + 2*(w0%mp.ow)
			in[at], in[at+1], in[at+mp.w], in[at+mp.w+1] = float32(math.NaN()), float32(math.NaN()), float32(math.NaN()), float32(math.NaN())
		}
		n := mp.c * mp.oh * mp.ow
		out, outRef := make([]float32, n), make([]float32, n)
		arg, argRef := make([]int32, n), make([]int32, n)
		maxPool2x2(mp, in, out, arg, mp.c, -math.MaxFloat32)
		referenceKernels = allFast
		maxPool2x2(mp, in, outRef, argRef, mp.c, -math.MaxFloat32)
		referenceKernels = 0
		for i := range out {
			if math.Float32bits(out[i]) != math.Float32bits(outRef[i]) || arg[i] != argRef[i] {
				t.Fatalf("trial %d window %d: max %v at %d, reference %v at %d", trial, i, out[i], arg[i], outRef[i], argRef[i])
			}
		}
		// Pooling the ReLU's output straight from its input.
		post := make([]float32, len(in))
		for i, v := range in {
			post[i] = max(v, 0)
		}
		maxPool2x2F32(mp, in, out, arg, mp.c, -math.MaxFloat32, true)
		referenceKernels = allFast
		maxPool2x2(mp, post, outRef, argRef, mp.c, -math.MaxFloat32)
		referenceKernels = 0
		for i := range out {
			if math.Float32bits(out[i]) != math.Float32bits(outRef[i]) || arg[i] != argRef[i] {
				t.Fatalf("trial %d window %d: max of the ReLU %v at %d, reference %v at %d", trial, i, out[i], arg[i], outRef[i], argRef[i])
			}
		}
		g := randomWithZeros[float32](n, rng)
		din, dinRef := randomWithZeros[float32](len(in), rng), randomWithZeros[float32](len(in), rng)
		maxPool2x2Backward(mp, g, din, arg, mp.c)
		referenceKernels = allFast
		maxPool2x2Backward(mp, g, dinRef, arg, mp.c)
		referenceKernels = 0
		if i := sameBits(din, dinRef); i >= 0 {
			t.Fatalf("trial %d: input adjoint %d: %v, reference %v", trial, i, din[i], dinRef[i])
		}
		// The fused pooling and ReLU adjoint, with the ReLU's input z
		// (signed zeros, NaNs, negatives), against the two passes.
		z := randomWithZeros[float32](len(in), rng)
		for i := range z {
			if rng.IntN(8) == 0 {
				z[i] = special[rng.IntN(len(special))]
			}
		}
		maxPoolBackward(mp, g, dinRef, arg, mp.c, false)
		reluMask(z, dinRef)
		for _, ref := range []kernelSet{0, fastPoolScatter, fastPoolScatterVector} { // planes cleared (vector scatter, Go loop), or window by window
			din = randomWithZeros[float32](len(in), rng) // stale values to overwrite
			referenceKernels = ref
			maxPool2x2ReluBackwardF32(mp, g, din, arg, mp.c, z)
			referenceKernels = 0
			if i := sameBits(din, dinRef); i >= 0 {
				t.Fatalf("trial %d (reference kernels %b): fused pooling and ReLU adjoint %d: %v, two passes %v", trial, ref, i, din[i], dinRef[i])
			}
		}
	}
}

// TestBiasKernelsMatchReference checks the convolution's bias sums (four
// rows at a time) and the bias added in the ReLU-pooling's pass (integer
// keys) against the reference kernels bit for bit, on shapes with a row
// count not a multiple of four and odd widths, on values with ties, zeros
// of both signs, NaNs of both signs, infinities and windows of NaNs.
func TestBiasKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), -float32(math.NaN()),
		float32(math.Inf(1)), float32(math.Inf(-1)), -math.MaxFloat32, math.MaxFloat32, 1, 1, -1,
		math.Float32frombits(1), math.Float32frombits(0x80000001)}
	value := func() float32 {
		if rng.IntN(3) == 0 {
			return special[rng.IntN(len(special))]
		}
		return float32(rng.NormFloat64())
	}
	for _, tc := range []struct{ rows, n int }{{64, 196}, {32, 784}, {7, 13}, {3, 1}, {5, 49}, {1, 4}} {
		g := randomWithZeros[float32](tc.rows*tc.n, rng)
		for _, acc := range []bool{false, true} {
			db, dbRef := randomWithZeros[float32](tc.rows, rng), make([]float32, tc.rows)
			copy(dbRef, db)
			biasSums(g, tc.n, db, acc)
			biasSumsRef(g, tc.n, dbRef, acc)
			if i := sameBits(db, dbRef); i >= 0 {
				t.Errorf("bias sums %dx%d acc %v: row %d: %v, reference %v", tc.rows, tc.n, acc, i, db[i], dbRef[i])
			}
		}
	}
	for _, mp := range []*maxPool{
		{b: 1, c: 32, h: 28, w: 28, oh: 14, ow: 14, kh: 2, kw: 2, strideH: 2, strideW: 2},
		{b: 1, c: 3, h: 6, w: 10, oh: 3, ow: 5, kh: 2, kw: 2, strideH: 2, strideW: 2},
		{b: 1, c: 5, h: 2, w: 2, oh: 1, ow: 1, kh: 2, kw: 2, strideH: 2, strideW: 2},
	} {
		for trial := 0; trial < 20; trial++ {
			z := make([]float32, mp.c*mp.h*mp.w)
			for i := range z {
				z[i] = value()
			}
			if trial == 0 { // a window of four NaNs
				for _, i := range []int{0, 1, mp.w, mp.w + 1} {
					z[i] = float32(math.NaN())
				}
			}
			bias := make([]float32, mp.c)
			for i := range bias {
				bias[i] = value()
			}
			if trial%4 == 1 {
				clear(bias)
			}
			n := mp.c * mp.oh * mp.ow
			out, outRef := make([]float32, n), make([]float32, n)
			arg, argRef := make([]int32, n), make([]int32, n)
			zRef := append([]float32(nil), z...)
			biasReluPool2x2F32(mp, z, bias, out, arg)
			hw := mp.h * mp.w
			for p := range mp.c {
				for i := range zRef[p*hw : (p+1)*hw] {
					zRef[p*hw+i] += bias[p]
				}
			}
			maxPool2x2F32(mp, zRef, outRef, argRef, mp.c, -math.MaxFloat32, true)
			if i := sameBits(z, zRef); i >= 0 {
				t.Fatalf("%dx%dx%d trial %d: pre-activation %d: %v, reference %v", mp.c, mp.h, mp.w, trial, i, z[i], zRef[i])
			}
			for i := range out {
				if math.Float32bits(out[i]) != math.Float32bits(outRef[i]) || arg[i] != argRef[i] {
					t.Fatalf("%dx%dx%d trial %d window %d: max %v at %d, reference %v at %d",
						mp.c, mp.h, mp.w, trial, i, out[i], arg[i], outRef[i], argRef[i])
				}
			}
		}
	}
}

// rowShapes are the kernel-row factorisation's test shapes: LeNet's second
// convolution, a 3x3 one of CNN3's kind, odd sizes, a convolution "same"
// in width and valid in height, and one with a single output row.
var rowShapes = []struct {
	ic im2col
	o  int
}{
	{im2col{b: 3, c: 32, h: 14, w: 14, oh: 14, ow: 14, kh: 5, kw: 5, padH: 2, padW: 2, strideH: 1, strideW: 1, dilH: 1, dilW: 1}, 64},
	{im2col{b: 2, c: 32, h: 7, w: 7, oh: 7, ow: 7, kh: 3, kw: 3, padH: 1, padW: 1, strideH: 1, strideW: 1, dilH: 1, dilW: 1}, 16},
	{im2col{b: 3, c: 25, h: 9, w: 11, oh: 9, ow: 11, kh: 5, kw: 5, padH: 2, padW: 2, strideH: 1, strideW: 1, dilH: 1, dilW: 1}, 7},
	{im2col{b: 2, c: 22, h: 5, w: 5, oh: 5, ow: 5, kh: 3, kw: 3, padH: 1, padW: 1, strideH: 1, strideW: 1, dilH: 1, dilW: 1}, 3},
	{im2col{b: 2, c: 32, h: 8, w: 6, oh: 6, ow: 6, kh: 3, kw: 3, padH: 0, padW: 1, strideH: 1, strideW: 1, dilH: 1, dilW: 1}, 5},
	{im2col{b: 1, c: 64, h: 1, w: 4, oh: 1, ow: 4, kh: 3, kw: 3, padH: 1, padW: 1, strideH: 1, strideW: 1, dilH: 1, dilW: 1}, 2},
}

// TestKernelRowsMatchReference checks a convolution on its kernel-row
// factorisation (forward, the filter's adjoint written and added, the
// input's adjoint) against the full columns' reference within the
// rounding error bound of two summation orders: each output is a sum of n
// products, and any order of a recursive sum is within n*u*S of the exact
// sum (S the sum of the products' absolute values, u the unit roundoff,
// to first order; FMA only tightens it), so two orders differ by at most
// 2*n*u*S. S comes from the reference kernel run on absolute values in
// float64. A dropped kernel row or a misplaced shift is off by a whole
// term, far outside it.
func TestKernelRowsMatchReference(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testKernelRows[float32](t, 0x1p-24) })
	t.Run("float64", func(t *testing.T) { testKernelRows[float64](t, 0x1p-53) })
}

func testKernelRows[T float](t *testing.T, u float64) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sh := range rowShapes {
		ic, o := sh.ic, sh.o
		name := fmt.Sprintf("c%d %dx%d k%dx%d pad %d,%d o%d", ic.c, ic.h, ic.w, ic.kh, ic.kw, ic.padH, ic.padW, o)
		k, ohw, img := ic.c*ic.kh*ic.kw, ic.oh*ic.ow, ic.c*ic.h*ic.w
		cv := &conv[T]{ic: ic, o: o, gemm: gemmFor[T](), col: make([]T, k*ohw), dcol: make([]T, k*ohw), rows: newKernelRows[T](ic, o)}
		if cv.rows == nil {
			t.Fatalf("%s: no kernel-row factorisation", name)
		}
		x, w, g := randomWithZeros[T](ic.b*img, rng), randomWithZeros[T](o*k, rng), randomWithZeros[T](ic.b*o*ohw, rng)
		dw0 := randomWithZeros[T](o*k, rng)
		type result struct{ out, dw, dwAcc, dx []T }
		run := func(ref kernelSet, x, w, g, dw0 []T) result {
			referenceKernels = ref
			defer func() { referenceKernels = 0 }()
			r := result{out: make([]T, ic.b*o*ohw), dw: make([]T, o*k), dwAcc: append([]T(nil), dw0...), dx: make([]T, ic.b*img)}
			cv.forward(x, w, r.out)
			cv.backward(x, w, g, r.dw, r.dx, false, false)
			cv.backward(x, w, g, r.dwAcc, nil, true, false)
			return r
		}
		got, want := run(0, x, w, g, dw0), run(fastRows, x, w, g, dw0)
		// The sums of absolute products, in float64 on the reference path.
		abs := func(s []T) []float64 {
			a := make([]float64, len(s))
			for i, v := range s {
				a[i] = math.Abs(float64(v))
			}
			return a
		}
		cv64 := &conv[float64]{ic: ic, o: o, gemm: gemmFor[float64](), col: make([]float64, k*ohw), dcol: make([]float64, k*ohw)}
		S := struct{ out, dw, dwAcc, dx []float64 }{make([]float64, ic.b*o*ohw), make([]float64, o*k), abs(dw0), make([]float64, ic.b*img)}
		cv64.forward(abs(x), abs(w), S.out)
		cv64.backward(abs(x), abs(w), abs(g), S.dw, S.dx, false, false)
		cv64.backward(abs(x), abs(w), abs(g), S.dwAcc, nil, true, false)
		for _, c := range []struct {
			what      string
			got, want []T
			s         []float64
			n         int
		}{
			{"output", got.out, want.out, S.out, k},
			{"filter adjoint", got.dw, want.dw, S.dw, ic.b * ohw},
			{"filter adjoint added", got.dwAcc, want.dwAcc, S.dwAcc, ic.b*ohw + 1},
			{"input adjoint", got.dx, want.dx, S.dx, o * ic.kh * ic.kw},
		} {
			worst := 0.0
			for i := range c.got {
				d := math.Abs(float64(c.got[i]) - float64(c.want[i]))
				bound := 2*float64(c.n)*u*c.s[i] + 1e-300
				if d > bound {
					t.Fatalf("%s: %s %d: %v, reference %v: difference %g above the bound %g", name, c.what, i, c.got[i], c.want[i], d, bound)
				}
				worst = max(worst, d/bound)
			}
			t.Logf("%s: %s: largest difference %.3f of the bound", name, c.what, worst)
		}
	}
}
