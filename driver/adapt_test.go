package driver

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// relaxingGaussianKernel draws every rung of StdGaussian afresh at every
// step from N(0, s T I), where s = 1 - exp(-(t/Relax)^4) stays near 0 for
// about Relax/2 steps and reaches 1 by about 1.4 Relax (t is the step,
// counted from the kernel's calls over Rungs rungs): a ladder started at
// the origin whose replicas mix at once but whose energies stay near the
// common start for a while, as a network's do while it is still fitting
// from its initial weights. During the transient every swap looks easier
// than at equilibrium (deltaE scales with s), so a free top widens.
type relaxingGaussianKernel struct {
	Relax float64
	Rungs int
	calls *int
}

func (relaxingGaussianKernel) Name() string                          { return "relaxing" }
func (relaxingGaussianKernel) Init(s *sampler.State, rng *rand.Rand) {}
func (k relaxingGaussianKernel) Step(s *sampler.State, pot sampler.Potential, mb sampler.Minibatch, hp sampler.Hyper, rng *rand.Rand) error {
	temp := hp.Temp
	if temp == 0 {
		temp = 1
	}
	t := float64(*k.calls / k.Rungs)
	*k.calls++
	sd := math.Sqrt(temp * -math.Expm1(-math.Pow(t/k.Relax, 4)))
	for i := range s.Theta {
		s.Theta[i] = sd * rng.NormFloat64()
	}
	s.U = halfSquaredNorm(s.Theta)
	return nil
}

// adaptCase runs a 4-rung PT on a d-dimensional StdGaussian whose replicas
// start at the origin and relax at rate rho, with exchanges every step and
// the ladder adapted during burn-in, then samples for sample steps; it
// returns the state, and the ladder at the end of burn-in.
func adaptCase(t *testing.T, d int, relax float64, adapt *tempering.LadderAdaptation, temps []float64, burn, sample int, seed uint64) (*tempering.PTState, []float64) {
	t.Helper()
	g := sampler.StdGaussian{D: d}
	corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	pt := testDriver(testPT{Kernel: relaxingGaussianKernel{Relax: relax, Rungs: len(temps), calls: new(int)}, Temps: temps, Every: 1, Exchange: &tempering.Exchanger{Batch: 2, Correction: corr},
		Workers: 1, BurnIn: burn, Adapt: adapt})
	st, err := pt.Init([][]float64{make([]float64, d)}, seed)
	if err != nil {
		t.Fatal(err)
	}
	pots := make([]sampler.Potential, len(temps))
	for i := range pots {
		pots[i] = g
	}
	if err := pt.Run(pots, g, st, burn, nil); err != nil {
		t.Fatal(err)
	}
	atBurn := append([]float64(nil), st.Temps...)
	if err := pt.Run(pots, g, st, sample, nil); err != nil {
		t.Fatal(err)
	}
	return st, atBurn
}

