package main

import (
	"fmt"
	"math/rand/v2"
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

// TestCNNImageShape checks a CNN is neither trained nor evaluated on
// images of another shape than it takes, even of as many pixels: the error,
// before any step, names the data's image shape and the model's.
func TestCNNImageShape(t *testing.T) {
	data := writeData(t) // 4x4 images, the shape cmd-test-cnn takes
	shaped := func(rows, cols int) string {
		all, _ := datasets.SyntheticImages(200, rows*cols, 10, rand.New(rand.NewPCG(1, 2)))
		dir := t.TempDir()
		idx := make([]int, all.N)
		for i := range idx {
			idx[i] = i
		}
		for _, f := range []struct {
			d        *datasets.Dataset
			img, lab string
		}{{all.Subset(idx[:150]), datasets.TrainImages, datasets.TrainLabels}, {all.Subset(idx[150:]), datasets.TestImages, datasets.TestLabels}} {
			if err := datasets.WriteImages(f.d, rows, cols, filepath.Join(dir, f.img), filepath.Join(dir, f.lab), false); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	rd := filepath.Join(t.TempDir(), "cnn")
	common := []string{"--model", "cmd-test-cnn", "--validation", "50", "--batch", "32", "--burnin", "2", "--thin", "1", "--steps", "4", "--log-every", "2", "--quiet"}
	if _, stderr, code := run(t, append([]string{"train", "--out", rd, "--data", data}, common...)...); code != 0 {
		t.Fatalf("train on 4x4 images: %s", stderr)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		rows, cols int
	}{
		{"train on as many pixels", []string{"train", "--out", filepath.Join(t.TempDir(), "r")}, 2, 8},
		{"train on more pixels", []string{"train", "--out", filepath.Join(t.TempDir(), "r")}, 8, 8},
		{"eval on as many pixels", []string{"eval", "--run", rd, "--other-data"}, 2, 8},
		{"eval on more pixels", []string{"eval", "--run", rd, "--other-data"}, 8, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--data", shaped(tc.rows, tc.cols))
			if tc.args[0] == "train" {
				args = append(args, common...)
			}
			_, stderr, code := run(t, args...)
			want := fmt.Sprintf("images are %dx%d", tc.rows, tc.cols)
			if code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "takes 4x4 images") {
				t.Fatalf("%s: code %d, %q; want an error saying %q and %q", tc.name, code, stderr, want, "takes 4x4 images")
			}
		})
	}
	// eval --ood: an out-of-distribution set of as many pixels in another
	// shape, given as a data directory or its image file, is refused
	// too, the error naming the set.
	for _, tc := range []struct {
		name       string
		rows, cols int
		file       bool
	}{
		{"ood directory of as many pixels", 2, 8, false},
		{"ood file of as many pixels", 8, 2, true},
		{"ood file of one row", 1, 16, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ood := shaped(tc.rows, tc.cols)
			if tc.file {
				ood = filepath.Join(ood, datasets.TestImages)
			}
			_, stderr, code := run(t, "eval", "--run", rd, "--data", data, "--ood", ood)
			want := fmt.Sprintf("images are %dx%d", tc.rows, tc.cols)
			if code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "takes 4x4 images") || !strings.Contains(stderr, "set "+ood) {
				t.Fatalf("%s: code %d, %q; want an error naming the set %s, %q and %q", tc.name, code, stderr, ood, want, "takes 4x4 images")
			}
		})
	}
	// predict refuses such images too, naming the file.
	wide := filepath.Join(shaped(2, 8), datasets.TestImages)
	if _, stderr, code := run(t, "predict", "--run", rd, "--images", wide); code == 0 || !strings.Contains(stderr, wide) || !strings.Contains(stderr, "images are 2x8") {
		t.Fatalf("predict on 2x8 images: code %d, %q", code, stderr)
	}
	// The same images of the shape the network takes are scored.
	if _, stderr, code := run(t, "eval", "--run", rd, "--data", data, "--ood", shaped(4, 4), "--ood", "builtin", "--shift", "rotate"); code != 0 {
		t.Fatalf("eval --ood of 4x4 images: %s", stderr)
	}
}
