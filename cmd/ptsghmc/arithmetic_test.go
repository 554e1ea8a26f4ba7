package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
	"golang.org/x/sys/cpu"
)

// writeImageData writes an MNIST-shaped synthetic data set (28x28) large
// enough that its products take OpenBLAS's vector kernels.
func writeImageData(t *testing.T) string {
	all, err := datasets.SyntheticImages(700, 784, 10, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	return writeSplit(t, all, 600, 28, false)
}

// trainIn runs train in a child process (OpenBLAS reads OPENBLAS_CORETYPE
// when it loads, before main) with env added, and returns the run's samples.
func trainIn(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], append([]string{"train", "--out", out, "--quiet"}, args...)...)
	cmd.Env = append(append(os.Environ(), "PTSGHMC_TEST_MAIN=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("train %v with %v: %v\n%s", args, env, err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, rundir.SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSameSamplesOnEveryKernel trains one short run under the OpenBLAS
// kernels this CPU runs (OPENBLAS_CORETYPE Haswell, SkylakeX, Cooperlake,
// and OpenBLAS's own choice) and with one or two BLAS threads: in the
// default, pinned arithmetic the samples are the same byte for byte. In
// the native arithmetic, Haswell's and SkylakeX's samples differ (on a CPU
// with AVX-512): the variable reaches OpenBLAS, so the check can fail.
func TestSameSamplesOnEveryKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("trains several runs")
	}
	if !cpu.X86.HasAVX2 {
		t.Skip("OpenBLAS's Haswell kernel needs AVX2")
	}
	data := writeImageData(t)
	args := []string{"--data", data, "--arch", "784-40-10", "--validation", "0", "--batch", "64", "--steps", "60", "--burnin", "20", "--thin", "10", "--seed", "3"}
	cores := []string{"Haswell"}
	if cpu.X86.HasAVX512F {
		cores = append(cores, "SkylakeX", "Cooperlake")
	}
	want := trainIn(t, []string{"OPENBLAS_CORETYPE=Haswell", "OPENBLAS_NUM_THREADS=1"}, args...)
	for _, core := range append(cores, "") {
		for _, threads := range []string{"1", "2"} {
			env := []string{"OPENBLAS_NUM_THREADS=" + threads}
			if core != "" {
				env = append(env, "OPENBLAS_CORETYPE="+core)
			}
			if got := trainIn(t, env, args...); !bytes.Equal(got, want) {
				t.Errorf("pinned arithmetic under %s: samples differ from Haswell's, 1 thread", strings.Join(env, " "))
			}
		}
	}
	if !cpu.X86.HasAVX512F {
		return
	}
	native := append([]string{"--arithmetic", "native"}, args...)
	h := trainIn(t, []string{"OPENBLAS_CORETYPE=Haswell"}, native...)
	s := trainIn(t, []string{"OPENBLAS_CORETYPE=SkylakeX"}, native...)
	if bytes.Equal(h, s) {
		t.Errorf("native arithmetic: Haswell's and SkylakeX's samples are the same: OPENBLAS_CORETYPE did not reach OpenBLAS, and the pinned check above proves nothing")
	}
}
