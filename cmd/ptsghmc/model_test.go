package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// The command names models of the process's registry (runspec.DefaultSetup
// copies nn.Models): the test binary registers its CNN once, before any
// test runs, as a program registers its own models in init.
func init() {
	nn.Models["cmd-test-cnn"] = func(p nn.PriorConfig) (nn.Model, error) {
		return nn.ConvNet{Height: 4, Width: 4, Channels: 1, Conv: []int{2}, Kernel: 3, Dense: []int{6}, Classes: 10, Prior: p}.Model("cmd-test-cnn")
	}
}

// TestTrainModelFlag trains a registered CNN with --model, resumes it, and
// evaluates and predicts with it; --model with --arch is refused.
func TestTrainModelFlag(t *testing.T) {
	data := writeData(t)
	rd := filepath.Join(t.TempDir(), "cnn")
	common := []string{"--data", data, "--model", "cmd-test-cnn", "--validation", "50", "--batch", "32", "--burnin", "10", "--thin", "5", "--log-every", "10", "--quiet"}
	_, stderr, code := run(t, append([]string{"train", "--out", rd, "--steps", "20"}, common...)...)
	if code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	if !strings.Contains(stderr, "cmd-test-cnn") {
		t.Fatalf("train does not name its model: %q", stderr)
	}
	b, _ := os.ReadFile(filepath.Join(rd, "config.json"))
	if !strings.Contains(string(b), `"arch": ""`) || !strings.Contains(string(b), `"shapes": "conv1.W:2x1x3x3`) {
		t.Fatalf("config.json:\n%s", b)
	}
	if _, stderr, code = run(t, "train", "--resume", rd, "--steps", "30", "--quiet"); code != 0 {
		t.Fatalf("resume: %s", stderr)
	}
	out, stderr, code := run(t, "eval", "--run", rd)
	if code != 0 || !strings.Contains(out, "ensemble (posterior)") {
		t.Fatalf("eval: %s%s", out, stderr)
	}
	out, stderr, code = run(t, "predict", "--run", rd, "--images", filepath.Join(data, datasets.TestImages+".gz"))
	if code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 101 {
		t.Fatalf("predict: %s", stderr)
	}
	if _, stderr, code = run(t, append([]string{"train", "--out", t.TempDir(), "--steps", "20", "--arch", "16-8-10"}, common...)...); code == 0 || !strings.Contains(stderr, "give one") {
		t.Fatalf("--model with --arch: code %d, %s", code, stderr)
	}
	if _, stderr, code = run(t, "train", "--out", t.TempDir(), "--model", "no-such-model", "--data", data, "--quiet"); code == 0 || !strings.Contains(stderr, "lenet") {
		t.Fatalf("unknown model: code %d, %s", code, stderr)
	}
}
