package train

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/autodifftest"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tinyCNN returns the builder of a CNN for the 4x4 images of smallData
// named name, with convolution channels conv.
func tinyCNN(name string, conv int) func(nn.PriorConfig) (nn.Model, error) {
	return func(p nn.PriorConfig) (nn.Model, error) {
		return nn.ConvNet{Height: 4, Width: 4, Channels: 1, Conv: []int{conv}, Kernel: 3, Dense: []int{5}, Classes: 3, Prior: p}.Model(name)
	}
}

// cnnSetup returns the setup of a run on data whose model registry holds
// tinyCNN(name, conv) under name (the process's registry is unchanged).
func cnnSetup(data *datasets.Dataset, name string, conv int) runspec.Setup {
	return setupOf(data).WithModel(name, tinyCNN(name, conv))
}

func cnnConfig(name string) runspec.Config {
	cfg := smallConfig()
	cfg.Model, cfg.Arch = name, ""
	cfg.Replicas = 2
	cfg.Steps, cfg.BurnIn, cfg.Thin = 40, 10, 5
	cfg.CkptEvery, cfg.LogEvery = 10, 5
	return cfg
}

// TestCNNResumeEqualsUninterrupted checks that a PT-SGHMC run of a CNN (two
// rungs, exchange tests on the CNN's graph) interrupted twice and resumed
// writes the same samples, metrics and final state as an uninterrupted
// run, bit for bit, and that its config and samples header record the model.
//
// The default engine records compiled (the graph compiler); engine graph
// (Gorgonia's VM) is what runs of graph models made before the compiler
// use, whether they recorded graph or plan (Config.RunEngine).
func TestCNNResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ asked, recorded string }{{"plan", "compiled"}, {"graph", "graph"}} {
		t.Run(c.asked, func(t *testing.T) { testCNNResume(t, c.asked, c.recorded) })
	}
}

