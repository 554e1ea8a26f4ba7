package onnx_test

import (
	"fmt"
	"log"

	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/onnx"
)

// Load reads a network PyTorch exported (a 784-16-10 MLP with a softmax
// at its output) as a model: its layout, its trained weights and what was
// imported.
func ExampleLoad() {
	m, err := onnx.Load("testdata/tiny_mlp.onnx", "tiny", nn.PriorConfig{Precision: 0.03, FanIn: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Name, m.Inputs, "inputs,", m.Outputs, "classes")
	fmt.Println(m.Layout)
	fmt.Println(len(m.Weights) == m.NumParams(), m.Layout[0].Prior.Precision)
	fmt.Println(m.Description)
	// Output:
	// tiny 784 inputs, 10 classes
	// layers.0.weight.T:784x16,layers.0.bias:16,layers.1.weight.T:16x10,layers.1.bias:10
	// true 23.52
	// ONNX network (pytorch 1.13.0, opset 14): input "x" [1 28 28] per example, 4 learnable tensors (12730 parameters); nodes Flatten x1, Gemm x2, Relu x1, Softmax x1; the output's Softmax is stripped: the model's logits are its input, and its likelihood is categorical on them
}
