package nullspace_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/nullspace"
)

// TestExtractReadsTheConvolutionsPatches checks Extract's order of a
// patch's values against Gorgonia's own convolution: the output of channel
// o at position q is the dot product of kernel row o (the [out, C, KH, KW]
// kernel's values after o) with patch q.
func TestExtractReadsTheConvolutionsPatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, g := range []nullspace.Patches{
		{Channels: 1, Height: 9, Width: 8, KH: 5, KW: 5, PadH: 2, PadW: 2, StrideH: 1, StrideW: 1},
		{Channels: 2, Height: 7, Width: 9, KH: 3, KW: 3, PadH: 1, PadW: 1, StrideH: 2, StrideW: 2},
		{Channels: 3, Height: 6, Width: 7, KH: 3, KW: 2, PadH: 1, PadW: 0, StrideH: 1, StrideW: 2},
	} {
		t.Run(fmt.Sprintf("%+v", g), func(t *testing.T) {
			const out = 3
			d := g.Size()
			img := make([]float64, g.Channels*g.Height*g.Width)
			for i := range img {
				img[i] = rng.NormFloat64()
			}
			kern := make([]float64, out*d)
			for i := range kern {
				kern[i] = rng.NormFloat64()
			}
			eg := G.NewGraph()
			x := G.NewTensor(eg, tensor.Float64, 4, G.WithShape(1, g.Channels, g.Height, g.Width), G.WithValue(tensor.New(tensor.WithShape(1, g.Channels, g.Height, g.Width), tensor.WithBacking(img))))
			w := G.NewTensor(eg, tensor.Float64, 4, G.WithShape(out, g.Channels, g.KH, g.KW), G.WithValue(tensor.New(tensor.WithShape(out, g.Channels, g.KH, g.KW), tensor.WithBacking(kern))))
			z, err := G.Conv2d(x, w, tensor.Shape{g.KH, g.KW}, []int{g.PadH, g.PadW}, []int{g.StrideH, g.StrideW}, []int{1, 1})
			if err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(eg)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			got := z.Value().Data().([]float64) // [1, out, oh, ow]
			oh, ow := g.Positions()
			if len(got) != out*oh*ow {
				t.Fatalf("convolution of %d values, Positions say %d x %d x %d", len(got), out, oh, ow)
			}
			img32 := make([]float32, len(img))
			for i, v := range img {
				img32[i] = float32(v)
			}
			patches := make([]float64, oh*ow*d)
			if err := g.Extract(img32, patches); err != nil {
				t.Fatal(err)
			}
			for o := 0; o < out; o++ {
				for q := 0; q < oh*ow; q++ {
					want := 0.0
					for i := 0; i < d; i++ {
						want += kern[o*d+i] * patches[q*d+i]
					}
					if v := got[o*oh*ow+q]; math.Abs(v-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("channel %d position %d: convolution %g, kernel row . patch %g", o, q, v, want)
					}
				}
			}
		})
	}
}

// smoothImages returns n images of h x w whose pixels vary smoothly (a few
// low-frequency waves), so that their 5x5 patches leave directions out.
func smoothImages(n, h, w, classes int, rng *rand.Rand) *datasets.Dataset {
	data := &datasets.Dataset{N: n, D: h * w, Classes: classes, X: make([]float32, n*h*w), Labels: make([]int, n)}
	for e := 0; e < n; e++ {
		a, b, c := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		fr, fc := 0.2+0.2*rng.Float64(), 0.2+0.2*rng.Float64()
		for r := 0; r < h; r++ {
			for col := 0; col < w; col++ {
				data.X[e*h*w+r*w+col] = float32(a*math.Sin(fr*float64(r)) + b*math.Cos(fc*float64(col)) + c)
			}
		}
		data.Labels[e] = e % classes
	}
	return data
}

