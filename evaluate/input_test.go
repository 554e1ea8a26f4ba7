package evaluate

import (
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// mustScore is Score of input known to fit.
func mustScore(t testing.TB, probs []float64, labels []int, k int) Metrics {
	t.Helper()
	m, err := Score(probs, labels, k)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustScoresFromSamples is ScoresFromSamples of input known to fit.
func mustScoresFromSamples(t testing.TB, samples [][]float64, k int) UncertaintyScores {
	t.Helper()
	u, err := ScoresFromSamples(samples, k)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// mustRotate is RotateImages of images known to be side x side.
func mustRotate(t testing.TB, d *datasets.Dataset, side int, deg float64) *datasets.Dataset {
	t.Helper()
	r, err := RotateImages(d, side, deg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkErr fails unless err is an error holding every string of want
// (what was expected and what was found).
func checkErr(t *testing.T, name string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one naming %q", name, want)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", name, err, w)
		}
	}
}

// TestScoreRefusesMismatch checks that Score and Reliability return an
// error naming the lengths expected and found, and do not panic, on
// probabilities that are not one row of k per label, on no labels, on a
// label outside [0, k) and on k < 1.
func TestScoreRefusesMismatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		probs  []float64
		labels []int
		k      int
		want   []string
	}{
		{"probabilities short", []float64{0.5, 0.5}, []int{0, 1}, 2, []string{"2 labels of 2 classes need 4 probabilities, have 2"}},
		{"probabilities long", []float64{0.5, 0.5, 0.5, 0.5, 1, 0}, []int{0, 1}, 2, []string{"need 4 probabilities, have 6"}},
		{"label k", []float64{0.5, 0.5}, []int{2}, 2, []string{"label 2 of example 0 outside [0, 2)"}},
		{"label negative", []float64{0.5, 0.5, 0.5, 0.5}, []int{0, -1}, 2, []string{"label -1 of example 1"}},
		{"no classes", []float64{0.5, 0.5}, []int{0}, 0, []string{"0 classes"}},
		{"no labels", nil, nil, 2, []string{"no labels"}},
	} {
		_, err := Score(tc.probs, tc.labels, tc.k)
		checkErr(t, "Score: "+tc.name, err, append([]string{"score: "}, tc.want...))
		r, err := Reliability(tc.probs, tc.labels, tc.k)
		checkErr(t, "Reliability: "+tc.name, err, append([]string{"reliability: "}, tc.want...))
		if r.Count != nil {
			t.Errorf("Reliability: %s: counts %v with an error", tc.name, r.Count)
		}
	}
	r, err := Reliability([]float64{0.9, 0.1, 0.3, 0.7}, []int{0, 0}, 2)
	if err != nil || r.Count[13] != 1 || r.Count[10] != 1 || r.Acc[13] != 1 || r.Acc[10] != 0 {
		t.Errorf("Reliability of fitting input: %+v, %v", r, err)
	}
}

// TestScoresFromSamplesRefusesMismatch checks that ScoresFromSamples
// returns an error naming the lengths, not a panic (a shorter later
// sample) or scores of the first sample's rows alone (a longer one).
func TestScoresFromSamplesRefusesMismatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples [][]float64
		k       int
		want    []string
	}{
		{"later sample shorter", [][]float64{{0.5, 0.5, 0.5, 0.5}, {0.5, 0.5}}, 2, []string{"sample 1 has 2 probabilities, sample 0 has 4 (2 rows of 2 classes)"}},
		{"later sample longer", [][]float64{{0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5, 0.1, 0.9}}, 2, []string{"sample 2 has 4 probabilities, sample 0 has 2"}},
		{"not rows of k", [][]float64{{0.2, 0.3, 0.5}}, 2, []string{"sample 0 has 3 probabilities", "multiple of 2"}},
		{"empty sample", [][]float64{{}}, 2, []string{"sample 0 has 0 probabilities"}},
		{"no samples", nil, 2, []string{"no samples"}},
		{"no classes", [][]float64{{1}}, 0, []string{"0 classes"}},
	} {
		u, err := ScoresFromSamples(tc.samples, tc.k)
		checkErr(t, tc.name, err, append([]string{"uncertainty scores: "}, tc.want...))
		if u.Entropy != nil {
			t.Errorf("%s: scores %v with an error", tc.name, u.Entropy)
		}
	}
}

