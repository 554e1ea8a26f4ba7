package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

func BenchmarkZZCompiledLeNet1(b *testing.B) {
	model, _ := nn.LeNet(nn.PriorConfig{Precision: 1}).Model("lenet")
	rng := rand.New(rand.NewPCG(1, 2))
	data, _ := datasets.SyntheticImages(1024, 784, 10, rng)
	theta := make([]float64, model.NumParams())
	model.Layout.Init(theta, rng)
	grad := make([]float64, len(theta))
	idx := rng.Perm(1024)[:128]
	SetBLASThreads(1)
	ev, _ := Compile(model, 128, Float32)
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		ev.Eval(theta, data, idx, 60000.0/128, grad, nil)
	}
	b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(b.N), "cpu-ms")
}
