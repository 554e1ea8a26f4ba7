package nullspace_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/nullspace"
)

// skipFixture is a small ConvNet with the skip branch, images whose span
// leaves directions out, the branch's image prior, the plain ("folded")
// and the mapped (sampled) models, and random weights theta' with their
// folded theta.
type skipFixture struct {
	net            nn.ConvNet
	train          *datasets.Dataset
	prior          *nullspace.Prior
	plain, mapped  nn.Model
	skip           nn.Param // skip.W in the layout
	theta, folded  []float64
	height, width  int
	classes, units int
}

func newSkipFixture(t *testing.T) *skipFixture {
	t.Helper()
	rng := rand.New(rand.NewPCG(31, 32))
	f := &skipFixture{height: 10, width: 10, classes: 3, units: 8}
	f.net = nn.ConvNet{Height: f.height, Width: f.width, Channels: 1, Conv: []int{3, 4}, Kernel: 3, Dense: []int{f.units}, Classes: f.classes,
		Prior: nn.PriorConfig{Precision: 1, FanIn: true}, Skip: true}
	f.train = smoothImages(200, f.height, f.width, f.classes, rng)
	var err error
	if f.prior, err = nullspace.Fit(f.train, 0.999, 10); err != nil {
		t.Fatal(err)
	}
	if f.prior.K >= f.prior.D || f.prior.K == 0 {
		t.Fatalf("the smooth images span %d of %d directions", f.prior.K, f.prior.D)
	}
	if f.plain, err = f.net.Model("small-skip"); err != nil {
		t.Fatal(err)
	}
	if f.mapped, err = f.prior.SkipModel(f.plain); err != nil {
		t.Fatal(err)
	}
	last := f.plain.Layout[len(f.plain.Layout)-1]
	if last.Name != nn.SkipWeights || last.Shape[0] != f.height*f.width || last.Shape[1] != f.units {
		t.Fatalf("last learnable %s %v, want %s [%d %d]", last.Name, last.Shape, nn.SkipWeights, f.height*f.width, f.units)
	}
	f.skip = last
	f.theta = make([]float64, f.plain.NumParams())
	f.plain.Layout.Init(f.theta, rng)
	for i := range f.theta { // biases too, so that every path carries signal
		f.theta[i] += 0.05 * rng.NormFloat64()
	}
	f.folded = append([]float64(nil), f.theta...)
	if err := f.prior.FoldSkip(f.folded[f.skip.Offset:f.skip.Offset+f.skip.Size()], f.units); err != nil {
		t.Fatal(err)
	}
	return f
}

// logits returns the logits of model m with weights th on data.
func (f *skipFixture) logits(t *testing.T, engine autodiff.Engine, m nn.Model, dtype autodiff.DType, th []float64, data *datasets.Dataset) []float64 {
	t.Helper()
	ev, err := autodiff.NewPredictorFor(engine, m, data.N, dtype)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, data.N*f.classes)
	if err := autodiff.Logits(ev, th, data, seq(data.N), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSkipModelIsTheFoldedNetwork checks the skip branch's
// reparametrisation end to end: for random weights theta' (W' in the
// branch), the mapped network (s (x V)(V^T W')) and the plain network
// with the folded W = s V V^T W' give the same logits on training-like and
// noise images, on every engine and dtype; the mapped graph compiles; and
// the gradient with respect to W' is s V V^T times the plain network's
// likelihood gradient with respect to W, plus the prior's own on W'.
func TestSkipModelIsTheFoldedNetwork(t *testing.T) {
	f := newSkipFixture(t)
	if f.mapped.Layout.String() != f.plain.Layout.String() {
		t.Fatalf("layouts %s and %s", f.mapped.Layout, f.plain.Layout)
	}
	if err := compile.Check(f.mapped); err != nil {
		t.Fatalf("the mapped network does not compile: %v", err)
	}
	noise, err := datasets.NoiseImages(20, f.height*f.width, f.classes, rand.New(rand.NewPCG(33, 34)))
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]*datasets.Dataset{"training": f.train.Subset(seq(20)), "noise": noise}
	for _, tc := range foldEngines {
		for name, data := range sets {
			a := f.logits(t, tc.engine, f.mapped, tc.dtype, f.theta, data)
			b := f.logits(t, tc.engine, f.plain, tc.dtype, f.folded, data)
			for i := range a {
				if math.Abs(a[i]-b[i]) > tc.tol*(1+math.Abs(b[i])) {
					t.Fatalf("%s %s, %s images, logit %d: W' mapped %g, folded W %g", tc.engine, tc.dtype, name, i, a[i], b[i])
				}
			}
		}
	}
	f.checkGradient(t)
}

