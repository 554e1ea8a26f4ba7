package sampler

import (
	"math/rand/v2"
	"testing"
)

// TestFillVectorSame: fill gives the same variates, in the same order and
// leaving the same state, with the vector fast path as without it, over
// lengths that end inside a block, across successive calls (a spare half
// carried over) and over enough draws for every kind of rejection.
func TestFillVectorSame(t *testing.T) {
	if !hasZigAVX512Build() {
		t.Skip("this CPU or build has no vector fast path")
	}
	defer func() { vectorNormals = true }()
	lengths := []int{1, 15, 16, 17, 31, 33, 256, 1000, 4099}
	for seed := uint64(1); seed <= 20; seed++ {
		draw := func(vec bool) ([]float64, normalSource) {
			vectorNormals = vec
			ns := newNormalSource(rand.New(rand.NewPCG(seed, 3)))
			var out []float64
			for _, n := range lengths {
				buf := make([]float64, n)
				ns.fill(buf)
				out = append(out, buf...)
			}
			return out, ns
		}
		want, wantNS := draw(false)
		got, gotNS := draw(true)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: variate %d is %v with the vector path, %v without", seed, i, got[i], want[i])
			}
		}
		if gotNS != wantNS {
			t.Fatalf("seed %d: state %+v with the vector path, %+v without", seed, gotNS, wantNS)
		}
	}
}

// BenchmarkNormalFillPaths times fill per variate with and without the
// vector fast path.
func BenchmarkNormalFillPaths(b *testing.B) {
	defer func() { vectorNormals = true }()
	for _, vec := range []bool{false, true} {
		name := "scalar"
		if vec {
			name = "vector"
		}
		b.Run(name, func(b *testing.B) {
			vectorNormals = vec
			ns := newNormalSource(rand.New(rand.NewPCG(1, 2)))
			buf := make([]float64, 256)
			for i := 0; i < b.N; i += len(buf) {
				ns.fill(buf)
			}
		})
	}
}
