package evaluate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/machine"
	"github.com/ptsghmc/ptsghmc/nn"
)

// lenetFixture returns LeNet, n synthetic 28x28 images of 10 classes and
// samples float32 weight samples (small, as trained weights are).
func lenetFixture(t testing.TB, n, samples int) (nn.Model, *datasets.Dataset, [][]float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	data, err := datasets.SyntheticImages(n, 784, 10, rng)
	if err != nil {
		t.Fatal(err)
	}
	model, err := nn.LeNet(nn.PriorConfig{Precision: 1, FanIn: true}).Model("lenet")
	if err != nil {
		t.Fatal(err)
	}
	ws := make([][]float32, samples)
	for s := range ws {
		ws[s] = make([]float32, model.NumParams())
		for i := range ws[s] {
			ws[s][i] = float32(rng.NormFloat64() * 0.05)
		}
	}
	return model, data, ws
}

// TestPooledEnsembleMatchesPredictor: a LeNet ensemble whose logits run on
// the forward pool (every set of a sample in one pass, batches shared out
// to the workers, short ends on smaller compiled batches, float32 weights
// loaded as they are) accumulates the same probabilities, bit for bit, as
// ensembles on the model's predictor (the sharded evaluator eval used
// before the pool), sample by sample and set by set, float32 and float64
// samples alike.
func TestPooledEnsembleMatchesPredictor(t *testing.T) {
	model, data, ws := lenetFixture(t, 237, 3) // 2 full batches of 100 and a short end of 37
	if !autodiff.Poolable(autodiff.EnginePlan, model) {
		t.Fatal("LeNet is not poolable")
	}
	other, err := datasets.SyntheticImages(61, 784, 10, rand.New(rand.NewPCG(9, 10)))
	if err != nil {
		t.Fatal(err)
	}
	pooled, err := NewModelEnsembleOn(autodiff.EnginePlan, model, data)
	if err != nil {
		t.Fatal(err)
	}
	if pooled.pool == nil {
		t.Fatal("a LeNet ensemble is not on a forward pool")
	}
	pooledOther := pooled.sibling(other)
	ref, err := newModelEnsemble(autodiff.EnginePlan, model, data, false)
	if err != nil {
		t.Fatal(err)
	}
	refOther := ref.sibling(other)
	for s, w := range ws {
		if s == 1 { // a float64 sample
			wide := make([]float64, len(w))
			for i, v := range w {
				wide[i] = float64(v)
			}
			if err := AddAll(wide, pooled, pooledOther); err != nil {
				t.Fatal(err)
			}
			if err := ref.Add(wide); err != nil {
				t.Fatal(err)
			}
			if err := refOther.Add(wide); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := AddAllFloat32(w, pooled, pooledOther); err != nil {
				t.Fatal(err)
			}
			if err := ref.AddFloat32(w); err != nil {
				t.Fatal(err)
			}
			if err := refOther.AddFloat32(w); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			name     string
			got, ref *Ensemble
		}{{"test set", pooled, ref}, {"other set", pooledOther, refOther}} {
			if !slices.Equal(c.got.Last, c.ref.Last) || !slices.Equal(c.got.Sum, c.ref.Sum) || !slices.Equal(c.got.Ent, c.ref.Ent) || c.got.Count != c.ref.Count {
				for i := range c.ref.Last {
					if c.got.Last[i] != c.ref.Last[i] {
						t.Fatalf("sample %d, %s: example %d class %d: pooled p %v, predictor's %v", s, c.name, i/10, i%10, c.got.Last[i], c.ref.Last[i])
					}
				}
				t.Fatalf("sample %d, %s: pooled sums differ from the predictor's", s, c.name)
			}
		}
	}
	// an ensemble of its own adds as it does in a group
	alone, err := NewModelEnsembleOn(autodiff.EnginePlan, model, other)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := alone.AddFloat32(w); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(alone.Sum, refOther.Sum) || !slices.Equal(alone.Ent, refOther.Ent) {
		t.Fatal("a pooled ensemble alone differs from the predictor's")
	}
	if err := AddAllFloat32(ws[0][1:], pooled, pooledOther); err == nil {
		t.Fatal("a sample of the wrong length was added")
	}
	// ensembles of two pools in one call: each added by a pass of its own
	a, err := NewModelEnsembleOn(autodiff.EnginePlan, model, data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewModelEnsembleOn(autodiff.EnginePlan, model, other)
	if err != nil {
		t.Fatal(err)
	}
	wide := make([]float64, len(ws[1]))
	for s, w := range ws {
		if s == 1 {
			for i, v := range w {
				wide[i] = float64(v)
			}
			err = AddAll(wide, a, b)
		} else {
			err = AddAllFloat32(w, a, b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(a.Sum, ref.Sum) || !slices.Equal(b.Sum, refOther.Sum) || !slices.Equal(b.Ent, refOther.Ent) || a.Count != 3 {
		t.Fatal("ensembles of two pools added together differ from the predictor's")
	}
	// an ensemble given twice is refused: two workers would add to its rows
	for _, err := range []error{AddAll(wide, a, b, a), AddAllFloat32(ws[0], b, b)} {
		if err == nil || !strings.Contains(err.Error(), "given again") {
			t.Errorf("an ensemble given twice: %v", err)
		}
	}
}

// BenchmarkLeNetPass times the predictive pass of LeNet weight samples on
// 1,000 synthetic images, on the forward pool eval and predict now use
// (pool) and on the predictor they used before (predictor: the sharded
// evaluator, batch by batch), and reports the forward passes' GFLOP/s
// (2 multiply-adds of the products and convolutions a second; the
// cpu-GFLOP/s over the process's CPU time, steadier on a shared machine),
// images a second, and the float32 GEMM peak of the process (all cores):
//
//	go test -run XXX -bench LeNetPass -benchtime 5x ./evaluate/
func BenchmarkLeNetPass(b *testing.B) {
	const n = 1000
	model, data, ws := lenetFixture(b, n, 1)
	pool, err := autodiff.NewForwardPool(autodiff.EnginePlan, model, 1, autodiff.Float32, 1)
	if err != nil {
		b.Fatal(err)
	}
	flops := 2 * float64(pool.MACsPerExample()) * n // a pass
	peak := machine.GEMMPeak()
	for _, pooled := range []bool{true, false} {
		name := map[bool]string{true: "pool", false: "predictor"}[pooled]
		b.Run(fmt.Sprintf("path=%s", name), func(b *testing.B) {
			e, err := newModelEnsemble(autodiff.EnginePlan, model, data, pooled)
			if err != nil {
				b.Fatal(err)
			}
			if err := e.AddFloat32(ws[0]); err != nil { // compiles the short batches
				b.Fatal(err)
			}
			cpu := machine.CPUTime()
			start := time.Now()
			for b.Loop() {
				if err := e.AddFloat32(ws[0]); err != nil {
					b.Fatal(err)
				}
			}
			wall, used := time.Since(start).Seconds(), (machine.CPUTime() - cpu).Seconds()
			b.ReportMetric(float64(b.N)*flops/wall/1e9, "GFLOP/s")
			b.ReportMetric(float64(b.N)*flops/used/1e9, "cpu-GFLOP/s")
			b.ReportMetric(float64(b.N)*n/wall, "images/s")
			b.ReportMetric(peak, "gemm-peak-GFLOP/s")
		})
	}
}
