package driver

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// exactTerms is a 1-d Gaussian N(0, 1) whose energy terms are exact (a data
// set of one example), optionally with the energy negated: negating U
// negates deltaE, which is how TestExchangeSign flips the test's sign.
type exactTerms struct {
	negate bool
}

func (e exactTerms) Dim() int { return 1 }

func (e exactTerms) Size() int { return 1 }

func (e exactTerms) Gradient(theta, grad []float64, _ sampler.Minibatch, rng *rand.Rand) (float64, error) {
	grad[0] = theta[0]
	return 0.5 * theta[0] * theta[0], nil
}

func (e exactTerms) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	for t, th := range thetas {
		u := 0.5 * th[0] * th[0]
		if e.negate {
			u = -u
		}
		for i := 0; i < to-from; i++ {
			out[t][i] = u
		}
	}
	return nil
}

// TestExchangeSign runs a 2-rung PT system (T = 1 and 6) with exact energies
// and rare, weak within-rung moves (SGLD with a tiny step), so the marginals
// are set mostly by the exchanges. With deltaE = (1/Tj - 1/Tk)(Uj - Uk) both
// tempered marginals N(0, 1) and N(0, 6) come out right; with the sign
// flipped (the paper's printed formula) they do not.
func TestExchangeSign(t *testing.T) {
	corr, err := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, negate := range []bool{false, true} {
		pt := testDriver(testPT{Record: tempering.StandardRecorders(), Kernel: sampler.SGLD{StepSize: 0.02}, Temps: []float64{1, 6}, Every: 1, Exchange: &tempering.Exchanger{Batch: 1, Correction: corr}, Workers: 1})
		st, err := pt.Init([][]float64{{0}}, 9)
		if err != nil {
			t.Fatal(err)
		}
		vc, vh := twoRungVariances(t, pt, st, exactTerms{negate: negate})
		ok := math.Abs(vc-1) < 0.05 && math.Abs(vh/6-1) < 0.05
		t.Logf("negated deltaE %v: variances %.3f (want 1), %.3f (want 6), acceptance %.3f, exact %d",
			negate, vc, vh, st.Stats.AcceptanceRate(0), st.Stats.Exact)
		if ok == negate {
			t.Errorf("negated deltaE %v: marginals right = %v", negate, ok)
		}
	}
}

// twoRungVariances runs a 2-rung PT system on the 1-d potential pot for
// 300,000 steps and returns the variances of the cold and hot rungs'
// positions after the first 1,000.
func twoRungVariances(t *testing.T, pt *Driver, st *tempering.PTState, pot interface {
	sampler.Potential
	sampler.TermPotential
}) (cold, hot float64) {
	t.Helper()
	var c, h [][]float64
	err := pt.Run([]sampler.Potential{pot, pot}, pot, st, 300000, func(s *tempering.PTState) error {
		if s.Steps > 1000 {
			c = append(c, []float64{s.Rungs[0].Theta[0]})
			h = append(h, []float64{s.Rungs[1].Theta[0]})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, vc := moments(c)
	_, vh := moments(h)
	return vc[0], vh[0]
}

// TestPTReproducible checks that a run is identical bit for bit whatever the
// number of workers, and that streams restored from their saved state
// continue identically.
func TestPTReproducible(t *testing.T) {
	run := func(workers int) *tempering.PTState {
		m := sampler.Gauss1D4()
		temps, _ := tempering.GeometricLadder(6, 10)
		corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
		pt := testDriver(testPT{Record: tempering.StandardRecorders(), Kernel: sampler.SGNHT{StepSize: 0.1, Diffusion: 1}, Temps: temps, Every: 3, Exchange: &tempering.Exchanger{Batch: 16, Correction: corr}, Workers: workers})
		st, _ := pt.Init([][]float64{m.Start()}, 5)
		pots := make([]sampler.Potential, 6)
		for i := range pots {
			pots[i] = m
		}
		if err := pt.Run(pots, m, st, 3000, nil); err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := run(1), run(4)
	sameChains(t, a, b, "between 1 and 4 workers")
	if !reflect.DeepEqual(a.Stats, b.Stats) || !slices.Equal(a.Temps, b.Temps) || a.Steps != b.Steps || a.Rounds != b.Rounds {
		t.Fatalf("exchange statistics or ladder differ between 1 and 4 workers:\n%+v\n%+v", a.Stats, b.Stats)
	}
	if a.Stats.Accepted[0] == 0 {
		t.Fatal("no exchange accepted: the comparison does not cover exchanges")
	}
	s := sampler.NewStream(1, 2)
	s.Float64()
	saved, _ := s.MarshalBinary()
	want := s.Float64()
	var r sampler.Stream
	if err := r.UnmarshalBinary(saved); err != nil || r.Float64() != want {
		t.Fatal("restored stream diverges")
	}
}

// gaussTerms is a high-dimensional standard Gaussian with exchange terms
// U(theta) + N(0, 1) noise per term, for allocation checks.
type gaussTerms struct{ d int }

func (g gaussTerms) Dim() int { return g.d }

func (g gaussTerms) Size() int { return 0 }

func (g gaussTerms) Gradient(theta, grad []float64, _ sampler.Minibatch, rng *rand.Rand) (float64, error) {
	u := 0.0
	for i, v := range theta {
		grad[i] = v
		u += 0.5 * v * v
	}
	return u, nil
}

func (g gaussTerms) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	for t, th := range thetas {
		u := 0.0
		for _, v := range th {
			u += 0.5 * v * v
		}
		for i := 0; i < to-from; i++ {
			out[t][i] = u + rng.NormFloat64()
		}
	}
	return nil
}

// TestPTStepAllocations checks that steady-state PT steps allocate a small,
// constant amount that does not grow with the step count or the dimension:
// no per-step vectors.
func TestPTStepAllocations(t *testing.T) {
	const d = 100000
	g := gaussTerms{d}
	temps, _ := tempering.GeometricLadder(4, 2)
	corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.01, Diffusion: 1}, Temps: temps, Every: 2,
		Exchange: &tempering.Exchanger{Batch: 16, Correction: corr}, Workers: 2})
	st, err := pt.Init([][]float64{make([]float64, d)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	pots := []sampler.Potential{g, g, g, g}
	window := func(steps int) float64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		if err := pt.Run(pots, g, st, steps, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		return float64(b.TotalAlloc-a.TotalAlloc) / float64(steps)
	}
	window(20)
	early := window(100)
	window(1000)
	late := window(100)
	t.Logf("bytes allocated per step: %.0f early, %.0f late (one position is %d bytes)", early, late, 8*d)
	if late > 8*d/100 || early > 8*d/100 {
		t.Errorf("a step allocates %.0f bytes: per-step vectors of dimension %d", max(early, late), d)
	}
	if late > 1.5*early+256 {
		t.Errorf("allocation grows with steps: %.0f bytes per step early, %.0f late", early, late)
	}
}
