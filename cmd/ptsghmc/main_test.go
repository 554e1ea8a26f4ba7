package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/bench"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/experiments"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := mainCode(args, &out, &errb)
	return out.String(), errb.String(), code
}

// writeData writes a tiny MNIST-like data set (4x4 images, 3 classes padded
// to 10) in the standard IDX file names.
func writeData(t *testing.T) string {
	// one draw split in two: the test images share the training images'
	// class prototypes (two draws would have unrelated classes)
	all, _ := datasets.SyntheticImages(400, 16, 10, rand.New(rand.NewPCG(1, 2)))
	return writeSplit(t, all, 300, 4, true)
}

// writeSplit writes all's first nTrain examples as the training set and
// the rest as the test set (gzipped when gz), side x side images, in the
// standard IDX file names of a new directory.
func writeSplit(t *testing.T, all *datasets.Dataset, nTrain, side int, gz bool) string {
	t.Helper()
	dir := t.TempDir()
	idx := make([]int, all.N)
	for i := range idx {
		idx[i] = i
	}
	tr, te := all.Subset(idx[:nTrain]), all.Subset(idx[nTrain:])
	if err := datasets.WriteImages(tr, side, side, filepath.Join(dir, datasets.TrainImages), filepath.Join(dir, datasets.TrainLabels), false); err != nil {
		t.Fatal(err)
	}
	ti, tl := filepath.Join(dir, datasets.TestImages), filepath.Join(dir, datasets.TestLabels)
	if gz {
		ti, tl = ti+".gz", tl+".gz"
	}
	if err := datasets.WriteImages(te, side, side, ti, tl, gz); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTrainEvalPredict(t *testing.T) {
	data := writeData(t)
	rd := filepath.Join(t.TempDir(), "run")
	common := []string{"--sampler", "ptsghmc", "--chains", "2", "--lr", "1", "--data", data, "--arch", "16-8-10", "--validation", "50", "--batch", "32", "--burnin", "50", "--thin", "10", "--log-every", "20", "--quiet"}
	out, stderr, code := run(t, append([]string{"train", "--out", rd, "--steps", "60"}, common...)...)
	if code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	if !strings.Contains(out, "validation accuracy") {
		t.Fatalf("train with a validation split does not report it: %q", out)
	}
	// a second train into the same directory refuses without --overwrite
	if _, stderr, code = run(t, append([]string{"train", "--out", rd, "--steps", "60"}, common...)...); code == 0 || !strings.Contains(stderr, "--resume") {
		t.Fatalf("second train: code %d, %s", code, stderr)
	}
	// resume to more steps
	if _, stderr, code = run(t, "train", "--resume", rd, "--steps", "120", "--quiet"); code != 0 {
		t.Fatalf("resume: %s", stderr)
	}
	sgd := filepath.Join(t.TempDir(), "sgd")
	if out, stderr, code = run(t, append(append([]string{"train", "--out", sgd, "--steps", "60"}, common...), "--validation", "0", "--sampler", "sgd", "--chains", "1", "--lr", "0.2")...); code != 0 {
		t.Fatalf("sgd: %s", stderr)
	}
	if strings.Contains(out, "validation") {
		t.Fatalf("train without a validation split reports one: %q", out)
	}
	plots := filepath.Join(t.TempDir(), "plots")
	out, stderr, code = run(t, "eval", "--run", rd, "--baseline", sgd, "--json", "--plot", plots)
	if code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	var rep struct {
		Ensemble struct {
			Accuracy float64
			Samples  int
		}
		Baseline *struct{ Accuracy float64 }
		RHat     float64
		ESS      float64
		HeldOut  [][]float64 `json:"heldout_loglik"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval json: %v\n%s", err, out)
	}
	// Two chains of 7 samples each. The synthetic classes are learnable:
	// after 120 steps the ensemble is far above chance (0.1; here 0.32 with
	// the mid-step thermostat, 0.48 with the former one),
	// and so is the sgd baseline after 60 (here 0.50).
	t.Logf("ensemble accuracy %.3f, baseline %.3f, R-hat %.3f, ESS %.1f", rep.Ensemble.Accuracy, rep.Baseline.Accuracy, rep.RHat, rep.ESS)
	if rep.Ensemble.Samples != 14 || rep.Baseline == nil || rep.Ensemble.Accuracy < 0.25 || rep.Baseline.Accuracy < 0.35 {
		t.Fatalf("eval: %+v", rep)
	}
	// R-hat is that of the two chains' held-out log-likelihood traces,
	// which differ (independent chains, not one run pooled twice).
	if len(rep.HeldOut) != 2 || len(rep.HeldOut[0]) != 7 || len(rep.HeldOut[1]) != 7 || slices.Equal(rep.HeldOut[0], rep.HeldOut[1]) {
		t.Fatalf("held-out traces %v", rep.HeldOut)
	}
	if want := diagnose.SplitRHat(rep.HeldOut); rep.RHat != want || !(rep.RHat > 0) || rep.ESS <= 0 {
		t.Fatalf("R-hat %v (of the traces: %v), ESS %v", rep.RHat, want, rep.ESS)
	}
	windowAccuracy := checkStepWindows(t, rd, rep.HeldOut)
	for _, f := range []string{"reliability.png", "samples.png", "traces.png"} {
		if st, err := os.Stat(filepath.Join(plots, f)); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	out, stderr, code = run(t, "predict", "--run", rd, "--images", filepath.Join(data, datasets.TestImages+".gz"))
	if code != 0 {
		t.Fatalf("predict: %s", stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 101 || !strings.HasPrefix(lines[0], "index,predicted,p0") || !strings.HasSuffix(lines[0], "entropy,mutual_information") {
		t.Fatalf("predict: %d lines, header %q", len(lines), lines[0])
	}
	// predict's classes are eval's ensemble's: same accuracy on the labels
	_, test, err := datasets.LoadMNIST(data)
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for i, line := range lines[1:] {
		f := strings.Split(line, ",")
		sum := 0.0
		for _, v := range f[2 : 2+10] {
			p, _ := strconv.ParseFloat(v, 64)
			sum += p
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Fatalf("predict row %d: probabilities sum to %v", i, sum)
		}
		if f[1] == strconv.Itoa(test.Labels[i]) {
			correct++
		}
	}
	if acc := float64(correct) / float64(test.N); acc != rep.Ensemble.Accuracy {
		t.Fatalf("predict's accuracy %v, eval's %v", acc, rep.Ensemble.Accuracy)
	}
	// predict --from-step and --to-step predict with eval's samples of the same window
	for _, name := range []string{"from", "both"} {
		args := append([]string{"predict", "--run", rd, "--images", filepath.Join(data, datasets.TestImages+".gz")}, stepCases[name]...)
		out, stderr, code = run(t, args...)
		if code != 0 {
			t.Fatalf("predict %v: %s", stepCases[name], stderr)
		}
		correct = 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			f := strings.SplitN(line, ",", 3)
			idx, _ := strconv.Atoi(f[0])
			if f[1] == strconv.Itoa(test.Labels[idx]) {
				correct++
			}
		}
		if acc := float64(correct) / float64(test.N); acc != windowAccuracy[name] {
			t.Fatalf("predict %v: accuracy %v, eval's %v", stepCases[name], acc, windowAccuracy[name])
		}
	}
	if _, stderr, code = run(t, "predict", "--run", rd, "--images", filepath.Join(data, datasets.TestImages+".gz"), "--from-step", "100000"); code == 0 || !strings.Contains(stderr, "no samples at step 100000 or later") {
		t.Fatalf("predict --from-step past the last sample: code %d, %s", code, stderr)
	}
}

// TestCommandErrors checks each bad command line fails with its reason, and
// writes nothing outside the test's temporary directory (the working
// directory, where a default --out would land, stays as it was).
func TestCommandErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadDir(wd)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, "unknown command"},
		{[]string{"train", "--data", "/nonexistent", "--out", out, "--overwrite"}, "/nonexistent"},
		{[]string{"train", "--arch", "784-x-10", "--out", out}, "width"},
		{[]string{"train", "--sampler", "magic", "--out", out}, "sampler"},
		{[]string{"train", "--data", "/nonexistent"}, "/nonexistent"}, // the default --out: must not be created
		{[]string{"eval"}, "--run is required"},
		{[]string{"mixture", "--target", "gauss3d"}, "unknown target"},
		{[]string{"correction", "--method", "magic"}, "unknown method"},
		{[]string{"bench", "--plot", "x.png"}, "ptsghmc bench: --plot needs --sweep"}, // the command's name once
		{[]string{"bench", "--arch", "20-8-3", "--steps", "0"}, "ptsghmc bench: replicas, batch and steps must be positive"},
		{[]string{"bench", "--arch", "20-8-3", "--exchange-test", "coin"}, `exchange_test "coin"`},
	}
	for _, c := range cases {
		_, stderr, code := run(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: code %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
	after, err := os.ReadDir(wd)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the commands wrote into the working directory %s: %d entries before, %d after", wd, len(before), len(after))
	}
}

func TestCorrectionCommand(t *testing.T) {
	out, stderr, code := run(t, "correction", "--sigma", "1", "--step", "0.5")
	if code != 0 {
		t.Fatal(stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "x,cdf" || len(lines) < 40 || !strings.Contains(stderr, "largest CDF error") {
		t.Fatalf("%d lines, stderr %s", len(lines), stderr)
	}
}

func TestMixtureCommand(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := run(t, "mixture", "--target", "gauss2d5", "--steps", "30000", "--burnin", "1000",
		"--out", filepath.Join(dir, "s.csv"), "--plot", filepath.Join(dir, "p.png"))
	if code != 0 {
		t.Fatal(stderr)
	}
	var s experiments.MixtureSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Samples == 0 || len(s.ModeWeights) != 5 {
		t.Fatalf("%v %+v", err, s)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "s.csv"))
	if n := strings.Count(string(b), "\n"); n != s.Samples {
		t.Fatalf("%d csv lines for %d samples", n, s.Samples)
	}
}

func TestBenchCommand(t *testing.T) {
	out, stderr, code := run(t, "bench", "--arch", "20-8-3", "--replicas", "3", "--batch", "8", "--steps", "20", "--exchange", "2", "--json")
	if code != 0 {
		t.Fatalf("bench: %s", stderr)
	}
	var res bench.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bench JSON: %v\n%s", err, out)
	}
	if res.Replicas != 3 || res.StepsPerSec <= 0 || res.Exchanges != 10 || res.GradGFLOPS <= 0 {
		t.Errorf("bench result %+v", res)
	}
	plot := filepath.Join(t.TempDir(), "scaling.png")
	out, stderr, code = run(t, "bench", "--arch", "20-8-3", "--steps", "4", "--sweep", "--plot", plot)
	if code != 0 {
		t.Fatalf("bench --sweep: %s", stderr)
	}
	if strings.Count(out, "\n| ") != 9 {
		t.Errorf("sweep table has %d rows, want 8 and a header:\n%s", strings.Count(out, "\n| ")-1, out)
	}
	if fi, err := os.Stat(plot); err != nil || fi.Size() == 0 {
		t.Errorf("no scaling plot: %v", err)
	}
}

// TestBenchModel checks that bench --model passes its flags to
// bench.Model (whose test checks the figures) and prints its JSON, and
// that an unknown model is refused naming the registered ones.
func TestBenchModel(t *testing.T) {
	out, stderr, code := run(t, "bench", "--model", "lenet", "--engine", "graph", "--batch", "4", "--steps", "2", "--grad-shards", "2", "--json")
	if code != 0 {
		t.Fatalf("bench --model lenet: %s", stderr)
	}
	var res bench.ModelResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bench JSON: %v\n%s", err, out)
	}
	if res.Model != "lenet" || res.Engine != "graph" || res.Shards != 2 || res.Batch != 4 || res.Steps != 2 || res.StepMS <= 0 {
		t.Errorf("bench result %+v", res)
	}
	if _, stderr, code := run(t, "bench", "--model", "no-such-model"); code == 0 || !strings.Contains(stderr, "lenet") {
		t.Errorf("unknown model: code %d, %s", code, stderr)
	}
}

// TestTemperingCommand trains two chains of PT with an adaptive ladder and
// checks that train reports the tempering figures and the verdict on PT
// (docs/tempering.md), that eval pools both
// chains of the run directory, reports the fields by name in --json, and
// plots the barrier and the index process.
func TestTemperingCommand(t *testing.T) {
	data := writeData(t)
	rd := filepath.Join(t.TempDir(), "run")
	out, stderr, code := run(t, "train", "--sampler", "ptsghmc", "--out", rd, "--data", data, "--arch", "16-8-10", "--validation", "0", "--batch", "32",
		"--replicas", "4", "--ladder", "adaptive", "--tmax", "3", "--exchange", "5", "--burnin", "150", "--steps", "400",
		"--thin", "10", "--log-every", "5", "--chains", "2", "--quiet")
	if code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	if strings.Count(out, "tempering after burn-in: ladder T = 1, ") != 2 || !strings.Contains(out, "adapted in 4 tuning rounds") ||
		!strings.Contains(out, "recommended rungs") {
		t.Fatalf("train does not report both chains' tempering:\n%s", out)
	}
	if strings.Count(out, "rejection per pair. In the equal-cost sweep of docs/tempering.md") != 2 {
		t.Errorf("train does not say for both chains whether PT is the right tool:\n%s", out)
	}
	plots := filepath.Join(t.TempDir(), "plots")
	out, stderr, code = run(t, "eval", "--run", rd, "--json", "--plot", plots)
	if code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	var rep struct {
		Runs      []string
		RHat      float64
		Tempering []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval json: %v\n%s", err, out)
	}
	if len(rep.Runs) != 2 || len(rep.Tempering) != 2 || !(rep.RHat > 0) {
		t.Fatalf("eval of a 2-chain run: runs %v, %d tempering reports, R-hat %v", rep.Runs, len(rep.Tempering), rep.RHat)
	}
	for _, f := range []string{"barrier", "recommended_rungs", "swap_acceptance", "round_trips", "local_barrier", "verdict"} {
		if _, ok := rep.Tempering[0][f]; !ok {
			t.Errorf("eval --json tempering has no field %q: %v", f, rep.Tempering[0])
		}
	}
	if st, err := os.Stat(filepath.Join(plots, "tempering.png")); err != nil || st.Size() == 0 {
		t.Errorf("tempering plot: %v", err)
	}
	lines, err := os.ReadFile(filepath.Join(rd, "chain-2", "metrics.jsonl"))
	if err != nil || !strings.Contains(string(lines), `"barrier":`) || !strings.Contains(string(lines), `"walker":`) {
		t.Errorf("chain 2's metrics have no barrier or index process: %v", err)
	}
}

// checkStepWindows checks eval --from-step and --to-step on the two-chain
// run rd of TestTrainEvalPredict (samples at steps 60, 70, ..., 120), whose
// full held-out traces are full: a window keeps each chain's samples in it,
// sample for sample, and a window without samples is refused. It returns
// the ensemble's accuracy of each case of stepCases.
func checkStepWindows(t *testing.T, rd string, full [][]float64) map[string]float64 {
	t.Helper()
	acc := map[string]float64{}
	for _, tc := range []struct {
		name       string
		from, to   int // the window's steps in the JSON
		skip, keep int // samples of each chain before the window, in it
	}{
		{"from", 95, 0, 4, 3},
		{"to", 0, 100, 0, 5},
		{"both", 75, 105, 2, 3},
		{"one sample", 120, 120, 6, 1},
	} {
		args := stepCases[tc.name]
		out, stderr, code := run(t, append([]string{"eval", "--run", rd, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: eval %v: %s", tc.name, args, stderr)
		}
		var rep struct {
			Ensemble struct {
				Samples  int
				Accuracy float64
			}
			FromStep int         `json:"from_step"`
			ToStep   int         `json:"to_step"`
			HeldOut  [][]float64 `json:"heldout_loglik"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: eval json: %v\n%s", tc.name, err, out)
		}
		if rep.FromStep != tc.from || rep.ToStep != tc.to || rep.Ensemble.Samples != 2*tc.keep || len(rep.HeldOut) != 2 {
			t.Fatalf("%s: from %d to %d, %d samples, %d traces; want %d, %d, %d, 2", tc.name, rep.FromStep, rep.ToStep, rep.Ensemble.Samples, len(rep.HeldOut), tc.from, tc.to, 2*tc.keep)
		}
		for c, tr := range rep.HeldOut {
			if want := full[c][tc.skip : tc.skip+tc.keep]; !slices.Equal(tr, want) {
				t.Fatalf("%s: chain %d: trace %v, want %v (of %v)", tc.name, c, tr, want, full[c])
			}
		}
		acc[tc.name] = rep.Ensemble.Accuracy
	}
	checkThinned(t, rd, full)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--thin", "-1"}, "eval: --thin -1: want 0 or 1 (every sample) or k > 1"},
		{[]string{"--from-step", "100000"}, "no samples at step 100000 or later"},
		{[]string{"--to-step", "55"}, "no samples from step 0 to step 55 (0 samples before it; the first after it at step 60)"},
		{[]string{"--from-step", "101", "--to-step", "109"}, "no samples from step 101 to step 109 (5 samples before it; the first after it at step 110)"},
		{[]string{"--from-step", "100", "--to-step", "90"}, "eval: --from-step 100 --to-step 90: want --from-step >= 0 and --to-step 0 (all samples) or a step >= --from-step"},
		{[]string{"--to-step", "-1"}, "--to-step -1: want"},
		{[]string{"--from-step", "-5"}, "--from-step -5 --to-step 0: want"},
	} {
		if _, stderr, code := run(t, append([]string{"eval", "--run", rd}, tc.args...)...); code == 0 || !strings.Contains(stderr, tc.want) {
			t.Fatalf("eval %v: code %d, %q; want an error saying %q", tc.args, code, stderr, tc.want)
		}
	}
	return acc
}

