package tempering

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// exactGaussianKernel draws theta ~ N(0, T I) afresh at every step: a
// perfect sampler of every rung of StdGaussian, so that a test of the
// ladder and the barrier is not also a test of some dynamics.
type exactGaussianKernel struct{}

func (exactGaussianKernel) Name() string                          { return "exact" }
func (exactGaussianKernel) Init(s *sampler.State, rng *rand.Rand) {}
func (exactGaussianKernel) Step(s *sampler.State, pot sampler.Potential, mb sampler.Minibatch, hp sampler.Hyper, rng *rand.Rand) error {
	temp := hp.Temp
	if temp == 0 {
		temp = 1
	}
	sd := math.Sqrt(temp)
	u := 0.0
	for i := range s.Theta {
		s.Theta[i] = sd * rng.NormFloat64()
		u += 0.5 * s.Theta[i] * s.Theta[i]
	}
	s.U = u
	return nil
}

// TestGaussianBarrier tempers a 100-dimensional standard Gaussian from T = 10
// to 1, whose communication barrier is known: Lambda = sqrt(D/(2 pi)) ln 10 =
// 9.19, with local barrier proportional to 1/beta, so the optimal ladder is
// geometric. Starting from a linear ladder, fixed-end adaptation must give
// an estimate within 10% of 9.19, a ladder within 5% of the geometric one at
// every rung, and pair rejection rates within 0.1 of each other after
// burn-in. (Estimating rejection from the Barker test's 0/1 outcomes instead
// of the Metropolis-equivalent rate gives Lambda 12.2 and fails.)
func TestGaussianBarrier(t *testing.T) {
	const d, r = 100, 20
	g := sampler.StdGaussian{D: d}
	temps, _ := LinearLadder(r, 10)
	corr, _ := NewCorrection(1, CorrectionOptions{})
	burn := 0
	for k := 1; k <= 10; k++ {
		burn += tuningRoundSteps(k, 1)
	}
	pt := &PT{Kernel: exactGaussianKernel{}, Temps: temps, Every: 1, Exchange: &Exchanger{Batch: 2, Correction: corr},
		Workers: 1, BurnIn: burn, Adapt: &LadderAdaptation{}}
	st, err := pt.Init([][]float64{make([]float64, d)}, 7)
	if err != nil {
		t.Fatal(err)
	}
	pots := make([]sampler.Potential, r)
	for i := range pots {
		pots[i] = g
	}
	if err := pt.Run(pots, g, st, burn+4000, nil); err != nil {
		t.Fatal(err)
	}
	if tu := st.Tuning; tu.NextRound != 0 || tu.Rounds[len(tu.Rounds)-1].Step != burn {
		t.Fatalf("%d tuning rounds, the last ending at %d (next at %d): want the last at burn-in %d", len(tu.Rounds), tu.Rounds[len(tu.Rounds)-1].Step, tu.NextRound, burn)
	}
	reject := make([]float64, r-1)
	lo, hi := 1.0, 0.0
	for p := range reject {
		reject[p] = st.Stats.WindowRejection(p)
		lo, hi = math.Min(lo, reject[p]), math.Max(hi, reject[p])
	}
	b, err := NewBarrier(st.Temps, reject)
	if err != nil {
		t.Fatal(err)
	}
	want := math.Sqrt(d/(2*math.Pi)) * math.Log(10)
	t.Logf("Lambda %.3f (exact %.3f); pair rejection %.3f..%.3f; ladder %.3f", b.Global(), want, lo, hi, st.Temps)
	if math.Abs(b.Global()-want) > 0.1*want {
		t.Errorf("barrier estimate %.3f, exact %.3f: off by more than 10%%", b.Global(), want)
	}
	if hi-lo > 0.1 {
		t.Errorf("pair rejection rates after adaptation range over %.3f..%.3f: not equalised within 0.1", lo, hi)
	}
	geo, _ := GeometricLadder(r, 10)
	for j := range geo {
		if math.Abs(st.Temps[j]/geo[j]-1) > 0.05 {
			t.Errorf("adapted T_%d = %.4f, geometric %.4f: more than 5%% apart", j+1, st.Temps[j], geo[j])
		}
	}
}

