package compile

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/testmodel"
	"github.com/ptsghmc/ptsghmc/nn"
	"gorgonia.org/tensor"
)

// TestCompiledKernels checks which kernels the compiler chose: LeNet's two
// convolution blocks fused with their bias, ReLU and pooling (no im2col or
// transpose left), and the all-ops graph's block without pooling (its ReLU
// feeds two nodes), its convolution without bias, and its im2col and
// transpose run on their own.
func TestCompiledKernels(t *testing.T) {
	lenet, err := nn.LeNet(nn.PriorConfig{Precision: 1}).Model("lenet")
	if err != nil {
		t.Fatal(err)
	}
	all, err := nn.NewModel("all-ops", testmodel.AllOps)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model nn.Model
		want  map[string]int
	}{
		{lenet, map[string]int{"convblock": 2, "conv": 0, "relu": 1, "im2colOp": 0, "transposeOp": 0, "maxPoolOp": 0, "linAlgBinOp": 2, "softmaxOp": 1}},
		{all, map[string]int{"convblock": 1, "conv": 1, "relu": 0, "im2colOp": 1, "transposeOp": 1, "maxPoolOp": 1}},
	} {
		p, _, err := compileModel[float32](c.model, 2, tensor.Float32, true)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, k := range p.ops {
			got[k]++
		}
		for k, n := range c.want {
			if got[k] != n {
				t.Errorf("%s: %d %s steps, want %d (steps %v)", c.model.Name, got[k], k, n, p.ops)
			}
		}
	}
}

// TestCompiledMACs checks the multiply-add count against a hand count for
// LeNet: per example, conv1 32 filters of 1*5*5 at 28*28 positions, forward
// and filter gradient (the images need no adjoint); conv2 64 of 32*5*5 at
// 14*14, forward, filter and input adjoints; fc1 3136x256 and fc2 256x10,
// three products each. The forward-only plan has the forward third.
func TestCompiledMACs(t *testing.T) {
	model, err := nn.LeNet(nn.PriorConfig{Precision: 1}).Model("lenet")
	if err != nil {
		t.Fatal(err)
	}
	conv1 := int64(32 * 25 * 28 * 28)
	conv2 := int64(64 * 800 * 14 * 14)
	fc := int64(3136*256 + 256*10)
	const batch = 3
	ce, err := New(model, batch, tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if want := batch * (2*conv1 + 3*conv2 + 3*fc); ce.MACs() != want {
		t.Fatalf("gradient MACs %d, hand count %d", ce.MACs(), want)
	}
	fw, err := NewForward(model, batch, tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if want := batch * (conv1 + conv2 + fc); fw.MACs() != want {
		t.Fatalf("forward MACs %d, hand count %d", fw.MACs(), want)
	}
}

// TestReluMask checks the branch-free mask against z >= 0 on zeros of both
// signs, infinities, NaNs, subnormals and ordinary values.
func TestReluMask(t *testing.T) {
	zs := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(), 5e-324, -5e-324, 1e-40, -1e-40, 3.5, -2.25}
	z32 := make([]float32, len(zs))
	for i, v := range zs {
		z32[i] = float32(v)
	}
	g64, g32 := make([]float64, len(zs)), make([]float32, len(zs))
	for i := range zs {
		g64[i], g32[i] = 7, 7
	}
	reluMask(zs, g64)
	reluMask(z32, g32)
	for i, v := range zs {
		want := 0.0
		if v >= 0 {
			want = 7
		}
		w32 := float32(0)
		if z32[i] >= 0 {
			w32 = 7
		}
		if g64[i] != want || g32[i] != w32 {
			t.Errorf("z %v: float64 mask kept %v (want %v), float32 %v (want %v)", v, g64[i], want, g32[i], w32)
		}
	}
}
