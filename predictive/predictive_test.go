package predictive

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// tinyRun trains a 16-8-3 run of chains chains on synthetic images into a
// new directory and returns it with held-out images of the same classes.
func tinyRun(t testing.TB, chains int, dtype string) (string, *datasets.Dataset) {
	t.Helper()
	return tinyModelRun(t, chains, dtype, "")
}

// tinyModelRun is tinyRun of a registered model (4x4 images; "": the MLP).
func tinyModelRun(t testing.TB, chains int, dtype, model string) (string, *datasets.Dataset) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	all, err := datasets.SyntheticImages(400, 16, 3, rng)
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int, 400)
	for i := range idx {
		idx[i] = i
	}
	data, test := all.Subset(idx[:300]), all.Subset(idx[300:])
	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Validation, cfg.Chains, cfg.DType = "16-8-3", 0, chains, dtype
	if model != "" {
		cfg.Arch, cfg.Model = "", model
	}
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch, cfg.LR = 300, 100, 20, 32, 0.5
	dir := filepath.Join(t.TempDir(), "run")
	run, err := train.NewChains(dir, cfg, true, runspec.DefaultSetup().WithTrain(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, test
}

// evalProbs is what eval computes: every sample of the pooled chains added
// to an evaluate.Ensemble on data.
func evalProbs(t *testing.T, run string, data *datasets.Dataset) ([]float64, *evaluate.Ensemble) {
	t.Helper()
	pool, _, err := rundir.PoolDirs([]string{run})
	if err != nil {
		t.Fatal(err)
	}
	var ens *evaluate.Ensemble
	for _, s := range pool {
		cfg, model, err := evaluate.RunModel(runspec.DefaultSetup(), s.Dir, data)
		if err != nil {
			t.Fatal(err)
		}
		if ens == nil {
			if ens, err = evaluate.NewModelEnsembleOn(cfg.RunEngine(model), model, data); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := rundir.ScanSamples(filepath.Join(s.Dir, rundir.SamplesFile), false, func(_ int, theta []float64) error { return ens.Add(theta) }); err != nil {
			t.Fatal(err)
		}
	}
	return ens.Probs(), ens
}

// TestPredictIsEvalEnsemble: Predict's probabilities, entropy and mutual
// information are evaluate's Ensemble's on the same images, bit for bit,
// whether they come in one call (eval's batch) or one by one through the
// Batcher's merged passes of other sizes (the default pinned arithmetic's
// products do not depend on the batch), for float32 and float64 samples
// and a run of two chains; and
// eval's accuracy and NLL are the Score of Predict's probabilities.
func TestPredictIsEvalEnsemble(t *testing.T) {
	for _, c := range []struct {
		dtype  string
		chains int
	}{{"float32", 1}, {"float64", 1}, {"float32", 2}} {
		t.Run(c.dtype+"/"+string(rune('0'+c.chains)), func(t *testing.T) {
			run, test := tinyRun(t, c.chains, c.dtype)
			post, err := Load(run)
			if err != nil {
				t.Fatal(err)
			}
			want, ens := evalProbs(t, run, test)
			if post.Samples() != ens.Count || post.Samples() == 0 {
				t.Fatalf("%d samples, eval's ensemble has %d", post.Samples(), ens.Count)
			}
			all, err := post.PredictData(test)
			if err != nil {
				t.Fatal(err)
			}
			b := NewBatcher(post, BatcherOptions{MaxImages: 64})
			defer b.Close()
			one := make([]Prediction, test.N)
			var wg sync.WaitGroup
			errs := make([]error, test.N)
			for i := 0; i < test.N; i++ {
				wg.Add(1)
				go func(i int) { // concurrent single-image calls, merged by the batcher
					defer wg.Done()
					p, err := b.Predict(context.Background(), test.Row(i), 1)
					if err == nil {
						one[i] = p[0]
					}
					errs[i] = err
				}(i)
			}
			wg.Wait()
			k := test.Classes
			for i := 0; i < test.N; i++ {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				h, mi := ens.Uncertainty(i)
				// one call of the same images as eval's batch: bit for bit
				for cl := 0; cl < k; cl++ {
					if got := all[i].Probabilities[cl]; got != want[i*k+cl] {
						t.Fatalf("image %d class %d: %v, eval's ensemble %v", i, cl, got, want[i*k+cl])
					}
				}
				if all[i].Entropy != h || all[i].MutualInformation != mi {
					t.Fatalf("image %d: entropy %v mi %v, eval's %v %v", i, all[i].Entropy, all[i].MutualInformation, h, mi)
				}
				// merged passes of other sizes: the pinned arithmetic (the
				// default) sums each product element in k order whatever
				// the batch, so bit for bit too
				for cl := 0; cl < k; cl++ {
					if got := one[i].Probabilities[cl]; got != want[i*k+cl] {
						t.Fatalf("image %d class %d through the batcher: %v, eval's ensemble %v", i, cl, got, want[i*k+cl])
					}
				}
				if one[i].Entropy != h || one[i].MutualInformation != mi {
					t.Fatalf("image %d through the batcher: entropy %v mi %v, eval's %v %v", i, one[i].Entropy, one[i].MutualInformation, h, mi)
				}
			}
			rep, err := evaluate.Evaluate(runspec.DefaultSetup(), []string{run}, "", test)
			if err != nil {
				t.Fatal(err)
			}
			var probs []float64
			for _, p := range all {
				probs = append(probs, p.Probabilities...)
			}
			m, err := evaluate.Score(probs, test.Labels, k)
			if err != nil {
				t.Fatal(err)
			}
			if m.Accuracy != rep.Ensemble.Accuracy || m.NLL != rep.Ensemble.NLL {
				t.Fatalf("accuracy %v NLL %v, eval's %v %v", m.Accuracy, m.NLL, rep.Ensemble.Accuracy, rep.Ensemble.NLL)
			}
		})
	}
}

// TestPredictGraphModel: a registered CNN (a compiled graph, its batches
// split over the cores) predicts eval's probabilities too, for images
// without labels, in one call and through merged passes.
func TestPredictGraphModel(t *testing.T) {
	nn.Models["predictive-test-cnn"] = func(p nn.PriorConfig) (nn.Model, error) {
		return nn.ConvNet{Height: 4, Width: 4, Channels: 1, Conv: []int{2}, Kernel: 3, Dense: []int{6}, Classes: 3, Prior: p}.Model("predictive-test-cnn")
	}
	defer delete(nn.Models, "predictive-test-cnn")
	run, test := tinyModelRun(t, 1, "float32", "predictive-test-cnn")
	post, err := Load(run)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := evalProbs(t, run, test)
	unlabelled := &datasets.Dataset{N: test.N, D: test.D, X: test.X}
	all, err := post.PredictData(unlabelled)
	if err != nil {
		t.Fatal(err)
	}
	// Images of another shape, of as many pixels, are refused (an
	// *InputError naming both shapes); of the network's shape, taken.
	for _, tc := range []struct {
		dims []int
		want string
	}{{[]int{2, 8}, "images are 2x8"}, {[]int{1, 16}, "images are 1x16"}, {[]int{4, 4}, ""}, {[]int{1, 4, 4}, ""}} {
		shaped := &datasets.Dataset{N: test.N, D: test.D, X: test.X, Image: tc.dims}
		_, err := post.PredictData(shaped)
		var ie *InputError
		if tc.want == "" && err != nil {
			t.Errorf("images %v: %v", tc.dims, err)
		} else if tc.want != "" && (!errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "takes 4x4 images")) {
			t.Errorf("images %v: error %v, want an *InputError saying %q and the network's 4x4", tc.dims, err, tc.want)
		}
	}
	b := NewBatcher(post, BatcherOptions{MaxImages: 7})
	defer b.Close()
	var wg sync.WaitGroup
	one := make([][]Prediction, test.N)
	for i := 0; i < test.N; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			one[i], _ = b.Predict(context.Background(), test.Row(i), 1)
		}(i)
	}
	wg.Wait()
	k := test.Classes
	for i := 0; i < test.N; i++ {
		if len(one[i]) != 1 {
			t.Fatalf("image %d: no prediction through the batcher", i)
		}
		for c := 0; c < k; c++ {
			if all[i].Probabilities[c] != want[i*k+c] || math.Abs(one[i][0].Probabilities[c]-want[i*k+c]) > 1e-6 {
				t.Fatalf("image %d class %d: %v (one call), %v (batcher), eval's %v", i, c, all[i].Probabilities[c], one[i][0].Probabilities[c], want[i*k+c])
			}
		}
	}
}

