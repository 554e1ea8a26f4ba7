package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/plots"
	"github.com/ptsghmc/ptsghmc/predictive"
	"github.com/ptsghmc/ptsghmc/progress"
	"github.com/ptsghmc/ptsghmc/report"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var runs multiFlag
	fs.Var(&runs, "run", "run directory (repeat to pool independent chains)")
	data := fs.String("data", "", "data directory (default: the first run's)")
	var baselines, oods multiFlag
	fs.Var(&baselines, "baseline", "a run to compare against (repeat, or a --chains K run, to pool several into one predictor: a deep ensemble is train --sampler sgd --chains K); an sgd run contributes its final weights, a sampler's run its kept samples")
	fs.Var(&oods, "ood", "score these images as out-of-distribution against the test set: \"mnist\" (MNIST's test digits from the Go module cache: the standard Fashion-MNIST benchmark), \"fashion-mnist\", a directory holding t10k-images-idx3-ubyte[.gz], or an IDX image file; \"builtin\": uniform noise, Gaussian noise and inverted test images (repeat for several; default: none, except a --classes run's held-out classes)")
	shift := fs.String("shift", "", "score the test set under dataset shift: rotate (0 to 180 degrees), noise (Gaussian, sd 0.1 to 0.5), or rotate,noise (default: none)")
	selective := fs.Bool("selective", false, "print the selective-prediction and per-class tables (always in --json, --plot and --report)")
	seed := fs.Uint64("seed", 1, "seed of the built-in OOD sets and the noise shift")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	plotDir := fs.String("plot", "", "write PNG plots into this directory")
	skipCorrupt := fs.Bool("skip-corrupt", false, "skip sample records that fail their checksum inside a samples file (default: stop with an error naming the record)")
	otherData := fs.Bool("other-data", false, "evaluate on --data even when its training set is not the one the runs were trained on (default: refuse)")
	reportPath := fs.String("report", "", "write a self-contained HTML report (tables and plots) to this file")
	quiet := fs.Bool("quiet", false, "no progress output on standard error")
	split := fs.String("split", "test", "score on the test images (test) or on the runs' held-out validation examples (validation: choose configurations without the test set; the runs and baseline must share one split)")
	var steps windowFlags
	steps.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc eval --run RUNDIR [--run RUNDIR2 ...] [--data DIR] [--baseline RUN ...] [--ood mnist|DIR|FILE|builtin ...] [--shift rotate,noise] [--selective] [--from-step S] [--to-step S] [--thin K] [--json] [--plot DIR] [--report FILE.html] [--skip-corrupt] [--other-data] [--quiet]\n\nProgress (samples scored, images/s, ETA) goes to standard error.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintln(stderr, "eval: --run is required")
		fs.Usage()
		return errUsage
	}
	full, test, err := evalData(runs, baselines, *data, *otherData)
	if err != nil {
		return err
	}
	win, err := steps.window("eval")
	if err != nil {
		return err
	}
	if test, err = splitSet(*split, runs, baselines, full, test); err != nil {
		return err
	}
	opt := evaluate.EvalOptions{Setup: runspec.DefaultSetup(), SkipCorrupt: *skipCorrupt, Window: win, Baselines: baselines, Seed: *seed}
	if err := addEvalSets(&opt, oods, *shift); err != nil {
		return err
	}
	if mixed, err := rundir.MixedArithmetic(runs); err != nil {
		return err
	} else if len(mixed) > 0 {
		fmt.Fprintf(stderr, "eval: the pooled chains were computed with mixed arithmetic (train --arithmetic; docs/reproducibility.md):\n  %s\n", strings.Join(mixed, "\n  "))
	}
	pr := progress.NewEval(stderr, *quiet)
	opt.Progress = pr.Update
	rep, err := evaluate.EvaluateWith(runs, "", test, opt)
	if err != nil {
		pr.Abort()
		return err
	}
	pr.Finish()
	if *split != "test" {
		rep.Split = *split
	}
	return writeEval(stdout, rep, *plotDir, *reportPath, *asJSON, *selective)
}