func testCNNResume(t *testing.T, engine, recorded string) {
	cfg := cnnConfig("test-cnn-resume")
	cfg.GradShards = 2 // each rung's gradient split over two graphs
	cfg.Engine = engine
	data := smallData(t)
	s := cnnSetup(data, "test-cnn-resume", 2)
	ref := filepath.Join(t.TempDir(), "ref")
	r, err := New(ref, cfg, true, s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model.MLP != nil || r.Model.Name != "test-cnn-resume" {
		t.Fatalf("run model %+v", r.Model)
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := append([]float64(nil), r.State().Rungs[0].Theta...)
	r.Close()
	ws, wm := readAll(t, ref)
	saved, err := rundir.ReadRunConfig(ref)
	if err != nil {
		t.Fatal(err)
	}
	const shapes = "conv1.W:2x1x3x3,conv1.b:2,fc1.W:8x5,fc1.b:5,fc2.W:5x3,fc2.b:3"
	if saved.GradShards != 2 || saved.Engine != recorded {
		t.Fatalf("config.json records grad_shards %d engine %q, want 2 and %q", saved.GradShards, saved.Engine, recorded)
	}
	if saved.Model != "test-cnn-resume" || saved.Shapes != shapes {
		t.Fatalf("config.json records model %q shapes %q, want %q", saved.Model, saved.Shapes, shapes)
	}
	h, _, err := rundir.ReadSamples(filepath.Join(ref, rundir.SamplesFile), func(int, []float64) error { return nil })
	if err != nil || h.Arch != "test-cnn-resume "+shapes {
		t.Fatalf("samples header %q (%v)", h.Arch, err)
	}

	dir := filepath.Join(t.TempDir(), "int")
	if r, err = New(dir, cfg, true, s); err != nil {
		t.Fatal(err)
	}
	for _, stopAt := range []int{13, 27} {
		interruptAt(t, r, stopAt)
		if r, err = Resume(dir, 0, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got := r.State().Rungs[0].Theta
	r.Close()
	checkUninterrupted(t, dir, got, want, ws, wm)
}

// TestRunRefusesOtherModel checks that a run is neither resumed nor
// evaluated with a model other than the one that made it: the registered
// model changed under the same name (config shapes), and samples of another
// model in the run directory (samples header).
func TestRunRefusesOtherModel(t *testing.T) {
	t.Parallel()
	cfg := cnnConfig("test-cnn-other")
	cfg.Sampler, cfg.Steps = "sgnht", 20
	data := smallData(t)
	s := cnnSetup(data, "test-cnn-other", 2)
	r, dir := trainRef(t, cfg, s)
	r.Close()
	if _, err := evaluate.Evaluate(s, []string{dir}, "", data); err != nil {
		t.Fatalf("evaluate the run's own model: %v", err)
	}

	other := cnnSetup(data, "test-cnn-other", 3) // same name, another network
	if _, err := Resume(dir, 30, other); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("resume with another model: %v, want a refusal", err)
	}
	if _, err := evaluate.Evaluate(other, []string{dir}, "", data); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("evaluate with another model: %v, want a refusal", err)
	}

	// An MLP's samples put in the CNN's run directory.
	mlp := smallConfig()
	mlp.Sampler, mlp.Steps, mlp.Replicas = "sgnht", 50, 1
	mdir := filepath.Join(t.TempDir(), "mlp")
	r, err := New(mdir, mlp, true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	b, err := os.ReadFile(filepath.Join(mdir, rundir.SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.SamplesFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := evaluate.Evaluate(s, []string{dir}, "", data); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("evaluate an MLP's samples as the CNN's: %v, want a refusal", err)
	}
	if _, err := evaluate.Evaluate(s, []string{dir, mdir}, "", data); err == nil {
		t.Fatal("pooled a CNN run with an MLP run")
	}
}

// TestOldArchOnlyHeader checks that run directories written before models
// were recorded (an MLP's widths alone in the samples header, no shapes in
// config.json) are still read, as MLPs.
func TestOldArchOnlyHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := smallConfig()
	if err := rundir.WriteConfig(dir, cfg); err != nil {
		t.Fatal(err)
	}
	spec, err := cfg.Spec(16, 3)
	if err != nil {
		t.Fatal(err)
	}
	w, err := rundir.CreateSamples(filepath.Join(dir, rundir.SamplesFile), rundir.SampleHeader{Arch: "16-12-3", Params: spec.NumParams(), DType: "float32"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(1, make([]float64, spec.NumParams())); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, m, err := evaluate.RunModel(runspec.DefaultSetup(), dir, smallData(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.MLP == nil || m.Name != "16-12-3" {
		t.Fatalf("old run read as model %q (MLP %v)", m.Name, m.MLP != nil)
	}
}

// TestAutoShards checks the gradient shards a graph run takes when its
// config leaves them to it: the cores each rung gets, at least 1, at most 4.
func TestAutoShards(t *testing.T) {
	t.Parallel()
	cores := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		name string
		cfg  runspec.Config
		want int
	}{
		{"one chain", runspec.Config{Sampler: "sgnht", Replicas: 4, Chains: 1, Batch: 128}, min(cores, 4)},
		{"4 rungs", runspec.Config{Sampler: "ptsghmc", Replicas: 4, Chains: 1, Batch: 128}, min(max(cores/4, 1), 4)},
		{"2 rungs, 1 worker", runspec.Config{Sampler: "ptsghmc", Replicas: 2, Workers: 1, Chains: 1, Batch: 128}, min(cores, 4)},
		{"3 chains", runspec.Config{Sampler: "sgld", Chains: 3, Batch: 128}, min(max(cores/3, 1), 4)},
		{"chain task", runspec.Config{Sampler: "sgld", Chains: 3, Chain: 2, Batch: 128}, min(cores, 4)},
		{"batch 1", runspec.Config{Sampler: "sgnht", Chains: 1, Batch: 1}, 1},
	} {
		if got := autoShards(tc.cfg); got != tc.want {
			t.Errorf("%s: %d shards on %d cores, want %d", tc.name, got, cores, tc.want)
		}
	}
}

// TestRunEngine checks which engine a run's config selects: a graph model
// recorded with plan (a run made before the graph compiler) keeps the VM.
func TestRunEngine(t *testing.T) {
	t.Parallel()
	cnn, err := tinyCNN("test-cnn-engine", 2)(nn.PriorConfig{Precision: 1})
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := nn.Spec{Sizes: []int{4, 3}, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}.Model()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		engine, kernels string
		model           nn.Model
		want            autodiff.Engine
	}{
		{"plan", "", mlp, autodiff.EnginePlan},
		{"", "", mlp, autodiff.EnginePlan},
		{"graph", "", mlp, autodiff.EngineGraph},
		{"compiled", "plan", mlp, autodiff.EngineCompiled},
		{"compiled", "", mlp, autodiff.EngineCompiledGeneric}, // a compiled MLP run made before the plan's kernels
		{"plan", "", cnn, autodiff.EngineGraph},
		{"graph", "", cnn, autodiff.EngineGraph},
		{"compiled", "", cnn, autodiff.EngineCompiled},
	} {
		if got := (runspec.Config{Engine: c.engine, MLPKernels: c.kernels}).RunEngine(c.model); got != c.want {
			t.Errorf("engine %q, MLP kernels %q, model %s: %s, want %s", c.engine, c.kernels, c.model.Name, got, c.want)
		}
	}
}

// TestUnsupportedSaidOnce checks that a model with an op the compiler does
// not know trains on the VM and that train says so once, naming the op.
func TestUnsupportedSaidOnce(t *testing.T) {
	unsupported := func(p nn.PriorConfig) (nn.Model, error) {
		c := nn.ConvNet{Height: 4, Width: 4, Channels: 1, Conv: []int{2}, Kernel: 3, Dense: []int{5}, Classes: 3, Prior: p}
		return nn.NewModel("test-unsupported", func(batch int, dt tensor.Dtype) (*nn.Graph, error) {
			g, err := c.Build(batch, dt)
			if err != nil {
				return nil, err
			}
			if g.LogLik, err = G.Cube(g.LogLik); err != nil { // cube: compiled; max below is not
				return nil, err
			}
			m, err := G.Max(g.LogLik)
			if err != nil {
				return nil, err
			}
			g.LogLik, err = G.Sub(g.LogLik, m)
			return g, err
		})
	}
	var buf bytes.Buffer
	old := notices
	notices = &buf
	defer func() { notices = old }()
	cfg := cnnConfig("test-unsupported")
	cfg.Sampler, cfg.Steps, cfg.BurnIn, cfg.Replicas = "sgnht", 10, 2, 1
	s := setupOf(smallData(t)).WithModel("test-unsupported", unsupported)
	for i := 0; i < 2; i++ {
		r, err := New(filepath.Join(t.TempDir(), "run"), cfg, true, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Train(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	if n := strings.Count(buf.String(), "does not support op"); n != 1 || !strings.Contains(buf.String(), "MaxAlong") {
		t.Fatalf("notices %q: want one naming MaxAlong", buf.String())
	}
}

// TestCompiledMLPRun checks an MLP run on the compiled engine sharded over
// two graphs, and one asked for engine plan (its gradient in one piece, on
// the compiled graph since it computes the plan's arithmetic): both record
// the compiled engine with the plan's kernels, train, resume bit for bit,
// evaluate, and sample alike to float32 rounding over a short run.
func TestCompiledMLPRun(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	final := map[string][]float64{}
	for _, engine := range []string{"plan", "compiled"} {
		cfg := smallConfig()
		cfg.Engine, cfg.Steps, cfg.BurnIn, cfg.GradShards = engine, 40, 10, 2
		dir := filepath.Join(t.TempDir(), engine)
		r, err := New(dir, cfg, true, setupOf(data))
		if err != nil {
			t.Fatal(err)
		}
		interruptAt(t, r, 17)
		if r, err = Resume(dir, 0, setupOf(data)); err != nil {
			t.Fatal(err)
		}
		if err := r.Train(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		final[engine] = append([]float64(nil), r.State().Rungs[0].Theta...)
		r.Close()
		saved, err := rundir.ReadRunConfig(dir)
		if err != nil || saved.Engine != "compiled" || saved.MLPKernels != runspec.MLPKernelsPlan {
			t.Fatalf("config records engine %q, MLP kernels %q (%v), want compiled and plan", saved.Engine, saved.MLPKernels, err)
		}
		if _, err := evaluate.Evaluate(runspec.DefaultSetup(), []string{dir}, "", data); err != nil {
			t.Fatalf("evaluate the %s run: %v", engine, err)
		}
	}
	for i, v := range final["plan"] {
		if w := final["compiled"][i]; math.Abs(v-w) > 1e-3*(1+math.Abs(v)) {
			t.Fatalf("parameter %d after 40 steps: plan %v, compiled %v", i, v, w)
		}
	}
}

// TestCompiledMLPRunSameAsPlan checks that an MLP run on the compiled
// graph (the default engine, one graph per gradient) writes the samples and
// metrics the same run on the hand-written BLAS plan writes
// (autodifftest.Plan through autodiff.ReferenceMLP: MLP runs' engine
// before), byte for byte, for PT
// (exchange tests on the log-likelihoods, validation on the logits) and one
// SGNHT chain (its gradient streamed into the update), in float32 and
// float64, batches of 13 (not a multiple of the product kernel's tiles).
// Not parallel: the hand-written plan is a process-wide switch.
func TestCompiledMLPRunSameAsPlan(t *testing.T) {
	data := smallData(t)
	for _, c := range []struct {
		sampler string
		dtype   string
	}{{"ptsghmc", "float32"}, {"sgnht", "float32"}, {"ptsghmc", "float64"}} {
		files := map[string][][]byte{}
		for _, engine := range []string{"plan", "compiled"} {
			cfg := smallConfig()
			cfg.Sampler, cfg.DType, cfg.Batch = c.sampler, c.dtype, 13
			cfg.Steps, cfg.BurnIn, cfg.Thin = 60, 10, 5
			restore := func() {}
			if engine == "plan" {
				restore = autodiff.ReferenceMLP(func(spec nn.Spec, batch int, dtype autodiff.DType, _ bool) (autodiff.Evaluator, error) {
					return autodifftest.NewPlan(spec, batch, dtype)
				})
			}
			r, dir := trainRef(t, cfg, setupOf(data))
			restore()
			_, isPlan := r.pots[0].Eval.(*autodifftest.Plan)
			if r.Close(); isPlan != (engine == "plan") {
				t.Fatalf("%s %s: the %s run's evaluator is %T", c.sampler, c.dtype, engine, r.pots[0].Eval)
			}
			for _, f := range []string{rundir.SamplesFile, rundir.MetricsFile} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				files[engine] = append(files[engine], b)
			}
		}
		for i, f := range []string{rundir.SamplesFile, rundir.MetricsFile} {
			if len(files["plan"][i]) == 0 || !bytes.Equal(files["plan"][i], files["compiled"][i]) {
				t.Errorf("%s %s: the compiled run's %s (%d bytes) differs from the plan's (%d bytes)",
					c.sampler, c.dtype, f, len(files["compiled"][i]), len(files["plan"][i]))
			}
		}
	}
}
