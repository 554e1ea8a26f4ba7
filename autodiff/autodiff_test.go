package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff/autodifftest"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/testmodel"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// The tests' models and data, shared with autodiff/compile's tests.
var (
	toyData  = testmodel.ToyData
	smallCNN = testmodel.SmallCNN
)

// TestGradientFiniteDifferences checks every engine's gradient against
// central finite differences of its own potential, for every activation and
// likelihood, in float64.
func TestGradientFiniteDifferences(t *testing.T) {
	for _, engine := range []Engine{EnginePlan, EngineCompiled, EngineGraph} {
		for _, act := range []nn.Activation{nn.ReLU, nn.Tanh, nn.Sigmoid} {
			for _, lik := range []nn.Likelihood{nn.Categorical, nn.Gaussian} {
				for _, df := range []float64{0, 3} {
					name := fmt.Sprintf("%s/%s/%s/df%g", engine, act, lik, df)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(7, uint64(act)*10+uint64(lik)))
						spec := nn.Spec{Sizes: []int{4, 5, 3, 3}, Activation: act, Likelihood: lik, NoiseSD: 0.7, PriorPrecision: []float64{1, 2, 0.5}, PriorDF: df}
						data := toyData(lik, 9, 4, 3, rng)
						ev, err := New(engine, spec, 8, Float64)
						if err != nil {
							t.Fatal(err)
						}
						theta := make([]float64, spec.NumParams())
						spec.Init(theta, rng)
						for i := range theta {
							theta[i] += 0.1 * rng.NormFloat64() // non-zero biases, no ReLU kinks at 0
						}
						idx := []int{0, 2, 3, 5, 8, 1} // fewer than the batch size: masking is exercised
						scale := 1.5
						grad := make([]float64, len(theta))
						if _, err := ev.Eval(theta, data, idx, scale, grad, nil); err != nil {
							t.Fatal(err)
						}
						const h = 1e-5
						worst := 0.0
						for i := range theta {
							old := theta[i]
							theta[i] = old + h
							up, _ := ev.Eval(theta, data, idx, scale, nil, nil)
							theta[i] = old - h
							dn, _ := ev.Eval(theta, data, idx, scale, nil, nil)
							theta[i] = old
							fd := (up - dn) / (2 * h)
							rel := math.Abs(fd-grad[i]) / math.Max(1e-2, math.Abs(fd)+math.Abs(grad[i]))
							worst = math.Max(worst, rel)
						}
						if worst > 1e-6 {
							t.Fatalf("largest relative gradient error %.3g > 1e-6", worst)
						}
					})
				}
			}
		}
	}
}

// TestPotentialByHand compares U~ on a 2-2-2 net with a value computed by
// hand (written out below).
func TestPotentialByHand(t *testing.T) {
	spec := nn.Spec{Sizes: []int{2, 2, 2}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{2}}
	// W0 = [[1, -1], [0.5, 2]], b0 = [0, -1], W1 = [[1, 0], [-1, 1]], b1 = [0.5, 0]
	theta := []float64{1, -1, 0.5, 2, 0, -1, 1, 0, -1, 1, 0.5, 0}
	data := &datasets.Dataset{N: 10, D: 2, Classes: 2, X: []float32{1, 2, -1, 1}, Labels: []int{1, 0}}
	// x1 = (1,2): z0 = (1+1, -1+4-1) = (2, 2); h = (2, 2); z1 = (2-2+0.5, 0+2) = (0.5, 2)
	//   log softmax_1 = 2 - log(e^0.5 + e^2)
	// x2 = (-1,1): z0 = (-1+0.5, 1+2-1) = (-0.5, 2); h = (0, 2); z1 = (-2+0.5, 2) = (-1.5, 2)
	//   log softmax_0 = -1.5 - log(e^-1.5 + e^2)
	ll1 := 2 - math.Log(math.Exp(0.5)+math.Exp(2))
	ll2 := -1.5 - math.Log(math.Exp(-1.5)+math.Exp(2))
	ss := 0.0
	for _, v := range theta {
		ss += v * v
	}
	want := 0.5*2*ss - 5*(ll1+ll2) // N/|S| = 10/2
	for _, engine := range []Engine{EnginePlan, EngineCompiled, EngineGraph} {
		for _, dt := range []DType{Float64, Float32} {
			ev, err := New(engine, spec, 4, dt)
			if err != nil {
				t.Fatal(err)
			}
			ll := make([]float64, 2)
			u, err := ev.Eval(theta, data, []int{0, 1}, 5, nil, ll)
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-12
			if dt == Float32 {
				tol = 1e-5
			}
			if math.Abs(u-want) > tol*math.Abs(want) || math.Abs(ll[0]-ll1) > tol*10 || math.Abs(ll[1]-ll2) > tol*10 {
				t.Errorf("%s/%s: U = %.12g (want %.12g), loglik %v (want %v %v)", engine, dt, u, want, ll, ll1, ll2)
			}
		}
	}
}