// TestFoldKernelIsTheMappedConvNet checks the reparametrisation end to end
// on a small ConvNet: for random weights theta' (K' in the first
// convolution), the network with FirstMap A on raw images, and the plain
// network with the folded kernel K = K' A, give the same logits (on
// training-like and on noise images, on every engine and dtype), and the
// gradient with respect to K' is the plain network's with respect to K
// times A. The mapped graph compiles (no fall-back to Gorgonia's VM), and
// the map matters: the plain network with K' unfolded disagrees on noise.
func TestFoldKernelIsTheMappedConvNet(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const h, w, classes = 12, 12, 3
	net := nn.ConvNet{Height: h, Width: w, Channels: 1, Conv: []int{4, 6}, Kernel: 5, Dense: []int{8}, Classes: classes,
		Prior: nn.PriorConfig{Precision: 1, FanIn: true}}
	train := smoothImages(200, h, w, classes, rng)
	g := nullspace.Patches{Channels: 1, Height: h, Width: w, KH: 5, KW: 5, PadH: 2, PadW: 2, StrideH: 1, StrideW: 1}
	prior, err := nullspace.FitPatches(train, g, 0.999, 10)
	if err != nil {
		t.Fatal(err)
	}
	if prior.K >= prior.D {
		t.Fatalf("the smooth images' patches span all %d directions", prior.D)
	}
	plain, err := net.Model("small")
	if err != nil {
		t.Fatal(err)
	}
	mappedNet := net
	mappedNet.FirstMap = prior.Matrix()
	mapped, err := mappedNet.Model("small")
	if err != nil {
		t.Fatal(err)
	}
	if mapped.Layout.String() != plain.Layout.String() {
		t.Fatalf("layouts %s and %s", mapped.Layout, plain.Layout)
	}
	if err := compile.Check(mapped); err != nil {
		t.Fatalf("the mapped network does not compile: %v", err)
	}
	theta := make([]float64, plain.NumParams())
	plain.Layout.Init(theta, rng)
	for i := range theta { // biases too, so that every path carries signal
		theta[i] += 0.05 * rng.NormFloat64()
	}
	first := plain.Layout[0]
	if first.Name != "conv1.W" {
		t.Fatalf("first learnable %s", first.Name)
	}
	folded := append([]float64(nil), theta...)
	if err := prior.Fold(folded[first.Offset:first.Offset+first.Size()], first.Shape); err != nil {
		t.Fatal(err)
	}
	noise, err := datasets.NoiseImages(20, h*w, classes, rng)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]*datasets.Dataset{"training": train.Subset(seq(20)), "noise": noise}
	logits := func(engine autodiff.Engine, m nn.Model, dtype autodiff.DType, th []float64, data *datasets.Dataset) []float64 {
		t.Helper()
		ev, err := autodiff.NewPredictorFor(engine, m, data.N, dtype)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, data.N*classes)
		if err := autodiff.Logits(ev, th, data, seq(data.N), out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range foldEngines {
		for name, data := range sets {
			a := logits(tc.engine, mapped, tc.dtype, theta, data)
			b := logits(tc.engine, plain, tc.dtype, folded, data)
			for i := range a {
				if math.Abs(a[i]-b[i]) > tc.tol*(1+math.Abs(b[i])) {
					t.Fatalf("%s %s, %s images, logit %d: K' with the map %g, folded K %g", tc.engine, tc.dtype, name, i, a[i], b[i])
				}
			}
		}
	}
	// the map matters off the data
	a := logits(autodiff.EngineCompiled, mapped, autodiff.Float64, theta, noise)
	b := logits(autodiff.EngineCompiled, plain, autodiff.Float64, theta, noise)
	diff := 0.0
	for i := range a {
		diff = math.Max(diff, math.Abs(a[i]-b[i]))
	}
	if diff < 1e-3 {
		t.Errorf("on noise the map changes the logits by at most %g", diff)
	}
	// dU/dK' = dU/dK A: the gradient through the map, compiled and on the VM
	batch := seq(16)
	gPlain := gradient(t, autodiff.EngineCompiled, plain, folded, train, batch)
	am := prior.Matrix()
	d := prior.D
	for _, engine := range []autodiff.Engine{autodiff.EngineCompiled, autodiff.EngineGraph} {
		gMapped := gradient(t, engine, mapped, theta, train, batch)
		for o := 0; o < first.Shape[0]; o++ {
			for j := 0; j < d; j++ {
				// the likelihood's part through A, plus the prior's own on K'
				want := 0.0
				for i := 0; i < d; i++ {
					want += (gPlain[first.Offset+o*d+i] - first.Prior.Precision*folded[first.Offset+o*d+i]) * am[i*d+j]
				}
				want += first.Prior.Precision * theta[first.Offset+o*d+j]
				if got := gMapped[first.Offset+o*d+j]; math.Abs(got-want) > 1e-8*(1+math.Abs(want)) {
					t.Fatalf("%s: dU/dK'[%d][%d] %g, (dU/dK) A %g", engine, o, j, got, want)
				}
			}
		}
		for i := first.Offset + first.Size(); i < len(theta); i++ {
			if math.Abs(gMapped[i]-gPlain[i]) > 1e-8*(1+math.Abs(gPlain[i])) {
				t.Fatalf("%s: gradient %d (after the first kernel) %g, the folded network's %g", engine, i, gMapped[i], gPlain[i])
			}
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// foldEngines are the engines and dtypes a mapped model and its folded
// twin are compared on, with the logits' tolerance of each.
var foldEngines = []struct {
	engine autodiff.Engine
	dtype  autodiff.DType
	tol    float64
}{
	{autodiff.EngineCompiled, autodiff.Float64, 1e-9},
	{autodiff.EngineCompiled, autodiff.Float32, 1e-5},
	{autodiff.EngineGraph, autodiff.Float64, 1e-9},
}

// gradient returns dU/dtheta of model m at th on the examples batch of
// data, by engine in float64.
func gradient(t *testing.T, engine autodiff.Engine, m nn.Model, th []float64, data *datasets.Dataset, batch []int) []float64 {
	t.Helper()
	ev, err := autodiff.NewFor(engine, m, len(batch), autodiff.Float64)
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, len(th))
	if _, err := ev.Eval(th, data, batch, 1, g, nil); err != nil {
		t.Fatal(err)
	}
	return g
}
