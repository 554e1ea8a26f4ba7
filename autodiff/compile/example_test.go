package compile_test

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/nn"
	"gorgonia.org/tensor"
)

func ExampleNew() {
	model, err := nn.LeNet(nn.PriorConfig{Precision: 1, FanIn: true}).Model("lenet")
	if err != nil {
		fmt.Println(err)
		return
	}
	ev, err := compile.New(model, 32, tensor.Float32)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Dim(), ev.MaxBatch())
	// Output: 857738 32
}