// TestAdaptedLadderRoundTrips runs PT-SGHMC on the paper's gauss1d4 target
// with 4 rungs from T = 1 to 100, on the geometric ladder and on the ladder
// adapted during burn-in, from the same seeds: the adapted ladder must make
// more round trips after burn-in, summed over three seeds (measured: 20,455
// against 19,924, and more on each seed). On much wider ladders (T up to
// 1,000 or 10,000) the equal-barrier ladder made fewer round trips than the
// geometric one: its pairs' Metropolis-equivalent rejections are equal, but
// the Barker test's acceptances are not (0.13 to 0.24 at the top pair
// against about 0.4 below), and round trips follow the test actually run.
func TestAdaptedLadderRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	const r, tmax = 4, 100
	burn := 0
	for k := 1; k <= 11; k++ {
		burn += tuningRoundSteps(k, 2)
	}
	steps := burn + 200000
	trips := map[bool]int{}
	for seed := uint64(1); seed <= 3; seed++ {
		for _, adapt := range []bool{false, true} {
			m := sampler.Gauss1D4()
			temps, _ := GeometricLadder(r, tmax)
			corr, _ := NewCorrection(1, CorrectionOptions{})
			pt := &PT{Record: StandardRecorders(), Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: temps, Every: 2,
				Exchange: &Exchanger{Batch: 16, Correction: corr}, Workers: 1, BurnIn: burn}
			if adapt {
				pt.Adapt = &LadderAdaptation{}
			}
			st, err := pt.Init([][]float64{m.Start()}, seed)
			if err != nil {
				t.Fatal(err)
			}
			pots := []sampler.Potential{m, m, m, m}
			if err := pt.Run(pots, m, st, steps, nil); err != nil {
				t.Fatal(err)
			}
			rates := make([]float64, r-1)
			for p := range rates {
				rates[p] = st.Stats.WindowAcceptance(p)
			}
			trips[adapt] += st.Stats.WinRoundTrips
			t.Logf("seed %d adapted %v: ladder %.3f, swap acceptance %.2f, %d round trips in %d steps", seed, adapt, st.Temps, rates, st.Stats.WinRoundTrips, steps-burn)
		}
	}
	if trips[true] <= trips[false] {
		t.Errorf("adapted ladder made %d round trips, geometric %d: adaptation did not help", trips[true], trips[false])
	}
}

func TestBarrierInterpolation(t *testing.T) {
	cases := []struct {
		name   string
		temps  []float64
		reject []float64
	}{
		{"uniform", []float64{1, 2, 4, 8}, []float64{0.3, 0.3, 0.3}},
		{"steep top", []float64{1, 1.5, 3, 10, 40}, []float64{0.05, 0.1, 0.6, 0.9}},
		{"flat pair", []float64{1, 2, 3, 5}, []float64{0.4, 0, 0.2}},
		{"two rungs", []float64{1, 3}, []float64{0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := NewBarrier(c.temps, c.reject)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for _, v := range c.reject {
				sum += v
			}
			if math.Abs(b.Global()-sum) > 1e-12 || math.Abs(b.At(1)-sum) > 1e-12 || b.At(1/c.temps[len(c.temps)-1]) != 0 {
				t.Errorf("Lambda(1) = %v, At(1) = %v, At(top) = %v; want %v, %v, 0", b.Global(), b.At(1), b.At(b.Betas[0]), sum, sum)
			}
			// monotone between knots, and Inverse inverts At
			prev := -1.0
			for i := 0; i <= 1000; i++ {
				beta := b.Betas[0] + (1-b.Betas[0])*float64(i)/1000
				v := b.At(beta)
				if v < prev-1e-12 {
					t.Fatalf("Lambda decreases at beta %v: %v after %v", beta, v, prev)
				}
				if b.Local(beta) < -1e-12 {
					t.Fatalf("negative local barrier %v at beta %v", b.Local(beta), beta)
				}
				prev = v
				if i%50 == 25 && b.Local(beta) > 1e-9 {
					if inv := b.Inverse(v); math.Abs(inv-beta) > 1e-9 {
						t.Errorf("Inverse(At(%v)) = %v", beta, inv)
					}
				}
			}
		})
	}
	// Equal-barrier ladder of a uniform local barrier in beta is linear in beta.
	b, _ := NewBarrier([]float64{1, 2}, []float64{0.5})
	l, err := b.EqualBarrierLadder(5)
	if err != nil {
		t.Fatal(err)
	}
	for j, want := range []float64{1, 1 / 0.875, 1 / 0.75, 1 / 0.625, 2} {
		if math.Abs(l[j]-want) > 1e-9 {
			t.Errorf("ladder %v, want rung %d at %v", l, j, want)
		}
	}
}