// TestAdaptationMeetsTarget tunes a 4-rung ladder on a 50-dimensional
// Gaussian whose replicas start at the origin and stay near it for about
// 750 steps before relaxing to equilibrium by about step 2,100 of a
// 4,094-step burn-in, so that the early tuning rounds see a transient in
// which every swap looks easy. After burn-in the ladder must be fixed and
// reported converged, and the Barker acceptance of every pair, measured
// over 10,000 steps, within 0.1 of the target (free top) or of the other
// pairs (fixed ends). Before the stationarity, desaturation and agreement
// guards (main at c352ed9), the free top widened on the transient and
// accepted 0.09-0.11 per pair after burn-in for a target of 0.3, and
// 0.000-0.001 for 0.2 (ladder 1..20); the fixed-end ladder passed there
// too (and the short burn-in was reported as nothing). Now: 0.24-0.29 and
// 0.14-0.21. With a burn-in of 1,534 steps, over before the transient is, the
// ladder must be reported unconverged with a longer burn-in needed.
func TestAdaptationMeetsTarget(t *testing.T) {
	const d, relax, sample = 50, 1500, 10000
	for _, c := range []struct {
		name  string
		adapt *tempering.LadderAdaptation
		tmax  float64
		burn  int
		ok    bool // expected to converge
	}{
		{"free top 0.3", &tempering.LadderAdaptation{SwapTarget: 0.3}, 1.5, 4094, true},
		{"free top 0.2", &tempering.LadderAdaptation{SwapTarget: 0.2}, 1.5, 4094, true},
		{"fixed ends", &tempering.LadderAdaptation{}, 2, 4094, true},
		{"free top 0.3, short burn-in", &tempering.LadderAdaptation{SwapTarget: 0.3}, 1.5, 1534, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 2; seed++ {
				temps, _ := tempering.GeometricLadder(4, c.tmax)
				st, atBurn := adaptCase(t, d, relax, c.adapt, temps, c.burn, sample, seed)
				acc := make([]float64, 3)
				lo, hi := 1.0, 0.0
				for p := range acc {
					acc[p] = st.Stats.WindowAcceptance(p)
					lo, hi = math.Min(lo, acc[p]), math.Max(hi, acc[p])
				}
				tu := st.Tuning
				t.Logf("seed %d: ladder %.3f, acceptance after burn-in %.3f, %d rounds (%d spoiled), converged %v (needs burn-in %d)",
					seed, st.Temps, acc, len(tu.Rounds), tu.Restarts, tu.Converged, tu.NeededBurnIn)
				for _, r := range tu.Rounds[max(0, len(tu.Rounds)-4):] {
					t.Logf("  round %d..%d: T %.3f, rejection %.2f (predicted %.2f), agrees %v; %s%s", r.Start, r.Step, r.Temps, r.Reject, r.Predicted, r.Agrees, r.Spoiled, r.Err)
				}
				for j := range atBurn {
					if atBurn[j] != st.Temps[j] {
						t.Fatalf("ladder changed after burn-in: %v -> %v", atBurn, st.Temps)
					}
				}
				if last := tu.Rounds[len(tu.Rounds)-1]; tu.NextRound != 0 || last.Step != c.burn || !tu.Judged {
					t.Fatalf("tuning rounds end at %d (next at %d), want exactly at burn-in %d", last.Step, tu.NextRound, c.burn)
				}
				if !c.ok {
					if tu.Converged || tu.NeededBurnIn <= c.burn {
						t.Errorf("seed %d: a burn-in of %d ended in the transient, but the ladder is reported converged %v (needs burn-in %d)", seed, c.burn, tu.Converged, tu.NeededBurnIn)
					}
					continue
				}
				if !tu.Converged || tu.NeededBurnIn != 0 {
					t.Errorf("seed %d: tuning did not converge by step %d (would need %d)", seed, c.burn, tu.NeededBurnIn)
				}
				if c.adapt.SwapTarget > 0 {
					for p, a := range acc {
						if math.Abs(a-c.adapt.SwapTarget) > 0.1 {
							t.Errorf("seed %d: pair %d accepts %.3f after burn-in, target %.2f", seed, p+1, a, c.adapt.SwapTarget)
						}
					}
				} else if hi-lo > 0.1 {
					t.Errorf("seed %d: pair acceptances %.3f after burn-in range over more than 0.1", seed, acc)
				}
			}
		})
	}
}

// TestAutoRungs measures the barrier of a d-dimensional standard Gaussian
// tempered from T = 10 to 1 with a pilot of 5 rungs whose pairs saturate
// (Lambda = sqrt(d/(2 pi)) ln 10 is 9.2 for d = 100: about 2.3 per pair, where
// a pair's rejection stops at 1), and chooses the rungs from it: within 20%
// of 2 Lambda. (Adding up rejections alone would give Lambda <= 4 and about
// 8 rungs for d = 100.)
func TestAutoRungs(t *testing.T) {
	for _, d := range []int{20, 100, 400} {
		g := sampler.StdGaussian{D: d}
		temps, _ := tempering.GeometricLadder(5, 10)
		corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
		pt := testDriver(testPT{Kernel: exactGaussianKernel{}, Temps: temps, Every: 1, Exchange: &tempering.Exchanger{Batch: 2, Correction: corr},
			Workers: 1, BurnIn: 2046, Adapt: &tempering.LadderAdaptation{}})
		st, err := pt.Init([][]float64{make([]float64, d)}, 3)
		if err != nil {
			t.Fatal(err)
		}
		pots := make([]sampler.Potential, len(temps))
		for i := range pots {
			pots[i] = g
		}
		if err := pt.Run(pots, g, st, pt.BurnIn, nil); err != nil {
			t.Fatal(err)
		}
		lambda, ok := st.TunedBarrier()
		if !ok {
			t.Fatalf("d %d: no stationary tuning round", d)
		}
		r, why, err := tempering.RungsFor(lambda, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		want := 2 * math.Sqrt(float64(d)/(2*math.Pi)) * math.Log(10)
		t.Logf("d %d: %s (exact 2 Lambda %.1f)", d, why, want)
		if math.Abs(float64(r)-want) > 0.2*want {
			t.Errorf("d %d: chose %d rungs, 2 Lambda = %.1f: more than 20%% off", d, r, want)
		}
	}
	// with a swap target: Lambda / r(A) + 1, capped
	rej, _ := tempering.BarkerToMetropolisRejection(0.3)
	for _, c := range []struct {
		lambda float64
		maxR   int
		want   int
	}{{3 * rej, 16, 4}, {3*rej + 0.01, 16, 5}, {100, 16, 16}, {0, 16, 3}} {
		if r, _, err := tempering.RungsFor(c.lambda, 0.3, c.maxR); err != nil || r != c.want {
			t.Errorf("RungsFor(%v, 0.3, %d) = %d, %v; want %d", c.lambda, c.maxR, r, err, c.want)
		}
	}
	if _, _, err := tempering.RungsFor(1, 0, 2); err == nil {
		t.Error("a cap of 2 rungs accepted")
	}
}