// checkGradient checks dU/dW' = s V V^T (dU/dW - prior's) + prior's on
// W', and that every other coordinate's gradient is the folded network's.
func (f *skipFixture) checkGradient(t *testing.T) {
	t.Helper()
	batch := seq(16)
	gPlain := gradient(t, autodiff.EngineCompiled, f.plain, f.folded, f.train, batch)
	lam := f.skip.Prior.Precision
	off, n := f.skip.Offset, f.skip.Size()
	// the likelihood's part of dU/dW, mapped by the symmetric s V V^T
	want := make([]float64, n)
	for i := range want {
		want[i] = gPlain[off+i] - lam*f.folded[off+i]
	}
	if err := f.prior.FoldSkip(want, f.units); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []autodiff.Engine{autodiff.EngineCompiled, autodiff.EngineGraph} {
		gMapped := gradient(t, engine, f.mapped, f.theta, f.train, batch)
		for i := 0; i < n; i++ {
			w := want[i] + lam*f.theta[off+i]
			if got := gMapped[off+i]; math.Abs(got-w) > 1e-8*(1+math.Abs(w)) {
				t.Fatalf("%s: dU/dW'[%d] %g, s V V^T dU/dW + prior %g", engine, i, got, w)
			}
		}
		for i := 0; i < off; i++ {
			if math.Abs(gMapped[i]-gPlain[i]) > 1e-8*(1+math.Abs(gPlain[i])) {
				t.Fatalf("%s: gradient %d (before the branch) %g, the folded network's %g", engine, i, gMapped[i], gPlain[i])
			}
		}
	}
}

// TestSkipIsZeroOnTheSpan checks that the folded branch adds nothing to an
// image in the span of the training images (the logits are the same with
// the branch's weights zeroed) and changes the logits of an image with a
// part off the span, for the plain network and, through the map, the
// sampled one.
func TestSkipIsZeroOnTheSpan(t *testing.T) {
	f := newSkipFixture(t)
	d := f.prior.D
	rng := rand.New(rand.NewPCG(35, 36))
	// project returns x with its part along the directions left out
	// removed (in: true) or scaled up (in: false)
	project := func(x []float32, in bool) []float32 {
		out := make([]float32, d)
		keep := make([]float64, d)
		for i, v := range x {
			keep[i] = float64(v)
		}
		for j := 0; j < d-f.prior.K; j++ {
			v := f.prior.V[j*d : (j+1)*d]
			dot := 0.0
			for i := range v {
				dot += v[i] * float64(x[i])
			}
			c := -dot
			if !in {
				c = 1 + float64(j%3) // an off-span part of its own
			}
			for i := range v {
				keep[i] += c * v[i]
			}
		}
		for i, v := range keep {
			out[i] = float32(v)
		}
		return out
	}
	image := func(x []float32) *datasets.Dataset {
		return &datasets.Dataset{N: 1, D: d, Classes: f.classes, X: x, Labels: []int{0}}
	}
	uniform := make([]float32, d)
	for i := range uniform {
		uniform[i] = rng.Float32()
	}
	inverted := make([]float32, d)
	for i, v := range f.train.Row(3) {
		inverted[i] = 1 - v
	}
	for _, tc := range []struct {
		name string
		x    []float32
		same bool
	}{
		{"a training image projected on the span", project(f.train.Row(0), true), true},
		{"another, projected", project(f.train.Row(7), true), true},
		{"a training image plus parts off the span", project(f.train.Row(0), false), false},
		{"uniform noise", uniform, false},
		{"an inverted training image", inverted, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range []struct {
				model nn.Model
				theta []float64
			}{{f.plain, f.folded}, {f.mapped, f.theta}} {
				without := append([]float64(nil), m.theta...)
				clear(without[f.skip.Offset : f.skip.Offset+f.skip.Size()])
				a := f.logits(t, autodiff.EngineCompiled, m.model, autodiff.Float64, m.theta, image(tc.x))
				b := f.logits(t, autodiff.EngineCompiled, m.model, autodiff.Float64, without, image(tc.x))
				diff := 0.0
				for i := range a {
					diff = math.Max(diff, math.Abs(a[i]-b[i]))
				}
				if tc.same && diff > 1e-5 {
					t.Errorf("model %s: the branch changes the logits by %g", m.model.Name, diff)
				}
				if !tc.same && diff < 1e-3 {
					t.Errorf("model %s: the branch changes the logits by only %g", m.model.Name, diff)
				}
			}
		})
	}
}