// TestLoadRefuses: a run a train still holds, a run whose checkpoint
// fails its checksum and one with a corrupt sample record are refused with
// errors that say so; a Window.From past the last sample is refused too.
func TestLoadRefuses(t *testing.T) {
	run, _ := tinyRun(t, 1, "float32")
	l, err := rundir.Acquire(run)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(run)
	if !errors.Is(err, rundir.ErrLocked) || !strings.Contains(err.Error(), "still being written") {
		t.Errorf("locked run: %v", err)
	}
	if _, err := LoadWith(runspec.DefaultSetup(), Options{AllowWriting: true}, run); err != nil {
		t.Errorf("locked run with AllowWriting: %v", err)
	}
	l.Release()
	if _, err := Load(run); err != nil {
		t.Fatalf("released run: %v", err)
	}
	if _, err := LoadWith(runspec.DefaultSetup(), Options{Window: rundir.Window{From: 1 << 20}}, run); err == nil || !strings.Contains(err.Error(), "no samples at step") {
		t.Errorf("Window.From past the end: %v", err)
	}

	ck := copyRun(t, run)
	flipByte(t, filepath.Join(ck, rundir.CheckpointFile), 0.5)
	if _, err := Load(ck); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupt checkpoint: %v", err)
	}
	sm := copyRun(t, run)
	flipByte(t, filepath.Join(sm, rundir.SamplesFile), 0.5)
	if _, err := Load(sm); !errors.Is(err, rundir.ErrCorruptSamples) {
		t.Errorf("corrupt sample record: %v", err)
	}
	post, err := LoadWith(runspec.DefaultSetup(), Options{SkipCorrupt: true}, sm)
	if err != nil || post.Skipped != 1 {
		t.Errorf("corrupt sample record skipped: %v, %d skipped", err, post.Skipped)
	}
}