// TestRotateImagesRefusesMismatch checks that RotateImages refuses images
// that are not side x side, or too few values, with an error and no panic.
func TestRotateImagesRefusesMismatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *datasets.Dataset
		side int
		want []string
	}{
		{"side too large", &datasets.Dataset{N: 1, D: 4, X: make([]float32, 4)}, 3, []string{"images of 4 pixels, want 3x3 = 9"}},
		{"side too small", &datasets.Dataset{N: 1, D: 9, X: make([]float32, 9)}, 2, []string{"images of 9 pixels, want 2x2 = 4"}},
		{"side 0", &datasets.Dataset{N: 1, D: 4, X: make([]float32, 4)}, 0, []string{"want 0x0"}},
		{"values short", &datasets.Dataset{N: 2, D: 4, X: make([]float32, 6)}, 2, []string{"2 images of 4 pixels need 8 values, have 6"}},
	} {
		_, err := RotateImages(tc.d, tc.side, 30)
		checkErr(t, tc.name, err, append([]string{"rotate: "}, tc.want...))
	}
}

// TestEnsembleRefusesBadData checks that an ensemble is not made of a spec
// without layers, or on data whose values or labels do not fit it: Add
// (too few values, no labels) and Metrics (a label outside the classes,
// more labels than examples) panicked on them.
func TestEnsembleRefusesBadData(t *testing.T) {
	spec := nn.Spec{Sizes: []int{2, 2}, PriorPrecision: []float64{1}}
	fits := &datasets.Dataset{N: 2, D: 2, X: make([]float32, 4), Classes: 2, Labels: []int{0, 1}}
	base, err := NewEnsemble(spec, fits)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewEnsemble(nn.Spec{}, fits); err == nil || !strings.Contains(err.Error(), "spec of 0 layer widths") {
		t.Errorf("spec without layers: error %v", err)
	}
	for _, tc := range []struct {
		name string
		d    *datasets.Dataset
		want []string
	}{
		{"values short", &datasets.Dataset{N: 2, D: 2, X: make([]float32, 3), Classes: 2, Labels: []int{0, 1}}, []string{"2 examples of 2 features need 4 values, have 3"}},
		{"no examples", &datasets.Dataset{D: 2, Classes: 2}, []string{"0 examples of 2 features"}},
		{"label outside", &datasets.Dataset{N: 2, D: 2, X: make([]float32, 4), Classes: 2, Labels: []int{0, 5}}, []string{"label 5 of example 1 outside [0, 2)"}},
		{"labels long", &datasets.Dataset{N: 2, D: 2, X: make([]float32, 4), Classes: 2, Labels: []int{0, 1, 1}}, []string{"2 examples, 3 labels"}},
		{"no labels", &datasets.Dataset{N: 2, D: 2, X: make([]float32, 4), Classes: 2}, []string{"2 examples, 0 labels"}},
	} {
		_, err := NewEnsemble(spec, tc.d)
		checkErr(t, "NewEnsemble: "+tc.name, err, append([]string{"ensemble: "}, tc.want...))
		_, err = base.On(tc.d)
		checkErr(t, "On: "+tc.name, err, append([]string{"ensemble: "}, tc.want...))
	}
}