// TestSkipRefusals checks the errors of a skip branch that cannot be
// mapped: a model that is not a ConvNet, a ConvNet without the branch,
// images of another size, a patch prior, and images that span every
// direction.
func TestSkipRefusals(t *testing.T) {
	f := newSkipFixture(t)
	mlp, err := nn.Spec{Sizes: []int{100, 5, 3}, PriorPrecision: []float64{1}}.Model()
	if err != nil {
		t.Fatal(err)
	}
	noSkip := f.net
	noSkip.Skip = false
	plainNet, err := noSkip.Model("no-skip")
	if err != nil {
		t.Fatal(err)
	}
	patch, err := nullspace.FitPatches(f.train, nullspace.ConvPatches(f.net), 0.999, 10)
	if err != nil {
		t.Fatal(err)
	}
	full, err := datasets.NoiseImages(400, f.height*f.width, f.classes, rand.New(rand.NewPCG(37, 38)))
	if err != nil {
		t.Fatal(err)
	}
	fullPrior, err := nullspace.Fit(full, 0.5, 10) // keeps half the trace: directions left out
	if err != nil {
		t.Fatal(err)
	}
	spanAll := *fullPrior
	spanAll.K, spanAll.V = spanAll.D, nil
	other := *f.prior
	other.D = 64
	for _, tc := range []struct {
		name  string
		prior *nullspace.Prior
		model nn.Model
		want  string
	}{
		{"an MLP", f.prior, mlp, "is not a ConvNet"},
		{"a ConvNet without the branch", f.prior, plainNet, "without its skip branch"},
		{"images of another size", &other, f.plain, "reads images of 100 values, the data have 64"},
		{"a patch prior", patch, f.plain, "patches"},
		{"images spanning every direction", &spanAll, f.plain, "span all 100 directions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.prior.SkipModel(tc.model); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SkipModel: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if err := f.prior.FoldSkip(make([]float64, 7), f.units); err == nil {
		t.Error("FoldSkip of 7 values: no error")
	}
}

// TestSkipCost checks the multiply-adds the mapped branch adds to one
// gradient evaluation of batch b, as docs/uncertainty.md counts them: V^T
// W' and its adjoint (2 L D n, once per graph), x (s V) (b D L) and
// (x V)(V^T W') with its adjoint (2 b L n), against the network without
// the branch.
func TestSkipCost(t *testing.T) {
	f := newSkipFixture(t)
	noSkip := f.net
	noSkip.Skip = false
	without, err := noSkip.Model("no-skip")
	if err != nil {
		t.Fatal(err)
	}
	macs := func(m nn.Model, b int) int64 {
		t.Helper()
		ev, err := autodiff.NewFor(autodiff.EngineCompiled, m, b, autodiff.Float32)
		if err != nil {
			t.Fatal(err)
		}
		ce, ok := ev.(*compile.Evaluator)
		if !ok {
			t.Fatalf("model %s does not compile", m.Name)
		}
		return ce.MACs()
	}
	l, d, n := int64(f.prior.D-f.prior.K), int64(f.prior.D), int64(f.units)
	for _, b := range []int64{1, 16} {
		if got, want := macs(f.mapped, int(b))-macs(without, int(b)), 2*l*d*n+b*d*l+2*b*l*n; got != want {
			t.Errorf("batch %d: the mapped branch adds %d multiply-adds, want 2 L D n + b D L + 2 b L n = %d", b, got, want)
		}
	}
}
