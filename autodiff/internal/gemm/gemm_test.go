package gemm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"
)

// exactFMA32 is a*b + c rounded once to float32, computed exactly.
func exactFMA32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	f, _ := x.Float32()
	if f == 0 && math.Signbit(float64(f)) != math.Signbit(float64(float32(float64(a)*float64(b)+float64(c)))) {
		// big.Float drops the sign rule of IEEE sums of opposite zeros.
		return float32(float64(a)*float64(b) + float64(c))
	}
	return f
}

func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		t.Helper()
		if got, want := fma32(a, b, c), exactFMA32(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#x), want %g (%#x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for i := 0; i < 200000; i++ {
		a := float32(rng.NormFloat64())
		b := float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20)))
		// c near -a*b makes cancellation; c one rounding of a*b apart makes
		// the double-rounding cases a naive float64 sum gets wrong.
		var c float32
		switch i % 3 {
		case 0:
			c = float32(rng.NormFloat64())
		case 1:
			c = -float32(float64(a) * float64(b))
		default:
			h := math.Float32frombits(math.Float32bits(float32(float64(a)*float64(b))) & 0xff800000)
			c = h * float32(rng.IntN(5)-2) / 4
		}
		check(a, b, c)
	}
	// A constructed double-rounding case: a*b = 1 + 2^-24 + 2^-60 exactly,
	// c = 0: float64 rounds to the tie 1 + 2^-24, float32 then to 1; the
	// single rounding gives 1 + 2^-23.
	a := float32(1 + math.Exp2(-12))
	b := float32(1 + math.Exp2(-12))
	check(a, b, float32(-math.Exp2(-24)))
	check(a, b, 0)
}

type shape struct {
	m, n, k        int
	transA, transB bool
	alpha, beta    float64
}

func shapes() []shape {
	var s []shape
	// One product of the MLP's size (two K blocks and an edge panel), then
	// small ones in every combination.
	s = append(s, shape{m: 128, n: 400, k: 600, alpha: 1}, shape{m: 136, n: 40, k: 128, transA: true, alpha: 1, beta: 1})
	dims := [][3]int{{1, 1, 1}, {8, 32, 5}, {7, 31, 300}, {17, 10, 40}, {24, 66, 70}, {13, 45, 513}, {6, 16, 256}, {3, 70, 1}}
	for _, d := range dims {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, ab := range [][2]float64{{1, 0}, {1, 1}, {-0.5, 2}, {0.75, 0}} {
				s = append(s, shape{d[0], d[1], d[2], tr[0], tr[1], ab[0], ab[1]})
			}
		}
	}
	return s
}

func operands[T float](rng *rand.Rand, sh shape) (a []T, lda int, b []T, ldb int, c []T, ldc int) {
	ar, ac := sh.m, sh.k
	if sh.transA {
		ar, ac = sh.k, sh.m
	}
	br, bc := sh.k, sh.n
	if sh.transB {
		br, bc = sh.n, sh.k
	}
	lda, ldb, ldc = ac+rng.IntN(3), bc+rng.IntN(3), sh.n+rng.IntN(3)
	fill := func(n int) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = T(rng.NormFloat64())
		}
		return x
	}
	return fill(ar * lda), lda, fill(br * ldb), ldb, fill(sh.m * ldc), ldc
}

func run[T float](kn kernel[T], sh shape, a []T, lda int, b []T, ldb int, c []T, ldc int) []T {
	out := append([]T(nil), c...)
	gemm(kn, sh.transA, sh.transB, sh.m, sh.n, sh.k, T(sh.alpha), a, lda, b, ldb, T(sh.beta), out, ldc)
	return out
}

func sameBits[T float](t *testing.T, what string, got, want []T) {
	t.Helper()
	for i := range got {
		if float64(got[i]) != float64(want[i]) || math.Signbit(float64(got[i])) != math.Signbit(float64(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func agree[T float](t *testing.T, kernels []kernel[T]) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range shapes() {
		a, lda, b, ldb, c, ldc := operands[T](rng, sh)
		want := run(goKernel[T](), sh, a, lda, b, ldb, c, ldc)
		// The product itself, to float64 accuracy.
		for i := 0; i < sh.m; i++ {
			for j := 0; j < sh.n; j++ {
				s := 0.0
				for l := 0; l < sh.k; l++ {
					var ai, bj T
					if sh.transA {
						ai = a[l*lda+i]
					} else {
						ai = a[i*lda+l]
					}
					if sh.transB {
						bj = b[j*ldb+l]
					} else {
						bj = b[l*ldb+j]
					}
					s += float64(ai) * float64(bj)
				}
				s = sh.alpha*s + sh.beta*float64(c[i*ldc+j])
				if d := math.Abs(float64(want[i*ldc+j]) - s); d > 1e-4*(1+math.Abs(s))*math.Sqrt(float64(sh.k+1)) {
					t.Fatalf("%+v: C[%d,%d] = %v, the product is %v", sh, i, j, want[i*ldc+j], s)
				}
			}
		}
		for _, kn := range kernels {
			for _, w := range []int{1, 2, 3} {
				SetWorkers(w)
				sameBits(t, kn.name, run(kn, sh, a, lda, b, ldb, c, ldc), want)
			}
		}
	}
	SetWorkers(2)
}

// TestKernelsAgree checks every kernel this CPU runs against the portable
// one bit for bit, on edge tiles, every transpose, several K blocks, alpha
// and beta, and one to three goroutines.
func TestKernelsAgree(t *testing.T) {
	defer SetWorkers(Workers())
	var ks32 []kernel[float32]
	var ks64 []kernel[float64]
	for _, name := range Kernels() {
		if s, d, ok := kernelsFor(name); ok {
			ks32, ks64 = append(ks32, s), append(ks64, d)
		} else {
			t.Logf("this CPU does not run the %s kernel: not checked", name)
		}
	}
	t.Run("float32", func(t *testing.T) { agree(t, ks32) })
	t.Run("float64", func(t *testing.T) { agree(t, ks64) })
}

// TestNoAllocs: a product, split over goroutines or not, allocates nothing
// once its pools are warm (a sampler step must not allocate).
func TestNoAllocs(t *testing.T) {
	defer SetWorkers(Workers())
	rng := rand.New(rand.NewPCG(5, 6))
	sh := shape{m: 128, n: 100, k: 300, alpha: 1}
	a, lda, b, ldb, c, ldc := operands[float32](rng, sh)
	for _, w := range []int{1, 2} {
		SetWorkers(w)
		if n := testing.AllocsPerRun(20, func() { Sgemm(false, false, sh.m, sh.n, sh.k, 1, a, lda, b, ldb, 0, c, ldc) }); n != 0 {
			t.Errorf("%d goroutines: %v allocations per product", w, n)
		}
		// a collection between products (a sync.Pool would then be empty)
		if n := testing.AllocsPerRun(20, func() {
			runtime.GC()
			Sgemm(false, false, sh.m, sh.n, sh.k, 1, a, lda, b, ldb, 0, c, ldc)
		}); n != 0 {
			t.Errorf("%d goroutines, a collection between products: %v allocations per product", w, n)
		}
	}
}
