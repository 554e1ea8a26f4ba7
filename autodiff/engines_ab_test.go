package autodiff

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/autodiff/autodifftest"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// TestMLPEnginesAB (MLP_AB=pairs) times the hand-written plan's and the
// compiled graph's streamed gradient of make run's MLP (784-400-400-10,
// ReLU, float32, batch 128) interleaved in one process, ABBA, so that the
// machine's drift falls on both alike, and prints the ratio of the totals
// and the median of the pairs' ratios (compiled / plan).
func TestMLPEnginesAB(t *testing.T) {
	pairs, _ := strconv.Atoi(os.Getenv("MLP_AB"))
	if pairs <= 0 {
		t.Skip("MLP_AB unset")
	}
	spec := nn.Spec{Sizes: []int{784, 400, 400, 10}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	model, err := spec.Model()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data, err := datasets.SyntheticImages(10000, 784, 10, rng)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	plan, err := autodifftest.NewPlan(spec, 128, Float32)
	if err != nil {
		t.Fatal(err)
	}
	comp, err := NewFor(EngineCompiled, model, 128, Float32)
	if err != nil {
		t.Fatal(err)
	}
	evs := []streamer{plan, comp.(streamer)}
	var sink float64
	consume := func(lo int, g []float64) { sink += g[0] }
	step := func(e int, idx []int) time.Duration {
		start := time.Now()
		if _, err := evs[e].EvalStream(theta, data, idx, 10000.0/128, consume); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	for i := 0; i < 20; i++ { // warm up
		step(i%2, rng.Perm(data.N)[:128])
	}
	fixed := rng.Perm(data.N)[:128]
	for e, name := range []string{"plan", "compiled"} {
		if a := testing.AllocsPerRun(10, func() { step(e, fixed) }); a != 0 {
			t.Errorf("%s: %v allocations a streamed gradient", name, a)
		}
	}
	var tot [2]time.Duration
	var ratios []float64
	for i := 0; i < pairs; i++ {
		idx := rng.Perm(data.N)[:128]
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		var d [2]time.Duration
		for _, e := range order {
			d[e] = step(e, idx)
		}
		tot[0] += d[0]
		tot[1] += d[1]
		ratios = append(ratios, float64(d[1])/float64(d[0]))
	}
	slices.Sort(ratios)
	t.Logf("%d pairs: plan %.3f ms, compiled %.3f ms a streamed gradient; compiled/plan: totals %.4f, median of pairs %.4f (sink %g)",
		pairs, float64(tot[0].Microseconds())/1e3/float64(pairs), float64(tot[1].Microseconds())/1e3/float64(pairs),
		float64(tot[1])/float64(tot[0]), ratios[len(ratios)/2], sink)
}
