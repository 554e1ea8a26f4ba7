package onnx_test

import (
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/onnx"
)

// python is the interpreter Debian's python3-torch installs for.
const python = "/usr/bin/python3"

// TestPyTorchExports imports the MLP 784-400-400-10 and the LeNet-5 that
// scripts/onnx_export.py trains and exports, and checks their logits on
// the 10,000 Fashion-MNIST test images against PyTorch's within 1e-4. The
// networks are those of $ONNX_EXPORT_DIR when it is set (the script's
// --out, e.g. the full three epochs); otherwise the script trains them
// briefly (a fifth of an epoch, about half a minute) into a temporary
// directory: the logits must agree whatever the weights. Skipped where
// python3-torch or the data set is absent (the project never needs
// PyTorch; TestPyTorchFixtures checks committed exports without it).
func TestPyTorchExports(t *testing.T) {
	if _, err := os.Stat(filepath.Join(datasets.DefaultDir, "t10k-images-idx3-ubyte.gz")); err != nil {
		t.Skipf("Fashion-MNIST is not installed in %s (apt-get install dataset-fashion-mnist): %v", datasets.DefaultDir, err)
	}
	dir := os.Getenv("ONNX_EXPORT_DIR")
	if dir == "" {
		if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
			t.Skipf("python3-torch is not installed (apt-get install python3-torch), so PyTorch's exports are not checked here: %v", err)
		}
		dir = t.TempDir()
		cmd := exec.Command(python, "../scripts/onnx_export.py", "--out", dir, "--epochs", "0.2")
		cmd.Env = append(os.Environ(), "MALLOC_MMAP_THRESHOLD_=33554432", "MALLOC_TRIM_THRESHOLD_=1073741824")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scripts/onnx_export.py: %v\n%s", err, out)
		} else {
			t.Logf("scripts/onnx_export.py --epochs 0.2:\n%s", out)
		}
	}
	_, test, err := datasets.LoadMNIST(datasets.DefaultDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mlp", "lenet5"} {
		t.Run(name, func(t *testing.T) {
			m, err := onnx.Load(filepath.Join(dir, name+".onnx"), name, nn.PriorConfig{Precision: 0.03, FanIn: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, name+".logits"))
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != 4*test.N*m.Outputs {
				t.Fatalf("%d bytes of PyTorch logits for %d images of %d classes", len(b), test.N, m.Outputs)
			}
			want := make([]float64, test.N*m.Outputs)
			for i := range want {
				want[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
			}
			for _, dt := range []autodiff.DType{autodiff.Float32, autodiff.Float64} {
				got := logitsOf(t, m, autodiff.EngineCompiled, dt, m.Weights, test)
				d := maxAbsDiff(got, want)
				t.Logf("%s, %d parameters, %s: max |logit - PyTorch's| over %d test images = %.3g", name, m.NumParams(), dt, test.N, d)
				if d > 1e-4 {
					t.Errorf("%s: logits differ from PyTorch's by %g (> 1e-4)", dt, d)
				}
			}
		})
	}
}
