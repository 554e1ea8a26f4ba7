package nullspace

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// rowConstant returns n images of c channels whose every row is constant
// (pixel (r, col) of channel ch is f_ch(r)), channel ch being ratio[ch]
// times channel 0.
func rowConstant(n, h, w int, ratio []float64, rng *rand.Rand) *datasets.Dataset {
	c := len(ratio)
	x := make([]float32, n*c*h*w)
	for e := 0; e < n; e++ {
		for r := 0; r < h; r++ {
			v := rng.NormFloat64()
			for ch := 0; ch < c; ch++ {
				for col := 0; col < w; col++ {
					x[((e*c+ch)*h+r)*w+col] = float32(ratio[ch] * v)
				}
			}
		}
	}
	return &datasets.Dataset{N: n, D: c * h * w, X: x}
}

// randomImages returns n images of c channels of independent normal pixels
// times ratio[ch] of channel 0's (channels proportional).
func randomImages(n, h, w int, ratio []float64, rng *rand.Rand) *datasets.Dataset {
	c := len(ratio)
	x := make([]float32, n*c*h*w)
	for e := 0; e < n; e++ {
		for i := 0; i < h*w; i++ {
			v := rng.NormFloat64()
			for ch := 0; ch < c; ch++ {
				x[(e*c+ch)*h*w+i] = float32(ratio[ch] * v)
			}
		}
	}
	return &datasets.Dataset{N: n, D: c * h * w, X: x}
}

// TestFitPatchesFindsTheDirectionsThePatchesLeaveOut fits patch priors to
// images whose patches span a known subspace and checks the span's
// dimension, that every patch of every image is orthogonal to the
// directions left out, that those are orthonormal, and that they are
// orthogonal to the subspace's own basis (written down independently of
// Extract).
func TestFitPatchesFindsTheDirectionsThePatchesLeaveOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		name string
		g    Patches
		data *datasets.Dataset
		k    int
		// basis returns the i-th vector of the patches' span (i < k)
		basis func(i int) []float64
	}{
		{
			// rows constant, no padding along rows' columns: a patch is
			// 5 values, each repeated along its row
			name: "rows constant, 5x5, padded rows only",
			g:    Patches{Channels: 1, Height: 11, Width: 9, KH: 5, KW: 5, PadH: 2, StrideH: 1, StrideW: 1},
			data: rowConstant(60, 11, 9, []float64{1}, rng),
			k:    5,
			basis: func(i int) []float64 {
				v := make([]float64, 25)
				for c := 0; c < 5; c++ {
					v[i*5+c] = 1
				}
				return v
			},
		},
		{
			// the second channel twice the first: patches (u, 2u)
			name: "channels proportional, 3x3, padded, stride 2",
			g:    Patches{Channels: 2, Height: 8, Width: 7, KH: 3, KW: 3, PadH: 1, PadW: 1, StrideH: 2, StrideW: 2},
			data: randomImages(40, 8, 7, []float64{1, 2}, rng),
			k:    9,
			basis: func(i int) []float64 {
				v := make([]float64, 18)
				v[i], v[9+i] = 1, 2
				return v
			},
		},
		{
			name: "rows constant and channels proportional, 3x2",
			g:    Patches{Channels: 3, Height: 6, Width: 6, KH: 3, KW: 2, PadH: 1, StrideH: 1, StrideW: 1},
			data: rowConstant(50, 6, 6, []float64{1, -1, 0.5}, rng),
			k:    3,
			basis: func(i int) []float64 {
				v := make([]float64, 18)
				for ch, r := range []float64{1, -1, 0.5} {
					v[ch*6+i*2], v[ch*6+i*2+1] = r, r
				}
				return v
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FitPatches(tc.data, tc.g, 1-1e-9, 5)
			if err != nil {
				t.Fatal(err)
			}
			d := tc.g.Size()
			if p.D != d || p.K != tc.k || p.Patch == nil || *p.Patch != tc.g {
				t.Fatalf("prior of D %d, span %d, patches %+v; want D %d, span %d, %+v", p.D, p.K, p.Patch, d, tc.k, tc.g)
			}
			left := d - tc.k
			dot := func(a, b []float64) float64 {
				s := 0.0
				for i := range a {
					s += a[i] * b[i]
				}
				return s
			}
			dir := func(j int) []float64 { return p.V[j*d : (j+1)*d] }
			for i := 0; i < tc.k; i++ {
				b := tc.basis(i)
				for j := 0; j < left; j++ {
					if v := dot(b, dir(j)); math.Abs(v) > 1e-9*math.Sqrt(dot(b, b)) {
						t.Fatalf("basis vector %d has %g along direction %d left out", i, v, j)
					}
				}
			}
			oh, ow := tc.g.Positions()
			patches := make([]float64, oh*ow*d)
			for e := 0; e < tc.data.N; e++ {
				if err := tc.g.Extract(tc.data.Row(e), patches); err != nil {
					t.Fatal(err)
				}
				for q := 0; q < oh*ow; q++ {
					x := patches[q*d : (q+1)*d]
					for j := 0; j < left; j++ {
						if v := dot(x, dir(j)); math.Abs(v) > 1e-6*(1+math.Sqrt(dot(x, x))) {
							t.Fatalf("image %d patch %d has %g along direction %d left out", e, q, v, j)
						}
					}
				}
			}
			for a := 0; a < left; a++ {
				for b := 0; b < left; b++ {
					want := 0.0
					if a == b {
						want = 1
					}
					if v := dot(dir(a), dir(b)); math.Abs(v-want) > 1e-9 {
						t.Fatalf("directions %d and %d: dot %g, want %g", a, b, v, want)
					}
				}
			}
		})
	}
}

