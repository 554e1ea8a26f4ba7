package driver

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// exactGaussianKernel draws theta ~ N(0, T I) afresh at every step: a
// perfect sampler of every rung of StdGaussian, so that a test of the
// ladder and the barrier is not also a test of some dynamics.
type exactGaussianKernel struct{}

func (exactGaussianKernel) Name() string { return "exact" }

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
	temps, _ := tempering.LinearLadder(r, 10)
	corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	burn := 0
	for k := 1; k <= 10; k++ {
		burn += tuningRoundSteps(k, 1)
	}
	pt := testDriver(testPT{Kernel: exactGaussianKernel{}, Temps: temps, Every: 1, Exchange: &tempering.Exchanger{Batch: 2, Correction: corr},
		Workers: 1, BurnIn: burn, Adapt: &tempering.LadderAdaptation{}})
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
	b, err := tempering.NewBarrier(st.Temps, reject)
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
	geo, _ := tempering.GeometricLadder(r, 10)
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
			temps, _ := tempering.GeometricLadder(r, tmax)
			corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
			o := testPT{Record: tempering.StandardRecorders(), Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: temps, Every: 2,
				Exchange: &tempering.Exchanger{Batch: 16, Correction: corr}, Workers: 1, BurnIn: burn}
			if adapt {
				o.Adapt = &tempering.LadderAdaptation{}
			}
			pt := testDriver(o)
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