// TestPlanMatchesGraph checks the fast plan against Gorgonia's VM on a larger
// net, in both dtypes, over repeated evaluations.
func TestPlanMatchesGraph(t *testing.T) {
	for _, dt := range []DType{Float64, Float32} {
		rng := rand.New(rand.NewPCG(11, 12))
		spec := nn.Spec{Sizes: []int{20, 16, 12, 5}, Activation: nn.Tanh, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
		data := toyData(nn.Categorical, 40, 20, 5, rng)
		plan, _ := autodifftest.NewPlan(spec, 16, dt)
		graph, err := NewGraphEvaluator(spec, 16, dt)
		if err != nil {
			t.Fatal(err)
		}
		theta := make([]float64, spec.NumParams())
		g1 := make([]float64, len(theta))
		g2 := make([]float64, len(theta))
		tol := 1e-10
		if dt == Float32 {
			tol = 2e-4
		}
		for rep := 0; rep < 3; rep++ {
			spec.Init(theta, rng)
			idx := rng.Perm(40)[:16-rep*5]
			u1, err1 := plan.Eval(theta, data, idx, 2.5, g1, nil)
			u2, err2 := graph.Eval(theta, data, idx, 2.5, g2, nil)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if math.Abs(u1-u2) > tol*math.Abs(u1) {
				t.Fatalf("%s rep %d: plan U %v, graph U %v", dt, rep, u1, u2)
			}
			for i := range g1 {
				if math.Abs(g1[i]-g2[i]) > tol*(1+math.Abs(g1[i])) {
					t.Fatalf("%s rep %d: gradient %d: plan %v, graph %v", dt, rep, i, g1[i], g2[i])
				}
			}
		}
	}
}

func TestEvalErrors(t *testing.T) {
	spec := nn.Spec{Sizes: []int{3, 2}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	data := toyData(nn.Categorical, 5, 3, 2, rand.New(rand.NewPCG(1, 1)))
	p, _ := autodifftest.NewPlan(spec, 4, Float64)
	theta := make([]float64, spec.NumParams())
	cases := []struct {
		name  string
		theta []float64
		idx   []int
		grad  []float64
	}{
		{"short theta", theta[:2], []int{0}, nil},
		{"too many examples", theta, []int{0, 1, 2, 3, 4}, nil},
		{"no examples", theta, nil, nil},
		{"short grad", theta, []int{0}, make([]float64, 3)},
	}
	for _, c := range cases {
		if _, err := p.Eval(c.theta, data, c.idx, 1, c.grad, nil); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	wrong := toyData(nn.Categorical, 5, 4, 2, rand.New(rand.NewPCG(1, 1)))
	if _, err := p.Eval(theta, wrong, []int{0}, 1, nil, nil); err == nil {
		t.Error("feature mismatch: no error")
	}
}

func TestPotentialTerms(t *testing.T) {
	pot, spec, rng := toyPotential(t, 3, nn.Tanh, 30)
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	// Whole data set: mean of terms equals the full-batch potential.
	out := [][]float64{make([]float64, 30)}
	if err := pot.Terms([][]float64{theta}, 0, 1000, rng, out); err != nil {
		t.Fatal(err)
	}
	mean := 0.0
	for _, v := range out[0] {
		mean += v / 30
	}
	ll := make([]float64, 30)
	all := make([]int, 30)
	for i := range all {
		all[i] = i
	}
	if err := pot.LogLik(theta, all, ll); err != nil {
		t.Fatal(err)
	}
	full := spec.NegLogPrior(theta)
	for _, v := range ll {
		full -= v
	}
	if math.Abs(mean-full) > 1e-9*math.Abs(full) {
		t.Fatalf("mean of terms %v, full potential %v", mean, full)
	}
}

// TestTermsGrow checks that a batch grown in steps (0..7, 7..19, 19..30)
// visits every example once: its mean is the full potential.
func TestTermsGrow(t *testing.T) {
	pot, spec, rng := toyPotential(t, 5, nn.Tanh, 30)
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	if err := pot.Terms([][]float64{theta}, 3, 5, rng, [][]float64{make([]float64, 2)}); err == nil {
		t.Error("continuing before any order: no error")
	}
	out := make([]float64, 30)
	for _, r := range [][2]int{{0, 7}, {7, 19}, {19, 30}} {
		if err := pot.Terms([][]float64{theta}, r[0], r[1], rng, [][]float64{out[r[0]:]}); err != nil {
			t.Fatal(err)
		}
	}
	full := make([]float64, 30)
	if err := pot.Terms([][]float64{theta}, 0, 30, rng, [][]float64{full}); err != nil {
		t.Fatal(err)
	}
	sum, want := 0.0, 0.0
	for i := range out {
		sum += out[i]
		want += full[i]
	}
	if math.Abs(sum-want) > 1e-9*math.Abs(want) {
		t.Fatalf("grown batch sums to %v, whole data set %v: an example was repeated or missed", sum, want)
	}
	if out[0] == full[0] && out[1] == full[1] && out[2] == full[2] {
		t.Error("grown batch is in data order: not shuffled")
	}
}

// TestTermsParallelMatchesSerial checks that exchange terms evaluated on
// dedicated evaluators in parallel (two and three configurations: the
// caller and the term pool's goroutines) equal the serial evaluation, and
// that a parallel call allocates nothing once warm (an exchange test runs
// on the step path).
func TestTermsParallelMatchesSerial(t *testing.T) {
	for _, k := range []int{2, 3} {
		pot, spec, rng := toyPotential(t, 4, nn.ReLU, 50)
		thetas := make([][]float64, k)
		serial := make([][]float64, k)
		par := make([][]float64, k)
		evs := make([]Evaluator, k)
		for i := range thetas {
			thetas[i] = make([]float64, spec.NumParams())
			spec.Init(thetas[i], rng)
			serial[i], par[i] = make([]float64, 20), make([]float64, 20)
			evs[i], _ = autodifftest.NewPlan(spec, 8, Float64)
		}
		if err := pot.Terms(thetas, 0, 20, rand.New(rand.NewPCG(9, 9)), serial); err != nil {
			t.Fatal(err)
		}
		pot.TermEvals = evs
		if err := pot.Terms(thetas, 0, 20, rand.New(rand.NewPCG(9, 9)), par); err != nil {
			t.Fatal(err)
		}
		for c := range serial {
			for i := range serial[c] {
				if serial[c][i] != par[c][i] {
					t.Fatalf("%d configurations: theta %d term %d: serial %v, parallel %v", k, c, i, serial[c][i], par[c][i])
				}
			}
		}
		trng := rand.New(rand.NewPCG(9, 9))
		if n := testing.AllocsPerRun(50, func() {
			if err := pot.Terms(thetas, 0, 20, trng, par); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%d configurations in parallel: %v allocations a call", k, n)
		}
	}
}

// toyPotential returns a float64 plan potential of a 3-4-2 classifier on n
// toy examples, its spec and the rng that made them.
func toyPotential(t *testing.T, seed uint64, act nn.Activation, n int) (*Potential, nn.Spec, *rand.Rand) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	spec := nn.Spec{Sizes: []int{3, 4, 2}, Activation: act, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	data := toyData(nn.Categorical, n, 3, 2, rng)
	ev, err := autodifftest.NewPlan(spec, 8, Float64)
	if err != nil {
		t.Fatal(err)
	}
	model, err := spec.Model()
	if err != nil {
		t.Fatal(err)
	}
	pot, err := NewPotential(model, data, ev, 8, rng)
	if err != nil {
		t.Fatal(err)
	}
	return pot, spec, rng
}

// TestTermsBufferErrors checks that Terms and LogLik refuse output buffers
// too short for their configurations or examples with an error, not a
// panic, on an evaluator that evaluates batch by batch (the VM) and on
// one that takes any number of examples (the compiled graph).
func TestTermsBufferErrors(t *testing.T) {
	for _, engine := range []Engine{EngineGraph, EngineCompiled} {
		t.Run(string(engine), func(t *testing.T) {
			pot, spec, rng := toyPotential(t, 3, nn.Tanh, 30)
			ev, err := New(engine, spec, 8, Float64)
			if err != nil {
				t.Fatal(err)
			}
			pot.Eval = ev
			theta := make([]float64, spec.NumParams())
			spec.Init(theta, rng)
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			if err := pot.Terms([][]float64{theta, theta}, 0, 10, rng, [][]float64{make([]float64, 10)}); err == nil {
				t.Error("Terms of two configurations into one output: no error")
			}
			if err := pot.LogLik(theta, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, make([]float64, 9)); err == nil {
				t.Error("LogLik of 10 examples into 9 values: no error")
			}
		})
	}
}
