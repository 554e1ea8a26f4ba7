package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/plots"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// evaluation returns an evaluation of two pooled chains against an sgd
// deep ensemble, built by hand, with every table the page can show.
func evaluation() *evaluate.Report {
	v, wall := 0.91, 83.0
	rel := evaluate.Reliab{Count: []int{0, 3, 5}, Conf: []float64{0, 0.5, 0.9}, Acc: []float64{0, 0.4, 0.95}}
	rep := &evaluate.Report{Runs: []string{"runs/a/chain-1", "runs/a/chain-2"}, Temperature: 0.3, TestCount: 8, Window: rundir.Window{From: 100, To: 500},
		Ensemble: evaluate.Metrics{Accuracy: 0.875, NLL: 0.31, ECE: 0.02, Brier: 0.2, Samples: 6}, Single: evaluate.Metrics{Samples: 1},
		Baseline: &evaluate.Metrics{Accuracy: 0.75, Samples: 2}, Reliab: rel, BaselineReliab: &rel,
		EnsembleInfo: evaluate.PredictorInfo{Networks: 2, Samples: 6, Sampler: "sgnht", WallSeconds: &wall},
		BaselineInfo: &evaluate.PredictorInfo{Runs: []string{"runs/sgd"}, Networks: 2, Samples: 2, Sampler: "sgd"},
		Curve:        []evaluate.CurvePt{{Samples: 1, Accuracy: 0.8, NLL: 0.6}, {Samples: 6, Accuracy: 0.875, NLL: 0.31}},
		HeldOut:      [][]float64{{-0.5, -0.3, -0.4}, {-0.6, -0.2, -0.4}}, RHat: 1.004, ESS: 5.5, Classes: []int{0, 2, 3},
		OOD:       []evaluate.OODResult{{Set: "noise", Score: evaluate.ScoreEntropy, Predictor: evaluate.PredEnsemble, AUROC: &v}},
		Selective: []evaluate.SelectiveResult{{Score: evaluate.ScoreEntropy, Predictor: evaluate.PredEnsemble, AURC: &v}},
		Shift:     []evaluate.ShiftResult{{Kind: evaluate.ShiftNoise, Level: 0.1, Predictor: evaluate.PredEnsemble, Accuracy: 0.8}},
		PerClass:  []evaluate.ClassResult{{Predictor: evaluate.PredEnsemble, Class: 2, Count: 3, Accuracy: 1}},
		Paired: []evaluate.PairedDiff{{Figure: evaluate.FigAccuracy, Diff: 0.125, Lo: 0.05, Hi: 0.2},
			{Figure: evaluate.FigAUROC, Set: "noise", Score: evaluate.ScoreEntropy, Diff: -0.01, Lo: -0.03, Hi: 0.01}},
		Tempering: []*diagnose.Tempering{{Run: "runs/a/chain-1", Temps: []float64{1, 1.5}, SwapAcceptance: []float64{0.3},
			LocalBarrier: []float64{0.4, 0.5}, Barrier: 0.7, Advice: "narrow the ladder"}}}
	return rep
}

