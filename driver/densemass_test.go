package driver

import (
	"math"
	"reflect"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// corrGauss2 returns the covariance of two coordinates of sds sd0, sd1 and
// correlation rho, its eigenvalues (largest first) and unit eigenvectors.
func corrGauss2(sd0, sd1, rho float64) (cov, lam []float64, vec [][]float64) {
	cov = []float64{sd0 * sd0, rho * sd0 * sd1, rho * sd0 * sd1, sd1 * sd1}
	tr, det := cov[0]+cov[3], cov[0]*cov[3]-cov[1]*cov[1]
	lmax := tr/2 + math.Sqrt(tr*tr/4-det)
	v := []float64{cov[1], lmax - cov[0]}
	n := math.Hypot(v[0], v[1])
	v[0], v[1] = v[0]/n, v[1]/n
	return cov, []float64{lmax, det / lmax}, [][]float64{v, {-v[1], v[0]}}
}

// TestDenseMassEstimated runs the burn-in's estimate of a dense mass
// (adapt.PrecondDense) on earnings' shape: a Gaussian of correlation
// 0.998 and sds 1 and 100, its gradient noise shaped as a minibatch's
// (covariance proportional to the precision, half the injected noise per
// direction once the dense mass is set), SGNHT at omega h = 0.2 in the
// stiffest direction of unit mass, both masses scaled to the stiffest,
// from a fixed seed. The dense chain's sds along both eigen-directions of
// the covariance are within 3%; the diagonal (variance) mass's, at the
// same step and steps, are not within 10%: its wide direction moves 700
// times slower than its stiff one, which gets all the gradient noise.
func TestDenseMassEstimated(t *testing.T) {
	cov, lam, vec := corrGauss2(1, 100, 0.998)
	h := 0.2 * math.Sqrt(lam[1])
	pot, err := sampler.NewCorrelatedGaussian([]float64{3, -50}, cov, 0)
	if err != nil {
		t.Fatal(err)
	}
	pot.NoiseVar = 0.5 * sampler.InjectedVariance(0.1/h, h) / (h * h / lam[1])
	for _, tc := range []struct {
		p     adapt.Preconditioner
		right bool
	}{{adapt.PrecondDense, true}, {adapt.PrecondVariance, false}} {
		const burn, steps = 100000, 500000
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h}, Temps: []float64{1}, Workers: 1,
			BurnIn: burn, Precondition: tc.p, MassScale: adapt.MassScaleStiffest, HealthWindow: 10000})
		st, err := pt.Init([][]float64{{3, -50}}, 5)
		if err != nil {
			t.Fatal(err)
		}
		var sum, sq [2]float64
		err = pt.Run([]sampler.Potential{pot}, nil, st, burn+steps, func(s *tempering.PTState) error {
			if s.Steps <= burn {
				return nil
			}
			for j, v := range vec {
				x := v[0]*(s.Rungs[0].Theta[0]-3) + v[1]*(s.Rungs[0].Theta[1]+50)
				sum[j] += x
				sq[j] += x * x
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var off [2]float64
		for j := range off {
			m := sum[j] / steps
			off[j] = math.Sqrt((sq[j]/steps-m*m)/lam[j]) - 1
		}
		worst := math.Max(math.Abs(off[0]), math.Abs(off[1]))
		t.Logf("%v mass: sds along the wide and stiff directions %+.1f%% %+.1f%%", tc.p, 100*off[0], 100*off[1])
		if tc.right && worst > 0.03 {
			t.Errorf("%v mass: sds %+.1f%% %+.1f%%, want within 3%%", tc.p, 100*off[0], 100*off[1])
		}
		if !tc.right && worst < 0.10 {
			t.Errorf("%v mass: sds %+.1f%% %+.1f%%: the test no longer tells the masses apart", tc.p, 100*off[0], 100*off[1])
		}
	}
}

// TestMassMatrixResume stops a chain with a dense and one with a
// low-rank mass, once inside a burn-in window (estimates running) and once
// after the masses froze, writes the snapshot down (gob, as a checkpoint
// does), restores it, and checks the rest of the run is the same bit for
// bit as the uninterrupted chain's, the mass included.
func TestMassMatrixResume(t *testing.T) {
	const d = 5
	cov := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			cov[i*d+j] = math.Pow(0.9, math.Abs(float64(i-j))) * float64((i+1)*(j+1))
		}
	}
	pot, err := sampler.NewCorrelatedGaussian(make([]float64, d), cov, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []adapt.Preconditioner{adapt.PrecondDense, adapt.PrecondLowRank} {
		run := func(breakAt int) *tempering.PTState {
			pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.05, Diffusion: 2}, Temps: []float64{1}, Workers: 1,
				BurnIn: 4000, Precondition: p, MassRank: 2, HealthWindow: 500})
			st, err := pt.Init([][]float64{make([]float64, d)}, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 6000; i++ {
				if i == breakAt {
					var err error
					if st, err = pt.Restore(checkpointed(t, st, pt.Kernel), d); err != nil {
						t.Fatal(err)
					}
				}
				if err := pt.Step([]sampler.Potential{pot}, nil, st); err != nil {
					t.Fatal(err)
				}
			}
			return st
		}
		want := run(-1)
		if _, ok := want.Rungs[0].MassMatrix().(sampler.DiagonalMass); ok || want.Rungs[0].MassMatrix() == nil {
			t.Fatalf("%v: mass %T after burn-in", p, want.Rungs[0].MassMatrix())
		}
		for _, at := range []int{1000, 5000} {
			got := run(at)
			sameChains(t, want, got, "after a resume")
			for j := range want.Rungs {
				if !reflect.DeepEqual(got.Rungs[j].MassMatrix(), want.Rungs[j].MassMatrix()) {
					t.Errorf("%v, break at %d: rung %d's mass differs", p, at, j)
				}
			}
		}
	}
}