// The map A = I + (s-1) V V^T is symmetric, scales the directions left out
// by s and keeps the span; FoldKernel is K' A row by row.
func TestMatrixAndFoldKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	g := Patches{Channels: 1, Height: 10, Width: 10, KH: 3, KW: 3, PadH: 1, StrideH: 1, StrideW: 1}
	const scale = 7.0
	p, err := FitPatches(rowConstant(30, 10, 10, []float64{1}, rng), g, 0.999, scale)
	if err != nil {
		t.Fatal(err)
	}
	d := p.D
	if p.K != 3 {
		t.Fatalf("span of %d of %d patch values, want 3", p.K, d)
	}
	a := p.Matrix()
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if math.Abs(a[i*d+j]-a[j*d+i]) > 1e-12 {
				t.Fatalf("A[%d][%d] %g, A[%d][%d] %g", i, j, a[i*d+j], j, i, a[j*d+i])
			}
		}
	}
	mul := func(v []float64) []float64 { // A v
		out := make([]float64, d)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				out[i] += a[i*d+j] * v[j]
			}
		}
		return out
	}
	for j := 0; j < d-p.K; j++ {
		v := p.V[j*d : (j+1)*d]
		for i, av := range mul(v) {
			if math.Abs(av-scale*v[i]) > 1e-9 {
				t.Fatalf("A v_%d [%d] = %g, want %g", j, i, av, scale*v[i])
			}
		}
	}
	const out = 4
	k := make([]float64, out*d)
	for i := range k {
		k[i] = rng.NormFloat64()
	}
	folded := append([]float64(nil), k...)
	if err := p.Fold(folded, []int{out, 1, 3, 3}); err != nil {
		t.Fatal(err)
	}
	for o := 0; o < out; o++ {
		want := mul(k[o*d : (o+1)*d])
		for i := range want {
			if got := folded[o*d+i]; math.Abs(got-want[i]) > 1e-9*(1+math.Abs(want[i])) {
				t.Fatalf("folded kernel [%d][%d] %g, K' A %g", o, i, got, want[i])
			}
		}
	}
}

func TestPatchPriorRefusesBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	g := Patches{Channels: 1, Height: 6, Width: 6, KH: 3, KW: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}
	data := randomImages(10, 6, 6, []float64{1}, rng)
	for _, tc := range []struct {
		name string
		data *datasets.Dataset
		g    Patches
		want string
	}{
		{"images of another size", randomImages(3, 5, 6, []float64{1}, rng), g, "images of 30 values, the convolution reads 1x6x6 = 36"},
		{"a window wider than the image", data, Patches{Channels: 1, Height: 6, Width: 6, KH: 9, KW: 3, StrideH: 1, StrideW: 1}, "the window must fit"},
		{"stride 0", data, Patches{Channels: 1, Height: 6, Width: 6, KH: 3, KW: 3}, "the window must fit"},
		{"no images", &datasets.Dataset{}, g, "no training images"},
	} {
		if _, err := FitPatches(tc.data, tc.g, 0.99, 3); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	p, err := FitPatches(data, g, 0.99, 3)
	if err != nil {
		t.Fatal(err)
	}
	dense, err := Fit(data, 0.99, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a patch prior's Inputs", p.Inputs(data), "maps its kernel"},
		{"a patch prior's FoldWeights", p.FoldWeights(make([]float64, 9*4), 4), "not on whole inputs"},
		{"a dense prior's FoldKernel", dense.FoldKernel(make([]float64, 36*4), 4), "not on a convolution's patches"},
		{"a kernel of the wrong size", p.FoldKernel(make([]float64, 10), 1), "not 1 channels of 9 patch values"},
		{"Fold of a kernel of another patch", p.Fold(make([]float64, 2*2*9), []int{2, 2, 3, 3}), "the prior's patches have 9 values"},
		{"Extract at stride 0", Patches{Channels: 1, Height: 6, Width: 6, KH: 3, KW: 3}.Extract(make([]float32, 36), make([]float64, 36*9)), "the window must fit"},
		{"Extract of a short image", g.Extract(make([]float32, 30), make([]float64, 36*9)), "image of 30 values"},
		{"Extract into too little room", g.Extract(make([]float32, 36), make([]float64, 35*9)), "room for 315 patch values, 36 patches of 9 need 324"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, tc.err, tc.want)
		}
	}
}

// A patch prior's digest names its geometry too: the same directions
// recorded for another stride have another digest.
func TestPatchDigestNamesTheGeometry(t *testing.T) {
	data := rowConstant(20, 8, 8, []float64{1}, rand.New(rand.NewPCG(17, 18)))
	g := Patches{Channels: 1, Height: 8, Width: 8, KH: 3, KW: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}
	a, _ := FitPatches(data, g, 0.999, 3)
	b, _ := FitPatches(data, g, 0.999, 3)
	if a.Digest() != b.Digest() {
		t.Error("two fits of the same images and geometry differ")
	}
	c := *a
	g2 := g
	g2.StrideW = 2
	c.Patch = &g2
	if a.Digest() == c.Digest() {
		t.Error("strides 1 and 2 share a digest")
	}
}

// The patches' second moment is summed in groups of a fixed size: the
// prior is the same, to the bit, on one core or several.
func TestFitPatchesIsTheSameOnAnyCores(t *testing.T) {
	data := randomImages(2500, 8, 8, []float64{1}, rand.New(rand.NewPCG(19, 20))) // three groups
	g := Patches{Channels: 1, Height: 8, Width: 8, KH: 3, KW: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}
	digest := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		p, err := FitPatches(data, g, 0.5, 3)
		if err != nil {
			t.Fatal(err)
		}
		if p.K == p.D {
			t.Fatal("no direction left out")
		}
		return p.Digest()
	}
	if a, b := digest(1), digest(3); a != b {
		t.Errorf("one core's prior %s, three cores' %s", a, b)
	}
}
