//go:build ignore

// patch_span fits the CNN's null-space prior (nullspace.FitPatches, LeNet's
// first convolution: 5x5 patches, "same" padding) to a data set's training
// images at several keeps, and prints the directions left out, the fit's
// time, and the mean energy per patch off the span of training, test and
// uniform-noise patches (the patches of the first 2,000 images of each).
// Run from the repository root:
//
//	go run scripts/patch_span.go [DATA_DIR]
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/nullspace"
)

func main() {
	dir := "/usr/share/datasets/fashion-mnist"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	tr, test, err := datasets.LoadMNIST(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	g := nullspace.ConvPatches(nn.LeNet(nn.PriorConfig{}))
	noise, err := datasets.NoiseImages(2000, tr.D, tr.Classes, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("| keep | directions left out | fit s | training | test | uniform noise |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, keep := range []float64{0.9999, 0.999, 0.99, 0.95} {
		start := time.Now()
		p, err := nullspace.FitPatches(tr, g, keep, 10)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fit := time.Since(start).Seconds()
		fmt.Printf("| %v | %d of %d | %.1f | %s | %s | %s |\n", keep, p.D-p.K, p.D, fit, offSpan(p, g, tr), offSpan(p, g, test), offSpan(p, g, noise))
	}
}

// offSpan returns the mean energy of a patch off p's span, and in all, over
// the patches of the first 2,000 images of d.
func offSpan(p *nullspace.Prior, g nullspace.Patches, d *datasets.Dataset) string {
	oh, ow := g.Positions()
	buf := make([]float64, oh*ow*p.D)
	var off, all float64
	n := min(d.N, 2000)
	for e := 0; e < n; e++ {
		if err := g.Extract(d.Row(e), buf); err != nil {
			return err.Error()
		}
		for q := 0; q < oh*ow; q++ {
			x := buf[q*p.D : (q+1)*p.D]
			for _, v := range x {
				all += v * v
			}
			for j := 0; j < p.D-p.K; j++ {
				dot := 0.0
				for i, v := range x {
					dot += v * p.V[j*p.D+i]
				}
				off += dot * dot
			}
		}
	}
	cnt := float64(n * oh * ow)
	return fmt.Sprintf("%.4f of %.2f", off/cnt, all/cnt)
}
