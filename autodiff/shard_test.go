package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/nn"
)

// TestShardedMatchesGraph checks that splitting a minibatch over shards, on
// the VM or compiled, gives the single VM graph's potential, gradient, per-example log-likelihoods
// and logits (float64, to rounding), for full, short and tiny batches (some
// shards then get no example), with Gaussian priors and Student-t ones (whose
// prior the sharded evaluator adds in separate passes), and that the same
// call twice is bit-identical.
func TestShardedMatchesGraph(t *testing.T) {
	for _, df := range []float64{0, 5} {
		t.Run(fmt.Sprintf("df%g", df), func(t *testing.T) { shardedMatchesGraph(t, df) })
	}
}

func shardedMatchesGraph(t *testing.T, df float64) {
	rng := rand.New(rand.NewPCG(11, 12))
	model, err := smallCNN(df).Model("small-cnn")
	if err != nil {
		t.Fatal(err)
	}
	data := toyData(nn.Categorical, 30, 36, 3, rng)
	theta := make([]float64, model.NumParams())
	model.Layout.Init(theta, rng)
	const batch = 10
	ref, err := NewModelEvaluator(model, batch, Float64)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		engine    Engine
		shards, n int
	}{{EngineGraph, 1, 10}, {EngineGraph, 2, 10}, {EngineGraph, 3, 10}, {EngineGraph, 4, 7}, {EngineGraph, 3, 2}, {EngineGraph, 5, 1},
		{EngineCompiled, 1, 10}, {EngineCompiled, 3, 10}, {EngineCompiled, 4, 7}, {EngineCompiled, 5, 1}} {
		t.Run(fmt.Sprintf("%s_shards%d_n%d", tc.engine, tc.shards, tc.n), func(t *testing.T) {
			sh, err := NewShardedFor(tc.engine, model, batch, Float64, tc.shards)
			if err != nil {
				t.Fatal(err)
			}
			idx := rng.Perm(data.N)[:tc.n]
			g0, g1, g2 := make([]float64, len(theta)), make([]float64, len(theta)), make([]float64, len(theta))
			l0, l1 := make([]float64, tc.n), make([]float64, tc.n)
			u0, err := ref.Eval(theta, data, idx, 3, g0, l0)
			if err != nil {
				t.Fatal(err)
			}
			u1, err := sh.Eval(theta, data, idx, 3, g1, l1)
			if err != nil {
				t.Fatal(err)
			}
			u2, _ := sh.Eval(theta, data, idx, 3, g2, nil)
			if u1 != u2 {
				t.Fatalf("repeated sharded U %v then %v", u1, u2)
			}
			if math.Abs(u1-u0) > 1e-10*math.Abs(u0) {
				t.Fatalf("sharded U %v, single graph %v", u1, u0)
			}
			for i := range g0 {
				if g1[i] != g2[i] {
					t.Fatalf("repeated sharded gradient %d: %v then %v", i, g1[i], g2[i])
				}
				if math.Abs(g1[i]-g0[i]) > 1e-9*(1+math.Abs(g0[i])) {
					t.Fatalf("gradient %d: sharded %v, single graph %v", i, g1[i], g0[i])
				}
			}
			for i := range l0 {
				if math.Abs(l1[i]-l0[i]) > 1e-12*(1+math.Abs(l0[i])) {
					t.Fatalf("log-likelihood %d: sharded %v, single graph %v", i, l1[i], l0[i])
				}
			}
			fw, err := NewShardedForwardFor(tc.engine, model, batch, Float64, tc.shards)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fw.Eval(theta, data, idx, 3, g1, nil); err == nil {
				t.Fatal("forward-only sharded evaluator gave a gradient")
			}
			lo0, lo1 := make([]float64, tc.n*3), make([]float64, tc.n*3)
			if err := ref.Logits(theta, data, idx, lo0); err != nil {
				t.Fatal(err)
			}
			if err := fw.Logits(theta, data, idx, lo1); err != nil {
				t.Fatal(err)
			}
			for i := range lo0 {
				if math.Abs(lo1[i]-lo0[i]) > 1e-12*(1+math.Abs(lo0[i])) {
					t.Fatalf("logit %d: sharded %v, single graph %v", i, lo1[i], lo0[i])
				}
			}
		})
	}
	for _, shards := range []int{0, -1, batch + 1} {
		if _, err := NewShardedEvaluator(model, batch, Float64, shards); err == nil {
			t.Errorf("%d shards of a batch of %d accepted", shards, batch)
		}
	}
}