// splitSet returns the examples eval scores for --split: the test set, or
// the validation examples the runs and baselines held out of full.
func splitSet(split string, runs, baselines []string, full, test *datasets.Dataset) (*datasets.Dataset, error) {
	switch split {
	case "test":
		return test, nil
	case "validation":
		val, err := evaluate.ValidationSet(append(append([]string(nil), runs...), baselines...), full)
		if err != nil {
			return nil, fmt.Errorf("eval --split validation: %w", err)
		}
		return val, nil
	}
	return nil, fmt.Errorf("eval: --split %q: expected test or validation", split)
}

// writeEval writes eval's outputs: the plots into plotDir and the HTML
// report to reportPath when given, then the report as JSON or as tables on
// stdout.
func writeEval(stdout io.Writer, rep *evaluate.Report, plotDir, reportPath string, asJSON, selective bool) error {
	if plotDir != "" {
		if err := plots.WriteEvaluation(plotDir, rep); err != nil {
			return err
		}
	}
	if reportPath != "" {
		if err := report.WriteFile(reportPath, rep); err != nil {
			return err
		}
	}
	if asJSON {
		return writeJSON(stdout, rep)
	}
	printReport(stdout, rep)
	printUncertainty(stdout, rep, selective)
	if plotDir != "" {
		fmt.Fprintf(stdout, "plots written to %s\n", plotDir)
	}
	if reportPath != "" {
		fmt.Fprintf(stdout, "report written to %s\n", reportPath)
	}
	return nil
}

// evalData loads the data the runs are scored on: from dir, or the first
// run's data directory when dir is empty. Unless otherData, the training
// set must be the one the runs and baselines recorded. It returns the
// training and the test set.
func evalData(runs, baselines []string, dir string, otherData bool) (full, test *datasets.Dataset, err error) {
	full, test, dir, err = evaluate.LoadRunsData(runs, dir)
	if err != nil {
		return nil, nil, err
	}
	if !otherData {
		if err := evaluate.CheckRunsData(append(append([]string(nil), runs...), baselines...), dir, full); err != nil {
			return nil, nil, fmt.Errorf("%w (--other-data evaluates anyway)", err)
		}
	}
	return full, test, nil
}

// addEvalSets adds to opt the out-of-distribution sets of --ood (image
// files or directories, "builtin" for the built-in sets) and the shifts of
// --shift (rotate, noise or rotate,noise).
func addEvalSets(opt *evaluate.EvalOptions, oods []string, shift string) error {
	for _, o := range oods {
		if o == "builtin" {
			opt.BuiltinOOD = true
			continue
		}
		d, err := loadOODImages(o)
		if err != nil {
			return err
		}
		opt.OOD = append(opt.OOD, evaluate.OODSet{Name: o, Data: d})
	}
	if shift != "" {
		for _, k := range strings.Split(shift, ",") {
			if k = strings.TrimSpace(k); k != evaluate.ShiftRotate && k != evaluate.ShiftNoise {
				return fmt.Errorf("eval: --shift %s: %q is not a shift (want rotate, noise or rotate,noise)", shift, k)
			}
			opt.Shifts = append(opt.Shifts, strings.TrimSpace(k))
		}
	}
	return nil
}

// scoredSet names the examples a report scored: "test", or its split.
func scoredSet(rep *evaluate.Report) string {
	if rep.Split != "" {
		return rep.Split
	}
	return "test"
}

