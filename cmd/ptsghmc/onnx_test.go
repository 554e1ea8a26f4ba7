package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/onnx"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// writeImages28 writes a small data set of 28x28 images (784 features, 10
// classes): the shape ONNX networks of Fashion-MNIST take.
func writeImages28(t *testing.T) string {
	all, _ := datasets.SyntheticImages(260, 784, 10, rand.New(rand.NewPCG(5, 6)))
	return writeSplit(t, all, 200, 28, true)
}

// copyFile copies src to a new file in dir and returns its path.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

const fixtures = "../../onnx/testdata"

// TestTrainONNX trains a network PyTorch exported (--model FILE.onnx),
// from its own weights (--start model), then evaluates, predicts, exports
// and resumes it from another directory; config.json records the file's
// digest, and a changed file is refused naming both digests.
func TestTrainONNX(t *testing.T) {
	data := writeImages28(t)
	net := copyFile(t, filepath.Join(fixtures, "tiny_cnn.onnx"), t.TempDir())
	rd := filepath.Join(t.TempDir(), "run")
	common := []string{"--data", data, "--validation", "40", "--batch", "32", "--burnin", "10", "--thin", "5", "--log-every", "10", "--quiet"}
	_, stderr, code := run(t, append([]string{"train", "--out", rd, "--model", net, "--start", "model", "--steps", "20"}, common...)...)
	if code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	for _, want := range []string{"LogSoftmax is stripped", "start from the model's own weights"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("train's stderr lacks %q:\n%s", want, stderr)
		}
	}
	digest, err := onnx.FileDigest(net)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rundir.ReadRunConfig(rd)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != net || cfg.ModelSHA256 != digest || cfg.Start != runspec.StartModel || cfg.Arch != "" {
		t.Errorf("config.json: model %q, sha256 %q, start %q, arch %q; want %q, %q, model, none", cfg.Model, cfg.ModelSHA256, cfg.Start, cfg.Arch, net, digest)
	}
	// a relative path is recorded absolute, so that eval finds it anywhere
	rel := filepath.Join(t.TempDir(), "rel")
	if _, stderr, code := run(t, append([]string{"train", "--out", rel, "--model", filepath.Join(fixtures, "tiny_mlp.onnx"), "--steps", "20"}, common...)...); code != 0 {
		t.Fatalf("train (relative path): %s", stderr)
	}
	if c, _ := rundir.ReadRunConfig(rel); !filepath.IsAbs(c.Model) || !strings.HasSuffix(c.Model, "tiny_mlp.onnx") {
		t.Errorf("a relative --model is recorded as %q", c.Model)
	}

	if out, stderr, code := run(t, "eval", "--run", rd); code != 0 || !strings.Contains(out, "ensemble (posterior)") {
		t.Fatalf("eval: %s%s", out, stderr)
	}
	if out, stderr, code := run(t, "predict", "--run", rd, "--images", filepath.Join(data, datasets.TestImages+".gz")); code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 61 {
		t.Fatalf("predict: %s%s", out, stderr)
	}
	npz := filepath.Join(t.TempDir(), "p.npz")
	if out, stderr, code := run(t, "export", "--run", rd, "--format", "npz", "--out", npz); code != 0 || !strings.Contains(out, "fc.weight.T") {
		t.Fatalf("export: %s%s", out, stderr)
	}
	if _, stderr, code := run(t, "train", "--resume", rd, "--steps", "30", "--quiet"); code != 0 {
		t.Fatalf("resume: %s", stderr)
	}

	// the file changes under the run: resume and eval are refused
	other := copyFile(t, filepath.Join(fixtures, "tiny_mlp.onnx"), t.TempDir())
	b, _ := os.ReadFile(other)
	if err := os.WriteFile(net, b, 0o644); err != nil {
		t.Fatal(err)
	}
	now, _ := onnx.FileDigest(net)
	ckpt, _ := os.ReadFile(filepath.Join(rd, rundir.CheckpointFile))
	for _, args := range [][]string{{"train", "--resume", rd, "--steps", "40", "--quiet"}, {"eval", "--run", rd}} {
		_, stderr, code := run(t, args...)
		if code == 0 || !strings.Contains(stderr, digest) || !strings.Contains(stderr, now) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s with a changed file: code %d, %q (want both digests, %s and %s, in one line)", args[0], code, stderr, digest, now)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(rd, rundir.CheckpointFile)); !bytes.Equal(after, ckpt) {
		t.Error("a refused resume changed the checkpoint")
	}
}

