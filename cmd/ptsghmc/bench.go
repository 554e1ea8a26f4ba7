package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/bench"
	"github.com/ptsghmc/ptsghmc/plots"
	"github.com/ptsghmc/ptsghmc/sampler"
)

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s bench.Settings
	fs.StringVar(&s.Arch, "arch", "784-400-400-10", "architecture")
	fs.IntVar(&s.Replicas, "replicas", 10, "replicas")
	fs.IntVar(&s.Batch, "batch", 128, "minibatch size")
	fs.IntVar(&s.Steps, "steps", 50, "timed steps (after 5 warm-up steps; 3 with --model)")
	fs.StringVar(&s.DType, "dtype", "float32", "float32 or float64")
	fs.IntVar(&s.Every, "exchange", 10, "steps between exchange rounds (0: none; no exchange with one replica)")
	fs.StringVar(&s.ExchangeTest, "exchange-test", "", "the swap test, as train's flag: barker (the corrected minibatch Barker test, train's default) or resghmc (approximate, one batch)")
	fs.IntVar(&s.XBatch, "xbatch", 0, "an exchange test's first batch, as train's flag (0: train's default, 256; 10000 or more: every test exact on the 10,000 images)")
	fs.BoolVar(&s.SharedStart, "shared-start", false, "start every replica from one initialisation (default: each replica its own, as in the PyTorch script)")
	fs.StringVar(&s.Model, "model", "", "time one SGNHT step (minibatch gradient and update) of this registered model instead (lenet, cnn3)")
	fs.StringVar(&s.Engine, "engine", "", "with --model: compiled (the graph compiler, the default) or graph (Gorgonia's VM); for an MLP: compiled (its graph, what train runs: the default) or plan (train's older name of the same engine; the hand-written BLAS plan it replaced is the tests' reference)")
	fs.Float64Var(&s.NullSpace, "null-space-prior", 0, "with --model: time the model as train --null-space-prior of this scale samples it (a CNN's first kernel K' A computed at every pass; the prior fitted to noise images; 0: none)")
	fs.IntVar(&s.Shards, "grad-shards", 0, "with --model: split each gradient over this many graphs in parallel (0: one per core, up to 4)")
	arith := fs.String("arithmetic", autodiff.ArithmeticPinned, "matrix products: pinned (the same bits on every machine) or native (the BLAS library's kernel for this CPU)")
	ahead := fs.Bool("noise-ahead", true, "draw a streamed step's injected noise on another goroutine while its gradient is computed (the same variates; false: in the update, to time the difference)")
	asJSON := fs.Bool("json", false, "print JSON")
	sweep := fs.Bool("sweep", false, "time replicas 1, 2, 4, 10, 20 at --batch, and batch 32, 128, 512 at --replicas; print a table")
	plotPath := fs.String("plot", "", "with --sweep: write the scaling plot to this PNG file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc bench [--arch A] [--replicas R] [--batch B] [--exchange N] [--exchange-test barker|resghmc] [--xbatch N] [--steps N] [--dtype float32|float64] [--engine plan|compiled] [--json] [--sweep [--plot p.png]]\n       ptsghmc bench --model lenet [--engine compiled|graph] [--grad-shards N] [--null-space-prior S] [--batch B] [--steps N] [--dtype float32|float64] [--json]\n\nTimes full PT-SGHMC steps of an MLP, or one SGNHT step of a registered model, on MNIST-shaped noise images, the PyTorch twins' data.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *plotPath != "" && !*sweep {
		return fmt.Errorf("bench: --plot needs --sweep")
	}
	if s.NullSpace != 0 && s.Model == "" {
		return fmt.Errorf("bench: --null-space-prior needs --model (an MLP's prior maps its inputs once: no cost a step)")
	}
	sampler.NoiseAhead.Store(*ahead)
	if err := autodiff.UseArithmetic(*arith); err != nil {
		return fmt.Errorf("--arithmetic: %w", err)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "arithmetic: %s\n", autodiff.CurrentArithmetic())
	}
	switch {
	case s.Model != "":
		if *sweep {
			return fmt.Errorf("bench: --sweep times MLPs; drop it with --model")
		}
		res, err := bench.Model(s)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, res)
		}
		res.WriteText(stdout)
	case !*sweep:
		res, err := bench.PT(s)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, res)
		}
		res.WriteText(stdout)
	default:
		byReplicas, byBatch, err := bench.Sweep(s)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, map[string][]bench.Result{"replicas": byReplicas, "batch": byBatch})
		}
		bench.WriteSweepTable(stdout, s, autodiff.CurrentArithmetic().ID(), byReplicas, byBatch)
		if *plotPath != "" {
			return plots.Scaling(*plotPath, byReplicas, byBatch)
		}
	}
	return nil
}