// TestWrite checks the page of an evaluation: every table with its rows,
// the predictors' descriptions, the tempered posterior's note, R-hat, the
// ladder and its warning, and each figure embedded as a data URI that
// decodes as the PNG given, with nothing fetched from outside the file.
func TestWrite(t *testing.T) {
	rep := evaluation()
	figs, err := plots.Evaluation(rep)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, rep, figs); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<p id="tempered"><b>Tempered posterior, T = 0.3</b>`, `<p id="window">Only the samples taken from step 100 to step 500 (`, `<table id="metrics">`, "<td>sgd deep ensemble</td><td>2</td><td>0.7500</td>",
		"Ensemble: 2 networks (sgnht), 6 samples, trained in 1m23s.", "sgd deep ensemble: 2 networks (sgd), 2 samples, wall-clock not recorded (runs: <code>runs/sgd</code>)",
		"Trained on classes 0,2,3", `<table id="ood">`, "<td>0.9100</td>", `<table id="selective">`, `<table id="shift">`, `<table id="per-class">`,
		`<table id="paired">`, "<td>accuracy</td><td>&#43;0.1250</td><td>[&#43;0.0500, &#43;0.2000]</td><td>ensemble</td>",
		"<td>auroc noise, entropy</td><td>-0.0100</td><td>[-0.0300, &#43;0.0100]</td><td>no difference shown</td>",
		"split R-hat <b>1.004</b>, bulk ESS <b>5.5</b>", `<table id="chains">`, "<td><code>runs/a/chain-2</code></td><td>3</td><td>-0.4000</td>",
		`<table class="ladder">`, "barrier Lambda 0.7", `<p class="warn">WARNING: narrow the ladder</p>`, "</html>"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(regexp.MustCompile(`(?s)<table id="metrics">.*?</table>`).FindString(html), "<tr>"); n != 1+3 {
		t.Errorf("metrics table: %d rows, want a header and 3", n)
	}
	srcs := regexp.MustCompile(`<img src="data:image/png;base64,([^"]+)"`).FindAllStringSubmatch(html, -1)
	if len(srcs) != len(figs) {
		t.Fatalf("%d images embedded, want %d", len(srcs), len(figs))
	}
	for i, m := range srcs {
		raw, err := base64.StdEncoding.DecodeString(m[1])
		if err != nil || !bytes.Equal(raw, figs[i].PNG) {
			t.Errorf("image %d (%s): not the figure's PNG (%v)", i, figs[i].Name, err)
		}
		if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
			t.Errorf("image %d: %v", i, err)
		}
	}
	if strings.Contains(html, "http://") || strings.Contains(html, "https://") || strings.Contains(html, "src=\"/") {
		t.Error("the page refers to something outside the file")
	}
}

// TestWriteWindow checks the page's note on the step window: the
// Window's phrase (rundir.Window.Phrase), and no note for every sample.
func TestWriteWindow(t *testing.T) {
	for _, tc := range []struct {
		win  rundir.Window
		want string // the note's text before its flags; "" for none
	}{
		{rundir.Window{}, ""},
		{rundir.Window{From: 500}, "Only the samples taken at step 500 or later ("},
		{rundir.Window{To: 700}, "Only the samples taken at step 700 or earlier ("},
		{rundir.Window{From: 500, To: 700}, "Only the samples taken from step 500 to step 700 ("},
	} {
		var b bytes.Buffer
		if err := Write(&b, &evaluate.Report{Runs: []string{"runs/a"}, TestCount: 10, Window: tc.win}, nil); err != nil {
			t.Fatal(err)
		}
		note := regexp.MustCompile(`<p id="window">([^<]*)`).FindStringSubmatch(b.String())
		switch {
		case tc.want == "" && note != nil:
			t.Errorf("window %+v: note %q, want none", tc.win, note[1])
		case tc.want != "" && (note == nil || note[1] != tc.want):
			t.Errorf("window %+v: note %q, want %q", tc.win, note, tc.want)
		}
	}
}

// TestWriteFile writes the page to a file with the evaluation's figures,
// and names the file in the error when it cannot.
func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	if err := WriteFile(path, evaluation()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "<figure id="); n != 7 {
		t.Errorf("%d figures in the page, want 7", n)
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir", "r.html"), evaluation()); err == nil || !strings.Contains(err.Error(), "report") {
		t.Errorf("unwritable path: %v", err)
	}
}

// ExampleWrite writes the page of an evaluation (here a bare one, with no
// figures) and shows its title.
func ExampleWrite() {
	var b bytes.Buffer
	rep := &evaluate.Report{Runs: []string{"runs/a"}, TestCount: 10000}
	if err := Write(&b, rep, nil); err != nil {
		panic(err)
	}
	title := regexp.MustCompile(`<title>(.*)</title>`).FindStringSubmatch(b.String())
	fmt.Println(title[1])
	// Output: ptsghmc evaluation
}
