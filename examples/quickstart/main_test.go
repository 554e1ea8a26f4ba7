package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// TestRun runs the program on a tiny synthetic data set in the IDX layout.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	tr, _ := datasets.SyntheticImages(300, 16, 10, rng)
	te, _ := datasets.SyntheticImages(100, 16, 10, rng)
	if err := datasets.WriteImages(tr, 4, 4, filepath.Join(dir, datasets.TrainImages), filepath.Join(dir, datasets.TrainLabels), false); err != nil {
		t.Fatal(err)
	}
	if err := datasets.WriteImages(te, 4, 4, filepath.Join(dir, datasets.TestImages), filepath.Join(dir, datasets.TestLabels), false); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	if err := run(dir, out, "16-8-10", 400); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "posterior.npz")); err != nil {
		t.Fatal(err)
	}
}

// TestREADMEShowsThisProgram checks that README.md's library example is
// this file, so that the README's program is one that compiles and runs.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- program: examples/quickstart/main.go -->\n```go\n"
	_, after, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("README.md has no %q", marker)
	}
	block, _, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatal("README.md: the program's code block does not end")
	}
	if !bytes.Equal([]byte(block), src) {
		t.Fatal("README.md's library program differs from examples/quickstart/main.go: copy the file into the README")
	}
}
