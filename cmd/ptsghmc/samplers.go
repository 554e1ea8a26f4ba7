package main

import (
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/runspec"
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
