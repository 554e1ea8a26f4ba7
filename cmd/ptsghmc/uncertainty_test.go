package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// writeImages8 writes a synthetic MNIST-like data set of 8x8 images in 6
// classes (1200 training, 600 test images) in the standard IDX names.
func writeImages8(t *testing.T) string {
	all, _ := datasets.SyntheticImages(1800, 64, 6, rand.New(rand.NewPCG(7, 8)))
	return writeSplit(t, all, 1200, 8, false)
}

// evalJSON is what TestClassesOOD reads of eval --json.
type evalJSON struct {
	Ensemble evaluate.Metrics
	Baseline *evaluate.Metrics
	Paired   []evaluate.PairedDiff
	Classes  []int
	OOD      []evaluate.OODResult
	Select   []evaluate.SelectiveResult `json:"selective"`
	Shift    []evaluate.ShiftResult
	PerClass []evaluate.ClassResult  `json:"per_class"`
	EnsInfo  evaluate.PredictorInfo  `json:"ensemble_info"`
	BaseInfo *evaluate.PredictorInfo `json:"baseline_info"`
}

// TestClassesOOD trains on 4 of 6 classes and checks that eval scores the
// other two as out-of-distribution (AUROC above 0.5 for the ensemble's
// entropy), with the built-in sets, the shifts, selective prediction, a
// pooled sgd baseline, and the refusals of --classes mismatches.
func TestClassesOOD(t *testing.T) {
	data := writeImages8(t)
	tmp := t.TempDir()
	rd, sgd := filepath.Join(tmp, "run"), filepath.Join(tmp, "sgd")
	common := []string{"--data", data, "--classes", "0,2,3,5", "--validation", "0", "--batch", "50", "--quiet", "--log-every", "50"}
	// an --arch whose last width is not the number of classes is refused
	_, stderr, code := run(t, append([]string{"train", "--out", rd, "--arch", "64-16-6", "--steps", "10", "--burnin", "5", "--thin", "1"}, common...)...)
	if code == 0 || !strings.Contains(stderr, "64-16-4") {
		t.Fatalf("train --arch 64-16-6 --classes 0,2,3,5: code %d, %s", code, stderr)
	}
	if _, stderr, code = run(t, append([]string{"train", "--out", rd, "--arch", "64-16-4", "--steps", "400", "--burnin", "200", "--thin", "20", "--lr", "0.5"}, common...)...); code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	if _, stderr, code = run(t, append([]string{"train", "--out", sgd, "--arch", "64-16-4", "--steps", "300", "--sampler", "sgd", "--chains", "2", "--lr", "0.2"}, common...)...); code != 0 {
		t.Fatalf("train sgd: %s", stderr)
	}
	// the resume of a run with other classes is refused, naming both
	if _, stderr, code = run(t, "train", "--resume", rd, "--classes", "0,1,2,3", "--quiet"); code == 0 || !strings.Contains(stderr, "--classes 0,1,2,3 (the run has 0,2,3,5)") {
		t.Fatalf("resume with other classes: code %d, %s", code, stderr)
	}
	// the same classes resume (the data selected again, its fingerprint the run's)
	if _, stderr, code = run(t, "train", "--resume", rd, "--classes", "0,2,3,5", "--steps", "420", "--quiet"); code != 0 {
		t.Fatalf("resume: %s", stderr)
	}
	if tm, _, _ := rundir.ReadTiming(rd); tm.Sessions != 2 || tm.Steps != 420 {
		t.Errorf("timing after a resume: %+v, want 2 sessions to step 420", tm)
	}
	cfg, err := os.ReadFile(filepath.Join(rd, rundir.ConfigFile))
	if err != nil || !strings.Contains(string(cfg), `"classes": [`) || strings.Contains(string(cfg), "wall") {
		t.Fatalf("config.json records the classes and no times: %v\n%s", err, cfg)
	}
	if _, ok, err := rundir.ReadTiming(rd); !ok || err != nil {
		t.Fatalf("no %s in %s: %v", rundir.TimingFile, rd, err)
	}
	out, stderr, code := run(t, "eval", "--run", rd, "--baseline", sgd, "--ood", "builtin", "--shift", "rotate,noise", "--json")
	if code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	var rep evalJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval json: %v", err)
	}
	if len(rep.Classes) != 4 || rep.EnsInfo.Networks != 1 || rep.BaseInfo == nil || rep.BaseInfo.Networks != 2 || rep.BaseInfo.Samples != 2 || rep.BaseInfo.WallSeconds == nil {
		t.Fatalf("classes %v, ensemble %+v, baseline %+v", rep.Classes, rep.EnsInfo, rep.BaseInfo)
	}
	// 4 sets x 3 predictors x 3 scores
	if len(rep.OOD) != 36 {
		t.Fatalf("%d OOD rows, want 36", len(rep.OOD))
	}
	for _, r := range rep.OOD {
		undefined := r.Score == evaluate.ScoreMutualInfo && r.Predictor == evaluate.PredSingle
		if undefined != (r.AUROC == nil) || undefined != (r.FPR95 == nil) {
			t.Errorf("%+v: AUROC and FPR95 null only for a single network's mutual information", r)
		}
		if r.FPR95 != nil && (*r.FPR95 < 0 || *r.FPR95 > 1) {
			t.Errorf("%+v: FPR95 outside [0, 1]", r)
		}
		if r.Set == evaluate.OODHeldOut && r.Predictor == evaluate.PredEnsemble && r.Score == evaluate.ScoreEntropy {
			t.Logf("held-out classes, ensemble entropy: AUROC %.3f AUPR %.3f", *r.AUROC, *r.AUPR)
			if *r.AUROC <= 0.5 {
				t.Errorf("held-out classes score AUROC %.3f: want above 0.5", *r.AUROC)
			}
		}
	}
	checkPaired(t, rep)
	if len(rep.Select) != 9 {
		t.Errorf("%d selective rows, want 9", len(rep.Select))
	}
	// rotation by 0 is the test set itself
	var rot0 *evaluate.ShiftResult
	for i, s := range rep.Shift {
		if s.Kind == evaluate.ShiftRotate && s.Level == 0 && s.Predictor == evaluate.PredEnsemble {
			rot0 = &rep.Shift[i]
		}
	}
	if rot0 == nil || rot0.Accuracy != rep.Ensemble.Accuracy || rot0.NLL != rep.Ensemble.NLL || rot0.ECE != rep.Ensemble.ECE || rot0.Brier != rep.Ensemble.Brier {
		t.Errorf("rotation 0: %+v, unshifted %+v", rot0, rep.Ensemble)
	}
	if len(rep.Shift) != 2*(len(evaluate.RotateLevels)+len(evaluate.NoiseLevels)) {
		t.Errorf("%d shift rows", len(rep.Shift))
	}
	if len(rep.PerClass) != 8 {
		t.Errorf("%d per-class rows, want 4 classes x 2 predictors", len(rep.PerClass))
	}
	// a baseline trained on other classes is refused, naming both
	other := filepath.Join(tmp, "other")
	if _, stderr, code = run(t, "train", "--out", other, "--data", data, "--arch", "64-16-10", "--steps", "20", "--burnin", "5", "--sampler", "sgd", "--validation", "0", "--quiet"); code != 0 {
		t.Fatalf("train other: %s", stderr)
	}
	if _, stderr, code = run(t, "eval", "--run", rd, "--baseline", other); code == 0 || !strings.Contains(stderr, "classes 0,2,3,5") || !strings.Contains(stderr, "all classes") {
		t.Fatalf("eval with a baseline of other classes: code %d, %s", code, stderr)
	}
	// the text output keeps the metrics table's labels and adds the tables
	plots, page := filepath.Join(tmp, "plots"), filepath.Join(tmp, "r.html")
	out, stderr, code = run(t, "eval", "--run", rd, "--baseline", sgd, "--selective", "--shift", "rotate", "--plot", plots, "--report", page)
	if code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	for _, want := range []string{"ensemble (posterior)", "single sample", "sgd deep ensemble", "held-out classes", "selective prediction", "per class", "2 networks (sgd), 2 samples", "dataset shift", "ensemble minus sgd deep ensemble", "auroc held-out classes, mutual_information"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table id="ood">`, `<table id="selective">`, `<table id="shift">`, `<table id="per-class">`, `id="risk-coverage.png"`, `id="shift-rotate.png"`, "sgd deep ensemble: 2 networks"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %s", want)
		}
	}
	for _, f := range []string{"risk-coverage.png", "shift-rotate.png", "reliability.png"} {
		if _, err := os.Stat(filepath.Join(plots, f)); err != nil {
			t.Errorf("plot: %v", err)
		}
	}
	// eval --split validation of a --classes run scores its (already selected) validation examples
	vr := filepath.Join(tmp, "val")
	if _, stderr, code = run(t, "train", "--out", vr, "--data", data, "--classes", "0,2,3,5", "--arch", "64-16-4", "--validation", "200", "--steps", "60", "--burnin", "40", "--thin", "10", "--quiet"); code != 0 {
		t.Fatalf("train with validation: %s", stderr)
	}
	if out, stderr, code = run(t, "eval", "--run", vr, "--split", "validation", "--json"); code != 0 {
		t.Fatalf("eval --split validation: %s", stderr)
	}
	var vrep evalJSON
	if err := json.Unmarshal([]byte(out), &vrep); err != nil || len(vrep.OOD) != 0 || len(vrep.Classes) != 4 {
		t.Errorf("eval --split validation of a --classes run: %v, %d OOD rows, classes %v", err, len(vrep.OOD), vrep.Classes)
	}
	// predict names a subset run's classes by their labels in the data
	csv := filepath.Join(tmp, "p.csv")
	if _, stderr, code = run(t, "predict", "--run", rd, "--images", filepath.Join(data, "t10k-images-idx3-ubyte"), "--out", csv); code != 0 {
		t.Fatalf("predict: %s", stderr)
	}
	if b, _ := os.ReadFile(csv); !strings.HasPrefix(string(b), "index,predicted,p0,p2,p3,p5,entropy") {
		t.Errorf("predict header: %.60s", b)
	}
}

// TestMNISTByName trains on MNIST by name (the Go module cache's copy;
// config.json records the name, so eval finds the data again) and scores
// Fashion-MNIST's test images, also by name, as out-of-distribution: the
// standard benchmark the other way round. Skipped where either set is
// absent.
func TestMNISTByName(t *testing.T) {
	for _, n := range datasets.Names() {
		if _, err := datasets.Resolve(n); err != nil {
			t.Skipf("data set %s: %v", n, err)
		}
	}
	rd := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := run(t, "train", "--data", "mnist", "--out", rd, "--arch", "784-32-10", "--train-size", "3000", "--validation", "0",
		"--steps", "300", "--burnin", "100", "--thin", "20", "--quiet"); code != 0 {
		t.Fatalf("train --data mnist: %s", stderr)
	}
	cfg, err := os.ReadFile(filepath.Join(rd, rundir.ConfigFile))
	if err != nil || !strings.Contains(string(cfg), `"data": "mnist"`) {
		t.Fatalf("config.json does not record the data set's name: %v\n%s", err, cfg)
	}
	out, stderr, code := run(t, "eval", "--run", rd, "--ood", "fashion-mnist", "--json")
	if code != 0 {
		t.Fatalf("eval --ood fashion-mnist: %s", stderr)
	}
	var rep evalJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval json: %v", err)
	}
	if rep.Ensemble.Accuracy < 0.8 {
		t.Errorf("MNIST test accuracy %.3f after 300 steps on 3,000 digits: want at least 0.8", rep.Ensemble.Accuracy)
	}
	found := false
	for _, r := range rep.OOD {
		if r.Set == "fashion-mnist" && r.Predictor == evaluate.PredEnsemble && r.Score == evaluate.ScoreEntropy {
			found = true
			t.Logf("fashion-mnist against MNIST, ensemble entropy: AUROC %.3f FPR95 %.3f", *r.AUROC, *r.FPR95)
			if *r.AUROC <= 0.7 || *r.FPR95 >= 0.95 {
				t.Errorf("fashion-mnist scored AUROC %.3f, FPR95 %.3f: want AUROC above 0.7 and FPR95 below 0.95", *r.AUROC, *r.FPR95)
			}
		}
	}
	if !found {
		t.Fatalf("no fashion-mnist row in %+v", rep.OOD)
	}
}

// checkPaired checks eval's paired comparison with the baseline: accuracy,
// NLL, ECE and Brier, then the AUROC of every score on every OOD set (the
// baseline pools two networks, so its mutual information is defined), each
// difference the one of the report's own figures, inside its interval.
func checkPaired(t *testing.T, rep evalJSON) {
	t.Helper()
	if rep.Baseline == nil || len(rep.Paired) != 4+4*3 {
		t.Fatalf("%d paired rows (baseline %v), want 4 figures + 4 sets x 3 scores", len(rep.Paired), rep.Baseline)
	}
	b := *rep.Baseline
	want := []float64{rep.Ensemble.Accuracy - b.Accuracy, rep.Ensemble.NLL - b.NLL, rep.Ensemble.ECE - b.ECE, rep.Ensemble.Brier - b.Brier}
	auroc := map[string]float64{}
	for _, r := range rep.OOD {
		if r.AUROC != nil && r.Predictor != evaluate.PredSingle {
			sign := 1.0
			if r.Predictor == evaluate.PredBaseline {
				sign = -1
			}
			auroc[r.Set+"/"+r.Score] += sign * *r.AUROC
		}
	}
	for i, d := range rep.Paired {
		w := auroc[d.Set+"/"+d.Score]
		if i < 4 {
			w = want[i]
		}
		if math.Abs(d.Diff-w) > 1e-12 || d.Lo > d.Hi || (i < 4) != (d.Figure != evaluate.FigAUROC) {
			t.Errorf("paired row %d %+v: want the difference %.6f of the report's figures, lo <= hi", i, d, w)
		}
	}
}

// TestLoadOODImagesMNISTDir checks eval --ood mnist reads $PTSGHMC_MNIST_DIR
// holding only MNIST's test images (it needs no other file), and that a
// directory without them is an error naming the directory, the file and
// the variable.
func TestLoadOODImagesMNISTDir(t *testing.T) {
	testOnly := t.TempDir()
	img := &datasets.IDX{Type: datasets.IDXUint8, Dims: []int{3, 2, 2}, Data: make([]float64, 12)}
	if err := datasets.WriteIDXFile(filepath.Join(testOnly, datasets.TestImages+".gz"), img, true); err != nil {
		t.Fatal(err)
	}
	trainOnly := t.TempDir()
	if err := datasets.WriteIDXFile(filepath.Join(trainOnly, datasets.TrainImages), img, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
		images    int      // images read, or 0 for an error
		errHas    []string // what the error names
	}{
		{"test images alone", testOnly, 3, nil},
		{"no test images", trainOnly, 0, []string{trainOnly, datasets.TestImages, "$" + datasets.MNISTDirEnv}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(datasets.MNISTDirEnv, tc.dir)
			d, err := loadOODImages(datasets.NameMNIST)
			if tc.images == 0 {
				for _, s := range tc.errHas {
					if err == nil || !strings.Contains(err.Error(), s) {
						t.Fatalf("error %v, want one naming %q", err, s)
					}
				}
				return
			}
			if err != nil || d.N != tc.images || d.D != 4 {
				t.Fatalf("--ood mnist: %v, %v; want %d images of 4 pixels", d, err, tc.images)
			}
		})
	}
}
