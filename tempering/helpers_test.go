package tempering

import (
	"bytes"
	"slices"
	"testing"

	"github.com/ptsghmc/ptsghmc/internal/chaintest"
)

// The chain helpers the samplers' tests share (package chaintest).
var (
	moments         = chaintest.Moments
	runChain        = chaintest.RunChain
	halfSquaredNorm = chaintest.HalfSquaredNorm
)

// sameChains fails t when two PT states' rungs (theta, p, xi, U) or random
// streams differ, saying how they came to be compared (what).
func sameChains(t *testing.T, a, b *PTState, what string) {
	t.Helper()
	for r := range a.Rungs {
		x, y := a.Rungs[r], b.Rungs[r]
		if !slices.Equal(x.Theta, y.Theta) || !slices.Equal(x.P, y.P) || x.Xi != y.Xi || x.U != y.U {
			t.Fatalf("rung %d differs %s", r, what)
		}
	}
	for j := range a.Streams {
		sa, _ := a.Streams[j].MarshalBinary()
		sb, _ := b.Streams[j].MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Fatalf("stream %d differs %s", j, what)
		}
	}
}
