package runspec

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
)

func TestSelectClasses(t *testing.T) {
	d := &datasets.Dataset{N: 6, D: 1, X: []float32{0, 1, 2, 3, 4, 5}, Classes: 4, Labels: []int{0, 1, 2, 3, 2, 1}}
	in, held, err := SelectClasses(d, []int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if in.N != 3 || in.Classes != 2 || in.X[0] != 0 || in.Labels[0] != 1 || in.Labels[1] != 0 || in.Labels[2] != 0 {
		t.Errorf("in: %+v", in)
	}
	if held.N != 3 || held.X[0] != 1 || held.X[1] != 3 || held.X[2] != 5 || held.Classes != 2 {
		t.Errorf("held out: %+v", held)
	}
	if _, _, err := SelectClasses(d, []int{0, 7}); err == nil {
		t.Error("class 7 of 4 accepted")
	}
	d.Labels[3] = 2 // no example of class 3 left
	if _, _, err := SelectClasses(d, []int{2, 3}); err == nil || !strings.Contains(err.Error(), "class 3 has no example") {
		t.Errorf("class 3 without an example: %v, want it named", err)
	}
	for _, bad := range []string{"1", "1,1", "a,2", "-1,2"} {
		if _, err := ParseClasses(bad); err == nil {
			t.Errorf("ParseClasses(%q) accepted", bad)
		}
	}
	if c, err := ParseClasses(" 3, 0,9 "); err != nil || FormatClasses(c) != "3,0,9" {
		t.Errorf("ParseClasses: %v %v", c, err)
	}
}

func TestClassesModel(t *testing.T) {
	c := DefaultConfig()
	c.Classes = []int{0, 4, 7}
	if _, err := c.NNModel(DefaultSetup().Models, &datasets.Dataset{D: 784, Classes: 3}); err == nil || !strings.Contains(err.Error(), "--arch 784-400-400-3") {
		t.Errorf("arch 784-400-400-10 with 3 classes: %v, want the arch it needs", err)
	}
	c.Model, c.Arch = "lenet", ""
	m, err := c.NNModel(DefaultSetup().Models, &datasets.Dataset{D: 784, Classes: 3})
	if err != nil || m.Outputs != 3 {
		t.Errorf("lenet on 3 classes: %v outputs, %v", m.Outputs, err)
	}
	if err := CheckSameClasses("a", []int{0, 4, 7}, "b", nil); err == nil || !strings.Contains(err.Error(), "run b was trained on all classes, run a on classes 0,4,7") {
		t.Errorf("pooling runs of other classes: %v", err)
	}
	c.Classes = []int{3, 3}
	if err := c.Validate(DefaultSetup()); err == nil {
		t.Error("classes 3,3 validated")
	}
}

// TestClassesONNX checks that --classes with an ONNX model whose output
// layer has other than that many classes says plainly that --classes does
// not apply to it, and that the model still fits data of its own classes.
func TestClassesONNX(t *testing.T) {
	c := DefaultConfig()
	c.Model, c.Arch = filepath.Join("..", "onnx", "testdata", "tiny_mlp.onnx"), ""
	if _, err := c.NNModel(DefaultSetup().Models, &datasets.Dataset{D: 784, Classes: 10}); err != nil {
		t.Fatalf("all classes: %v", err)
	}
	c.Classes = []int{0, 1}
	_, err := c.NNModel(DefaultSetup().Models, &datasets.Dataset{D: 784, Classes: 2})
	for _, want := range []string{"has 10 outputs, but --classes 0,1 trains 2 classes", "--classes does not apply to an ONNX model"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--classes 0,1 with a 10-class ONNX model: %v, want an error with %q", err, want)
		}
	}
}

func ExampleSelectClasses() {
	// Six examples of four classes; a model trained on classes 2 and 0.
	d := &datasets.Dataset{N: 6, D: 1, X: []float32{0, 1, 2, 3, 4, 5}, Classes: 4, Labels: []int{0, 1, 2, 3, 2, 1}}
	in, heldOut, _ := SelectClasses(d, []int{2, 0})
	fmt.Println("trained:", in.X, "labels", in.Labels, "of", in.Classes, "classes; held out:", heldOut.X)
	// Output: trained: [0 2 4] labels [1 0 0] of 2 classes; held out: [1 3 5]
}