func printReport(w io.Writer, rep *evaluate.Report) {
	fmt.Fprintf(w, "posterior-predictive evaluation on %d %s examples (runs: %s)\n\n", rep.TestCount, scoredSet(rep), strings.Join(rep.Runs, ", "))
	printChains(w, rep.Chains)
	if rep.Temperature != 0 {
		fmt.Fprintf(w, "tempered posterior, T = %g: the samples are from exp(-U/T), not the Bayes posterior\n\n", rep.Temperature)
	}
	if note := windowNote(rep.Window, "the dynamics reports are the whole run's"); note != "" {
		fmt.Fprintf(w, "only %s\n\n", note)
	}
	fmt.Fprintf(w, "%-22s %8s %9s %8s %8s %8s\n", "predictor", "samples", "accuracy", "nll", "ece", "brier")
	row := func(name string, m evaluate.Metrics) {
		fmt.Fprintf(w, "%-22s %8d %9.4f %8.4f %8.4f %8.4f\n", name, m.Samples, m.Accuracy, m.NLL, m.ECE, m.Brier)
	}
	row("ensemble (posterior)", rep.Ensemble)
	row("single sample", rep.Single)
	if rep.Baseline != nil {
		row(rep.BaselineLabel(), *rep.Baseline)
	}
	if len(rep.Runs) > 1 {
		if rep.RHat == 0 { // R-hat is positive when computed
			fmt.Fprintf(w, "\nno split R-hat or ESS: a chain has fewer than 4 samples\n")
		} else {
			fmt.Fprintf(w, "\nheld-out log-likelihood of each kept sample over %d chains: split R-hat %.3f, bulk ESS %.1f\n", len(rep.Runs), rep.RHat, rep.ESS)
		}
	}
	for _, tp := range rep.Tempering {
		fmt.Fprintf(w, "\n%s:\n", tp.Run)
		printTempering(w, tp)
	}
	for _, hr := range rep.Health {
		fmt.Fprintf(w, "\n%s: dynamics\n%s\n", hr.Run, hr)
	}
	if rep.Dropped > 0 {
		fmt.Fprintf(w, "\n%d torn sample record(s) at the end of a samples file (a crash mid-write) were dropped\n", rep.Dropped)
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "\nWARNING: %d corrupt sample record(s) inside samples files were skipped (--skip-corrupt); the figures use the %d intact samples\n", rep.Skipped, rep.Ensemble.Samples)
	}
}

func runPredict(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := fs.String("run", "", "run directory")
	images := fs.String("images", "", "IDX image file (optionally .gz)")
	out := fs.String("out", "", "CSV output file (default: standard output)")
	skipCorrupt := fs.Bool("skip-corrupt", false, "skip sample records that fail their checksum inside a samples file (default: stop with an error naming the record)")
	var steps windowFlags
	steps.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc predict --run RUNDIR --images FILE.idx[.gz] [--out FILE.csv] [--from-step S] [--to-step S] [--thin K] [--skip-corrupt]\n\nWrites CSV: index, predicted class, class probabilities, predictive entropy,\nmutual information (the epistemic part of the entropy).\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *run == "" || *images == "" {
		fmt.Fprintln(stderr, "predict: --run and --images are required")
		fs.Usage()
		return errUsage
	}
	win, err := steps.window("predict")
	if err != nil {
		return err
	}
	img, err := datasets.ReadIDXFile(*images)
	if err != nil {
		return err
	}
	data, err := datasets.Unlabelled(img)
	if err != nil {
		return fmt.Errorf("read %s: %w", *images, err)
	}
	post, err := predictive.LoadWith(runspec.DefaultSetup(), predictive.Options{Window: win, SkipCorrupt: *skipCorrupt, AllowWriting: true}, *run)
	if err != nil {
		return err
	}
	if post.Dropped > 0 {
		fmt.Fprintf(stderr, "predict: %d torn sample record(s) at the end of a samples file (a crash mid-write) were dropped\n", post.Dropped)
	}
	if post.Skipped > 0 {
		fmt.Fprintf(stderr, "predict: WARNING: %d corrupt sample record(s) skipped (--skip-corrupt); predicting with the %d intact samples\n", post.Skipped, post.Samples())
	}
	preds, err := post.PredictData(data)
	if err != nil {
		return fmt.Errorf("%s: %w", *images, err)
	}
	w := stdout
	var f *os.File
	if *out != "" {
		if f, err = os.Create(*out); err != nil {
			return err
		}
		defer f.Close() // on the error paths; closed and checked below
		w = f
	}
	if err := post.WriteCSV(w, preds); err != nil {
		return fmt.Errorf("write %s: %w", outName(*out), err)
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return fmt.Errorf("close %s: %w", *out, err)
		}
	}
	return nil
}

func outName(path string) string {
	if path == "" {
		return "standard output"
	}
	return path
}
