package main

import (
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// samplerHelp returns the help text of a --sampler flag offering names:
// one line each, with its description (runspec.SamplerDoc).
func samplerHelp(names []string) string {
	var b strings.Builder
	b.WriteString("the sampler, one of:")
	for _, n := range names {
		fmt.Fprintf(&b, "\n  %-8s %s", n, runspec.SamplerDoc(n))
	}
	return b.String()
}

// mixtureSamplers returns the samplers of the mixture command: ptsghmc,
// then the kernels of sampler.Kernels that sample (the mixture is scored by
// its samples' mode weights, so sgd, an optimiser, is not offered; hmc,
// the paper's baseline, is).
func mixtureSamplers() []string {
	names := []string{runspec.PTSGHMC}
	for _, k := range sampler.Kernels {
		if k.Sampler {
			names = append(names, k.Name)
		}
	}
	return names
}