func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func flipByte(t *testing.T, path string, at float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[int(at*float64(len(b)))] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBadImages: images of the wrong size or with values outside [0, 1]
// (NaN, infinities) and empty batches are InputErrors naming the image.
func TestBadImages(t *testing.T) {
	run, test := tinyRun(t, 1, "float32")
	post, err := Load(run)
	if err != nil {
		t.Fatal(err)
	}
	good := test.Row(0)
	with := func(j int, v float32) []float32 {
		im := append([]float32(nil), good...)
		im[j] = v
		return im
	}
	for _, c := range []struct {
		name   string
		images [][]float32
		want   string
	}{
		{"empty batch", nil, "no images"},
		{"short image", [][]float32{good, good[:15]}, "image 1 has 15 values"},
		{"long image", [][]float32{append(append([]float32(nil), good...), 0)}, "image 0 has 17 values"},
		{"above 1", [][]float32{good, with(3, 1.5)}, "image 1, value 3: 1.5 is outside [0, 1]"},
		{"negative", [][]float32{with(0, -0.1)}, "image 0, value 0: -0.1 is outside"},
		{"NaN", [][]float32{with(5, float32(math.NaN()))}, "value 5: NaN is outside"},
		{"infinity", [][]float32{with(2, float32(math.Inf(1)))}, "value 2: +Inf is outside"},
	} {
		_, err := post.Predict(c.images)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an InputError with %q", c.name, err, c.want)
		}
	}
}

// TestAbstention: the threshold is the (1 - rate) quantile of the mutual
// information on the images it is fixed on, at most rate of them abstain,
// and Predict flags exactly the images above it.
func TestAbstention(t *testing.T) {
	run, test := tinyRun(t, 1, "float32")
	post, err := Load(run)
	if err != nil {
		t.Fatal(err)
	}
	a, preds, err := post.FixAbstention(test, 0.1, "held-out images")
	if err != nil {
		t.Fatal(err)
	}
	above := 0
	for _, p := range preds {
		if p.MutualInformation > a.Threshold {
			above++
		}
		if p.Abstain != (p.MutualInformation > a.Threshold) {
			t.Fatalf("abstain %v for mutual information %v, threshold %v", p.Abstain, p.MutualInformation, a.Threshold)
		}
	}
	if above != a.Abstained || a.Abstained > 10 || a.Abstained < 9 { // 100 images, rate 0.1, no ties expected
		t.Fatalf("%d of 100 abstain (recorded %d), want 9 or 10 at rate 0.1", above, a.Abstained)
	}
	again, err := post.PredictData(test)
	if err != nil {
		t.Fatal(err)
	}
	for i := range again {
		if again[i].Abstain != preds[i].Abstain || !strings.Contains(again[i].Reason, "threshold") {
			t.Fatalf("image %d: Predict after the rule: abstain %v (%s), FixAbstention's %v", i, again[i].Abstain, again[i].Reason, preds[i].Abstain)
		}
	}
	if post.Info().Abstention != a || !strings.Contains(a.Method, "0.9 quantile") {
		t.Errorf("Info's abstention %+v", post.Info().Abstention)
	}
	if _, _, err := post.FixAbstention(test, 0, "x"); err == nil {
		t.Error("rate 0 accepted")
	}
}

func TestQuantile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 6, 8, 7, 10, 9}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.1, 1}, {0.15, 2}, {0.5, 5}, {0.9, 9}, {0.95, 10}, {1, 10}} {
		if got := Quantile(v, c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if v[0] != 5 {
		t.Error("Quantile sorted its argument")
	}
	for _, empty := range [][]float64{nil, {}} {
		if got := Quantile(empty, 0.9); !math.IsNaN(got) {
			t.Errorf("Quantile(%v, 0.9) = %v, want NaN", empty, got)
		}
	}
}
