package compile

import (
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// The test-only hooks of the A/B timing (ab_test.go, package compile_test,
// which also imports autodiff for its sharded evaluator).

// KernelSet is kernelSet, for the A/B timing.
type KernelSet = kernelSet

// The faster kernels by group, for the A/B timing.
const (
	FastColumns     = fastColumns
	FastPooling     = fastPooling
	FastPoolRelu    = fastPoolRelu
	FastReluPool    = fastReluPool
	FastBiasSums    = fastBiasSums
	FastBiasPool    = fastBiasReluPool
	FastEdges       = fastEdges
	FastRows        = fastRows
	FastPoolScatter = fastPoolScatter
	FastPoolVector  = fastBiasReluPoolVector
	FastScatterVec  = fastPoolScatterVector
	AllFast         = allFast
)

// SetReferenceKernels runs the kernels ref names as the reference until the
// function it returns is called.
func SetReferenceKernels(ref kernelSet) (restore func()) {
	referenceKernels = ref
	return func() { referenceKernels = 0 }
}

// LeNetSetup is lenetSetup, for the A/B timing.
func LeNetSetup(tb testing.TB, batch int) (nn.Model, *datasets.Dataset, []float64, []int) {
	return lenetSetup(tb, batch)
}

// CNN3Setup is convNetSetup for nn.CNN3, for the A/B timing.
func CNN3Setup(tb testing.TB, batch int) (nn.Model, *datasets.Dataset, []float64, []int) {
	return convNetSetup(tb, nn.CNN3(nn.PriorConfig{Precision: 1}), batch)
}