// TestStartModel checks that --start model starts every chain at the
// file's weights, and the default at the prior's draws.
func TestStartModel(t *testing.T) {
	data := writeImages28(t)
	path, _ := filepath.Abs(filepath.Join(fixtures, "tiny_cnn.onnx"))
	m, err := runspec.Config{Model: path}.BuildModel(runspec.DefaultSetup().Models)
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{runspec.StartModel, ""} {
		cfg := runspec.DefaultConfig()
		cfg.Data, cfg.Model, cfg.Arch, cfg.Start, cfg.Validation, cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Chains = data, path, "", start, 0, 10, 5, 1, 2
		ch, err := train.NewChains(filepath.Join(t.TempDir(), "run"), cfg, false, runspec.DefaultSetup())
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range ch.Runs {
			got := r.State().Rungs[0].Theta
			if slices.Equal(got, m.Weights) != (start == runspec.StartModel) {
				t.Errorf("start %q, chain %d: starts at the file's weights: %v", start, i+1, slices.Equal(got, m.Weights))
			}
		}
		ch.Close()
	}
}

// TestONNXBadInput runs train on bad ONNX files and flags of each kind: each
// is refused in one line naming the file and the fault, before the run
// directory is made, or, for --overwrite of a run, changed.
func TestONNXBadInput(t *testing.T) {
	data := writeImages28(t)
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(fixtures, "tiny_cnn.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rng := rand.New(rand.NewPCG(8, 9))
	weights := func(name string, r, c int) *onnx.Tensor {
		v := make([]float32, r*c)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return &onnx.Tensor{Name: name, Dims: []int64{int64(r), int64(c)}, DataType: onnx.TypeFloat, FloatData: v}
	}
	in := func(name string, d int64) *onnx.ValueInfo {
		return &onnx.ValueInfo{Name: name, ElemType: onnx.TypeFloat, HasShape: true, Shape: []onnx.Dim{{Param: "N"}, {Value: d}}}
	}
	// mlp is a network of inputs -> 8 -> classes with activation act; edit
	// changes it.
	mlp := func(inputs, classes int, act string, edit func(*onnx.Graph)) []byte {
		g := &onnx.Graph{
			Nodes: []*onnx.Node{
				{Name: "fc1", OpType: "MatMul", Inputs: []string{"x", "w1"}, Outputs: []string{"h"}},
				{Name: "act", OpType: act, Inputs: []string{"h"}, Outputs: []string{"a"}},
				{Name: "fc2", OpType: "MatMul", Inputs: []string{"a", "w2"}, Outputs: []string{"z"}},
			},
			Initializers: []*onnx.Tensor{weights("w1", inputs, 8), weights("w2", 8, classes)},
			Inputs:       []*onnx.ValueInfo{in("x", int64(inputs))},
			Outputs:      []*onnx.ValueInfo{{Name: "z", ElemType: onnx.TypeFloat}},
		}
		if edit != nil {
			edit(g)
		}
		return (&onnx.Model{IRVersion: 8, Opsets: []onnx.Opset{{Version: 14}}, Graph: g}).Marshal()
	}
	if err := os.Mkdir(filepath.Join(dir, "with space"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		file  string
		extra []string
		want  []string
	}{
		{"truncated file", write("truncated.onnx", good[:len(good)/2]), nil, []string{"truncated.onnx", "truncated or corrupt"}},
		{"not a protobuf", write("text.onnx", []byte("this is not an ONNX model\n")), nil, []string{"text.onnx", "corrupt protobuf at byte 0"}},
		{"empty file", write("empty.onnx", nil), nil, []string{"empty.onnx", "empty file"}},
		{"missing file", filepath.Join(dir, "missing.onnx"), nil, []string{"missing.onnx", "no such file"}},
		{"unsupported operator", write("op.onnx", mlp(784, 10, "Selu", nil)), nil, []string{"op.onnx", `node "act" (Selu)`, "operator Selu is not supported"}},
		{"two inputs", write("inputs.onnx", mlp(784, 10, "Relu", func(g *onnx.Graph) { g.Inputs = append(g.Inputs, in("mask", 784)) })), nil,
			[]string{"inputs.onnx", "2 inputs (x, mask)", "expected one"}},
		{"two outputs", write("outputs.onnx", mlp(784, 10, "Relu", func(g *onnx.Graph) {
			g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: "a", ElemType: onnx.TypeFloat})
		})), nil, []string{"outputs.onnx", "2 outputs (z, a)", "expected one"}},
		{"inputs not the data's", write("in100.onnx", mlp(100, 10, "Relu", nil)), nil, []string{data, "in100.onnx takes 100 inputs, data has 784 features"}},
		{"classes not the data's", write("out5.onnx", mlp(784, 5, "Relu", nil)), nil, []string{data, "out5.onnx is not a classifier of the data's 10 classes (5 outputs)"}},
		{"a path with a space", write(filepath.Join("with space", "net.onnx"), good), nil, []string{"white space"}},
		{"start model without weights", "cmd-test-cnn", []string{"--start", "model"}, []string{"start model", "cmd-test-cnn comes with no weights"}},
		{"start of another kind", write("net.onnx", good), []string{"--start", "sgd"}, []string{"start must be prior or model"}},
	}
	// a run that --overwrite must leave as it is
	existing := filepath.Join(t.TempDir(), "existing")
	if _, stderr, code := run(t, "train", "--out", existing, "--data", data, "--arch", "784-4-10", "--validation", "0", "--steps", "10", "--burnin", "5", "--thin", "1", "--quiet"); code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	before := map[string][]byte{}
	ents, _ := os.ReadDir(existing)
	for _, e := range ents {
		before[e.Name()], _ = os.ReadFile(filepath.Join(existing, e.Name()))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "new")
			for _, target := range [][]string{{"--out", out}, {"--out", existing, "--overwrite"}} {
				args := append(append([]string{"train", "--data", data, "--model", c.file, "--steps", "10", "--burnin", "5", "--thin", "1", "--validation", "0", "--quiet"}, target...), c.extra...)
				_, stderr, code := run(t, args...)
				t.Logf("%s", strings.TrimSpace(stderr))
				if code == 0 {
					t.Fatalf("train %v succeeded", target)
				}
				if strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
					t.Errorf("more than one line: %q", stderr)
				}
				for _, w := range c.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr lacks %q", w)
					}
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused train left %s behind", out)
			}
			ents, _ := os.ReadDir(existing)
			if len(ents) != len(before) {
				t.Errorf("the run in %s now holds %d files, had %d", existing, len(ents), len(before))
			}
			for name, b := range before {
				if after, _ := os.ReadFile(filepath.Join(existing, name)); !bytes.Equal(after, b) {
					t.Errorf("a refused --overwrite changed %s", name)
				}
			}
		})
	}
}

// TestConfigJSONStart checks that config.json of a run made without --start
// does not write the key (runs older than it read the same).
func TestConfigJSONStart(t *testing.T) {
	b, _ := json.Marshal(runspec.DefaultConfig())
	if strings.Contains(string(b), `"start"`) || strings.Contains(string(b), `"model_sha256"`) {
		t.Errorf("the default config writes start or model_sha256: %s", b)
	}
}
