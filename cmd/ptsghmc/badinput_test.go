package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// copyDir copies the regular files of src into a new directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestBadInput runs the commands on bad input of each kind and checks each
// fails with an error naming the file, flag or record at fault (and that
// --skip-corrupt and --other-data do what they say).
func TestBadInput(t *testing.T) {
	data := writeData(t)
	rd := filepath.Join(t.TempDir(), "run")
	small := []string{"--sampler", "sgnht", "--data", data, "--arch", "16-8-10", "--validation", "0", "--batch", "32",
		"--steps", "40", "--burnin", "10", "--thin", "2", "--log-every", "10", "--checkpoint-every", "10", "--quiet"}
	if _, stderr, code := run(t, append([]string{"train", "--out", rd}, small...)...); code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	other := filepath.Join(t.TempDir(), "other") // a run of another model
	if _, stderr, code := run(t, append(append([]string{"train", "--out", other}, small...), "--arch", "16-5-10")...); code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	testImages := filepath.Join(data, datasets.TestImages+".gz")

	// a data directory whose training images are of rank 1
	rank1 := copyDir(t, data)
	lab := &datasets.IDX{Type: datasets.IDXUint8, Dims: []int{300}, Data: make([]float64, 300)}
	if err := datasets.WriteIDXFile(filepath.Join(rank1, datasets.TrainImages), lab, false); err != nil {
		t.Fatal(err)
	}
	// a data directory with a label beyond 10 classes
	badLabel := copyDir(t, data)
	lab.Data[7] = 12
	if err := datasets.WriteIDXFile(filepath.Join(badLabel, datasets.TrainLabels), lab, false); err != nil {
		t.Fatal(err)
	}
	// a data directory of 25-pixel images (and the images alone, for predict)
	wide := t.TempDir()
	big, _ := datasets.SyntheticImages(300, 25, 10, nil0())
	if err := datasets.WriteImages(big, 5, 5, filepath.Join(wide, datasets.TrainImages), filepath.Join(wide, datasets.TrainLabels), false); err != nil {
		t.Fatal(err)
	}
	if err := datasets.WriteImages(big, 5, 5, filepath.Join(wide, datasets.TestImages), filepath.Join(wide, datasets.TestLabels), false); err != nil {
		t.Fatal(err)
	}
	// same shape, other images: another data set
	otherData := t.TempDir()
	od, _ := datasets.SyntheticImages(300, 16, 10, nil0())
	datasets.WriteImages(od, 4, 4, filepath.Join(otherData, datasets.TrainImages), filepath.Join(otherData, datasets.TrainLabels), false)
	datasets.WriteImages(od, 4, 4, filepath.Join(otherData, datasets.TestImages), filepath.Join(otherData, datasets.TestLabels), false)
	// config files of the wrong types
	cfgDir := t.TempDir()
	badJSON := filepath.Join(cfgDir, "c.json")
	os.WriteFile(badJSON, []byte(`{"steps": "many"}`), 0o644)
	goodJSON := filepath.Join(cfgDir, "good.json")
	os.WriteFile(goodJSON, []byte(`{"steps": 50}`), 0o644)
	badYAML := filepath.Join(cfgDir, "c.yaml")
	os.WriteFile(badYAML, []byte("lr: [0.1]\n"), 0o644)
	// a run directory holding another model's samples
	mixed := copyDir(t, rd)
	b, _ := os.ReadFile(filepath.Join(other, rundir.SamplesFile))
	os.WriteFile(filepath.Join(mixed, rundir.SamplesFile), b, 0o644)
	// a run whose samples file has a corrupt record inside
	corrupt := copyDir(t, rd)
	sp := filepath.Join(corrupt, rundir.SamplesFile)
	s, _ := os.ReadFile(sp)
	s[len(s)/2] ^= 0xff
	os.WriteFile(sp, s, 0o644)

	// a run one of whose samples (intact records) holds a NaN: a diverged chain
	diverged := copyDir(t, rd)
	dp := filepath.Join(diverged, rundir.SamplesFile)
	var steps []int
	var thetas [][]float64
	h, _, err := rundir.ReadSamples(dp, func(step int, theta []float64) error {
		steps, thetas = append(steps, step), append(thetas, append([]float64(nil), theta...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	badStep := steps[len(steps)/2]
	thetas[len(steps)/2][200] = math.NaN() // one of the second layer's weights
	w, err := rundir.CreateSamples(dp, h)
	if err != nil {
		t.Fatal(err)
	}
	for i, th := range thetas {
		if err := w.Append(steps[i], th); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	nanWant := []string{dp, fmt.Sprintf("sample of step %d", badStep), "1 value that is not a finite number", "--to-step"}

	out := filepath.Join(t.TempDir(), "new")
	cases := []struct {
		name string
		args []string
		want []string // all in stderr (code != 0), or in stdout (code 0) when ok
		ok   bool
	}{
		{"IDX of rank 1", []string{"train", "--data", rank1, "--out", out, "--arch", "16-8-10", "--quiet"},
			[]string{filepath.Join(rank1, datasets.TrainImages), "rank 1"}, false},
		{"label beyond the classes", []string{"train", "--data", badLabel, "--out", out, "--arch", "16-8-10", "--quiet"},
			[]string{filepath.Join(badLabel, datasets.TrainLabels), "label 12"}, false},
		{"model of fewer classes than the labels", []string{"train", "--data", data, "--out", out, "--arch", "16-8-5", "--validation", "0", "--quiet"},
			[]string{data, "model 16-8-5 is not a classifier", "10 classes (5 outputs)"}, false},
		{"image size not the model's (train)", []string{"train", "--data", wide, "--out", out, "--arch", "16-8-10", "--validation", "0", "--quiet"},
			[]string{wide, "takes 16 inputs", "25 features"}, false},
		{"image size not the model's (predict)", []string{"predict", "--run", rd, "--images", filepath.Join(wide, datasets.TestImages)},
			[]string{filepath.Join(wide, datasets.TestImages), "16 inputs", "25 features"}, false},
		{"image size not the model's (eval)", []string{"eval", "--run", rd, "--data", wide},
			[]string{rd, wide, "16 features", "25 features"}, false},
		{"config of wrong type (JSON)", []string{"train", "--config", badJSON, "--out", out},
			[]string{badJSON, "steps", "string"}, false},
		{"config of wrong type (YAML)", []string{"train", "--config", badYAML, "--out", out},
			[]string{badYAML, "float64"}, false},
		{"run directory of another model (eval)", []string{"eval", "--run", mixed, "--data", data},
			[]string{filepath.Join(mixed, rundir.SamplesFile), "the run's model is \"16-8-10\""}, false},
		{"run directory of another model (resume)", []string{"train", "--resume", mixed, "--quiet"},
			[]string{filepath.Join(mixed, rundir.SamplesFile), "16-5-10", "16-8-10", "different runs"}, false},
		{"--resume with contradicting flags", []string{"train", "--resume", rd, "--lr", "0.5", "--arch", "16-3-10", "--steps", "50"},
			[]string{"--lr 0.5 (the run has 0.02)", "--arch 16-3-10 (the run has 16-8-10)", "only --steps"}, false},
		{"--resume with --config", []string{"train", "--resume", rd, "--config", goodJSON},
			[]string{"--config", "keeps the configuration"}, false},
		{"--resume with --overwrite", []string{"train", "--resume", rd, "--overwrite"},
			[]string{"--overwrite"}, false},
		{"eval on other data", []string{"eval", "--run", rd, "--data", otherData},
			[]string{rd, otherData, "not the data the run was trained on", "--other-data"}, false},
		{"eval on other data, forced", []string{"eval", "--run", rd, "--data", otherData, "--other-data"},
			[]string{"posterior-predictive evaluation"}, true},
		{"export on other data", []string{"export", "--run", rd, "--data", otherData, "--out", filepath.Join(t.TempDir(), "other.npz")},
			[]string{"export --data", rd, otherData, "not the data the run was trained on", "--other-data"}, false},
		{"export on other data, forced", []string{"export", "--run", rd, "--data", otherData, "--other-data", "--out", filepath.Join(t.TempDir(), "other.npz")},
			[]string{"log_likelihood"}, true},
		{"corrupt sample record (eval)", []string{"eval", "--run", corrupt},
			[]string{sp, "record", "step field", "fails its checksum", "--skip-corrupt"}, false},
		{"corrupt sample record (predict)", []string{"predict", "--run", corrupt, "--images", testImages},
			[]string{sp, "record", "fails its checksum"}, false},
		{"diverged sample (eval)", []string{"eval", "--run", diverged}, nanWant, false},
		{"diverged sample (predict)", []string{"predict", "--run", diverged, "--images", testImages}, nanWant, false},
		{"diverged sample left out by --to-step", []string{"eval", "--run", diverged, "--to-step", fmt.Sprint(badStep - 1)},
			[]string{"posterior-predictive evaluation"}, true},
		{"corrupt sample record skipped", []string{"eval", "--run", corrupt, "--skip-corrupt"},
			[]string{"1 corrupt sample record(s)", "were skipped", "the 14 intact samples"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := run(t, c.args...)
			got := stderr
			if c.ok {
				got = stdout
			}
			t.Logf("%s", strings.TrimSpace(got))
			if (code == 0) != c.ok {
				t.Fatalf("exit code %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
		})
	}
	if after, _ := os.ReadFile(filepath.Join(mixed, rundir.SamplesFile)); !bytes.Equal(after, b) {
		t.Error("a refused resume changed the other model's samples file")
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed train left %s behind", out)
	}
}

func nil0() *rand.Rand { return rand.New(rand.NewPCG(7, 7)) }