// TestExtraImagesShape checks that the sets scored beside the test set
// keep their images' dimensions (asOOD, BuiltinOOD, the shifts) and that a
// CNN refuses one of another shape than it takes, even of as many pixels,
// naming the set; an MLP, which takes flat rows, does not.
func TestExtraImagesShape(t *testing.T) {
	test := &datasets.Dataset{N: 2, D: 784, X: make([]float32, 2*784), Classes: 10, Labels: []int{0, 1}, Image: []int{28, 28}}
	ood := func(dims ...int) OODSet {
		return OODSet{Name: "ood.idx", Data: &datasets.Dataset{N: 1, D: 784, X: make([]float32, 784), Image: dims}}
	}
	cnn := nn.Model{Name: "lenet", Conv: &nn.ConvNet{Height: 28, Width: 28, Channels: 1}}
	mlp := nn.Model{Name: "mlp"}
	for _, tc := range []struct {
		name  string
		set   OODSet
		model nn.Model
		want  string // "": no error
	}{
		{"cnn, 14x56", ood(14, 56), cnn, "out-of-distribution set ood.idx: model lenet: the data's images are 14x56, the network takes 28x28 images"},
		{"cnn, 1x784", ood(1, 784), cnn, "images are 1x784"},
		{"cnn, 3x28x28", ood(3, 28, 28), cnn, "images are 3x28x28"},
		{"cnn, 28x28", ood(28, 28), cnn, ""},
		{"cnn, 1x28x28", ood(1, 28, 28), cnn, ""},
		{"cnn, shape not known", ood(), cnn, ""},
		{"mlp, 14x56", ood(14, 56), mlp, ""},
	} {
		d, err := asOOD(tc.set, test.D, test.Classes)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		extras := []*evalSet{{name: tc.set.Name, data: d}}
		err = checkExtraImages(tc.model, extras)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		checkErr(t, tc.name, err, []string{tc.want})
	}
	// The sets made from the test images are of its shape, and pass.
	var extras []*evalSet
	for _, s := range BuiltinOOD(test, 1) {
		extras = append(extras, &evalSet{name: s.Name, data: s.Data})
	}
	levels, err := shiftLevels([]string{ShiftRotate, ShiftNoise}, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range levels {
		extras = append(extras, &evalSet{name: levels[i].name(), data: levels[i].data, shift: &levels[i]})
	}
	for _, x := range extras {
		if len(x.data.Image) != 2 || x.data.Image[0] != 28 || x.data.Image[1] != 28 {
			t.Errorf("%s: image dimensions %v, want the test images' 28x28", x.name, x.data.Image)
		}
	}
	if err := checkExtraImages(cnn, extras); err != nil {
		t.Error(err)
	}
}

// TestEnsembleRefusesImageShape checks that a CNN's ensemble, and one
// retargeted with On, refuse images of another shape than the network's,
// as many values or not (export and eval's every set make their
// ensembles so), and take them with dimensions of 1 anywhere.
func TestEnsembleRefusesImageShape(t *testing.T) {
	model, err := nn.LeNet(nn.PriorConfig{Precision: 1, FanIn: true}).Model("lenet")
	if err != nil {
		t.Fatal(err)
	}
	images := func(dims ...int) *datasets.Dataset {
		return &datasets.Dataset{N: 1, D: 784, X: make([]float32, 784), Classes: 10, Labels: []int{0}, Image: dims}
	}
	base, err := NewModelEnsembleOn(autodiff.EnginePlan, model, images(28, 28))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		d    *datasets.Dataset
		want string // "" for none
	}{
		{"28x28", images(28, 28), ""},
		{"28x28x1", images(28, 28, 1), ""},
		{"unknown", images(), ""},
		{"14x56", images(14, 56), "the data's images are 14x56, the network takes 28x28"},
	} {
		_, err := NewModelEnsembleOn(autodiff.EnginePlan, model, tc.d)
		_, onErr := base.On(tc.d)
		for name, e := range map[string]error{"NewModelEnsembleOn": err, "On": onErr} {
			if tc.want == "" && e != nil || tc.want != "" && (e == nil || !strings.Contains(e.Error(), tc.want)) {
				t.Errorf("%s, %s: %v; want an error saying %q", name, tc.name, e, tc.want)
			}
		}
	}
}
