//go:build ignore

// skip_span fits the image-space span of the CNN's skip branch
// (nullspace.Fit, as train --null-space-skip KEEP does) to a data set's
// training images at several keeps, and prints the directions left out,
// what they cost LeNet's step (the branch's multiply-adds at batch 128,
// one gradient graph and two), the fit's time, and the mean energy per
// image off the span, and in all, of the first 2,000 training, test,
// inverted test and uniform-noise images. Run from the repository root:
//
//	go run scripts/skip_span.go [DATA_DIR]
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
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
	noise, err := datasets.NoiseImages(2000, tr.D, tr.Classes, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	inverted := test.Subset(first(min(test.N, 2000)))
	inverted.X = append([]float32(nil), inverted.X...)
	for i, v := range inverted.X {
		inverted.X[i] = 1 - v
	}
	fmt.Println("| keep | directions left out | multiply-adds a step (1 graph, 2) | fit s | training | test | inverted test | uniform noise |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, keep := range []float64{0.999, 0.9999} {
		start := time.Now()
		p, err := nullspace.Fit(tr, keep, 10)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fit := time.Since(start).Seconds()
		l := p.D - p.K
		fmt.Printf("| %v | %d of %d | %.3g, %.3g | %.1f | %s | %s | %s | %s |\n", keep, l, p.D, cost(l, 1), cost(l, 2), fit,
			offSpan(p, tr), offSpan(p, test), offSpan(p, inverted), offSpan(p, noise))
	}
}

// cost returns the skip branch's multiply-adds in a LeNet step at batch
// 128 (D = 784 image values, n = 256 units) with L directions left out,
// its gradient split over shards graphs: each graph computes V^T W' and
// its adjoint (2 L D n), the batch x V (B D L) and (x V)(V^T W') with its
// adjoint (2 B L n).
func cost(l, shards int) float64 {
	const b, d, n = 128, 784, 256
	return float64(shards*2*l*d*n + b*d*l + 2*b*l*n)
}

// offSpan returns the mean energy of an image off p's span, and in all,
// over the first 2,000 images of d.
func offSpan(p *nullspace.Prior, d *datasets.Dataset) string {
	var off, all float64
	n := min(d.N, 2000)
	for e := 0; e < n; e++ {
		x := d.Row(e)
		for _, v := range x {
			all += float64(v) * float64(v)
		}
		for j := 0; j < p.D-p.K; j++ {
			dot := 0.0
			for i, v := range x {
				dot += float64(v) * p.V[j*p.D+i]
			}
			off += dot * dot
		}
	}
	return fmt.Sprintf("%.4f of %.1f", off/float64(n), all/float64(n))
}

func first(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