func TestFreeTopLadder(t *testing.T) {
	// Local barrier 1 per unit beta on [0.5, 1]: Lambda = 0.5 in total.
	b, _ := NewBarrier([]float64{1, 4.0 / 3, 2}, []float64{0.25, 0.25})
	// 3 rungs at rejection 0.1 each need Lambda 0.2: top at beta 0.8.
	l, err := b.FreeTopLadder(3, 0.1, 1e4)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l[2]-1/0.8) > 1e-6 || math.Abs(l[1]-1/0.9) > 1e-6 {
		t.Errorf("narrowing ladder %v, want 1, %v, %v", l, 1/0.9, 1/0.8)
	}
	// 5 rungs at 0.2 need Lambda 0.8: extrapolated to beta 0.2.
	l, _ = b.FreeTopLadder(5, 0.2, 1e4)
	if math.Abs(l[4]-1/0.2) > 1e-6 {
		t.Errorf("widening ladder %v, want top %v", l, 1/0.2)
	}
	// but never more than 4x the current top per call
	l, _ = b.FreeTopLadder(9, 0.3, 1e4)
	if math.Abs(l[8]-8) > 1e-9 {
		t.Errorf("widening ladder %v, want top capped at 8", l)
	}
	if _, err := b.FreeTopLadder(3, 1.2, 1e4); err == nil {
		t.Error("rejection target 1.2 accepted")
	}
}

func TestBarkerToMetropolisRejection(t *testing.T) {
	prev := 1.0
	for _, a := range []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.49} {
		r, err := BarkerToMetropolisRejection(a)
		if err != nil {
			t.Fatal(err)
		}
		// Barker accepts between half and all of Metropolis: a <= 1-r <= 2a.
		if !(r < prev && a <= 1-r+1e-9 && 1-r <= 2*a+1e-9) {
			t.Errorf("Barker %.2f -> Metropolis rejection %.4f (previous %.4f): outside [1-2a, 1-a] or not decreasing", a, r, prev)
		}
		prev = r
	}
	// Check the model itself by simulation: deltaE ~ N(-mu, 2 mu).
	rng := rand.New(rand.NewPCG(1, 2))
	mu := 1.3
	var bk, mh float64
	const n = 400000
	for i := 0; i < n; i++ {
		x := -mu + math.Sqrt(2*mu)*rng.NormFloat64()
		bk += Logistic(x) / n
		mh += (1 - MetropolisRejection(x)) / n
	}
	if math.Abs(bk-barkerAcceptance(mu)) > 0.003 || math.Abs(mh-metropolisAcceptance(mu)) > 0.003 {
		t.Errorf("simulated Barker %.4f Metropolis %.4f, formulas %.4f %.4f", bk, mh, barkerAcceptance(mu), metropolisAcceptance(mu))
	}
	for _, bad := range []float64{0, 0.5, 0.7, -1} {
		if _, err := BarkerToMetropolisRejection(bad); err == nil {
			t.Errorf("target %v accepted", bad)
		}
	}
}

// TestFreeTopExtrapolation checks that a free top extrapolated beyond the
// measured ladder uses the top pair's own density when the interpolant's
// end slope vanishes: issue 32's 784-32-10 case (seed 1, under a per-pair
// placement tried and dropped, docs/sampler.md) measured
// increments 0.24/0.80/0.24 on T = 1..1.0245, whose shape-preserving end
// slope is about 0, and the top ran away to T = 4.1 (the quadrupling
// floor). The top's density puts it near 1.04.
func TestFreeTopExtrapolation(t *testing.T) {
	temps := []float64{1, 1.008, 1.0161, 1.0245}
	b, err := newBarrier(temps, []float64{0.24, 0.8, 0.24}, 1)
	if err != nil {
		t.Fatal(err)
	}
	next, err := b.FreeTopLadder(4, 0.563, 1e4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("next ladder %.4f (end slope %.3g)", next, b.slopes[0])
	if top := next[3]; !(top > 1.0245 && top < 1.07) {
		t.Errorf("top %.4f: want above the measured 1.0245 and below 1.07", top)
	}
}