// checkThinned checks eval --thin on checkStepWindows' run: with
// --from-step 70 --thin 3 each chain keeps its samples at steps 70 and 100
// (the first of the window and every third after it), and the JSON says so.
func checkThinned(t *testing.T, rd string, full [][]float64) {
	t.Helper()
	out, stderr, code := run(t, "eval", "--run", rd, "--json", "--from-step", "70", "--thin", "3")
	if code != 0 {
		t.Fatalf("eval --thin 3: %s", stderr)
	}
	var rep struct {
		Ensemble struct{ Samples int }
		FromStep int         `json:"from_step"`
		Thin     int         `json:"thin"`
		HeldOut  [][]float64 `json:"heldout_loglik"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval --thin json: %v\n%s", err, out)
	}
	if rep.FromStep != 70 || rep.Thin != 3 || rep.Ensemble.Samples != 4 || len(rep.HeldOut) != 2 {
		t.Fatalf("eval --thin 3: from %d thin %d, %d samples, %d traces; want 70, 3, 4, 2", rep.FromStep, rep.Thin, rep.Ensemble.Samples, len(rep.HeldOut))
	}
	for c, tr := range rep.HeldOut {
		if want := []float64{full[c][1], full[c][4]}; !slices.Equal(tr, want) {
			t.Fatalf("eval --thin 3: chain %d: trace %v, want %v (of %v)", c, tr, want, full[c])
		}
	}
}

// stepCases are the step windows of checkStepWindows, as command-line flags.
var stepCases = map[string][]string{
	"from":       {"--from-step", "95"},
	"to":         {"--to-step", "100"},
	"both":       {"--from-step", "75", "--to-step", "105"},
	"one sample": {"--from-step", "120", "--to-step", "120"},
}
