package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/export"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

func runExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var runs multiFlag
	fs.Var(&runs, "run", "run directory (repeat to export several chains together)")
	format := fs.String("format", "npz", "output format: npz (NumPy) or zarr (ArviZ InferenceData, a Zarr v2 directory: az.from_zarr)")
	out := fs.String("out", "", "output file (npz) or new directory (zarr)")
	params := fs.String("params", "", "zarr: the weights of the posterior group, comma-separated: learnable names (W0,b1,...) and flat index ranges lo:hi (default: every learnable)")
	compress := fs.String("compress", "zlib", "zarr: chunk compression, zlib or none")
	data := fs.String("data", "", "data directory: add the per-example test log-likelihood matrix [chains, draws, examples] (for ArviZ LOO/WAIC); its training set must be the runs' (see --other-data)")
	otherData := fs.Bool("other-data", false, "score --data's test images even when its training set is not the one the runs were trained on (default: refuse)")
	var steps windowFlags
	steps.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: ptsghmc export --run RUNDIR [--run RUNDIR2 ...] [--format npz|zarr] --out FILE.npz|DIR.zarr [--data DIR [--other-data]] [--from-step S] [--to-step S] [--thin K] [--params W0,b1,0:100] [--compress zlib|none]

Exports each chain's samples taken from --from-step to --to-step (default:
all; with --thin K, every K-th of them; step, and zarr's sample_stats step, hold each draw's step) up to its
last checkpoint (a run still training is read as eval reads it); a run of
several chains stands for those with samples at their last checkpoint.

--format zarr writes ArviZ's InferenceData as a Zarr v2 store (az.from_zarr):
groups posterior (the --params weights, dims chain, draw, NAME_dim_k),
sample_stats (step, energy, potential_energy, kinetic_energy, lp,
thermostat, temperature), and with --data log_likelihood (y: chain, draw,
example) and observed_data (y); each chain's first draws, as many as the
shortest chain has (docs/run-directory.md).

Writes the rung-1 samples as a NumPy .npz archive: one array per layer named
after the model's learnables (W0 [samples, in, out], b0 [samples, out], ...),
step and chain [samples], chain_dirs, and with --data log_likelihood
[chains, draws, examples] and log_likelihood_step [chains, draws] on the test
images (chains of unequal length give their first draws, as many as the
shortest chain has).

flags:`)
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(runs) == 0 || *out == "" {
		fmt.Fprintln(stderr, "export: --run and --out are required")
		fs.Usage()
		return errUsage
	}
	if *format != "npz" && *format != "zarr" {
		fmt.Fprintf(stderr, "export: --format %q: npz or zarr\n", *format)
		return errUsage
	}
	if *compress != "zlib" && *compress != "none" {
		fmt.Fprintf(stderr, "export: --compress %q: zlib or none\n", *compress)
		return errUsage
	}
	if *format == "npz" && (*params != "" || *compress != "zlib") {
		fmt.Fprintln(stderr, "export: --params and --compress apply to --format zarr only")
		return errUsage
	}
	win, err := steps.window("export")
	if err != nil {
		return err
	}
	test, err := exportTestData(*data, runs, *otherData)
	if err != nil {
		return err
	}
	if *format == "zarr" {
		return exportZarr(stdout, *out, runs, test, *params, *compress == "zlib", win)
	}
	return exportNPZ(stdout, *out, runs, test, win)
}

// exportTestData returns the test images of the data directory dir for
// the runs (nil when dir is ""): a run on a subset of classes, as the
// first run's config.json records, is scored on the test images of those.
// Unless otherData, dir's training set must be the one every run recorded
// (evaluate.CheckRunsData, as eval checks): a test set belongs with its
// training set.
func exportTestData(dir string, runs []string, otherData bool) (*datasets.Dataset, error) {
	if dir == "" {
		return nil, nil
	}
	full, test, err := datasets.LoadMNIST(dir)
	if err != nil {
		return nil, err
	}
	if !otherData {
		if err := evaluate.CheckRunsData(runs, dir, full); err != nil {
			return nil, fmt.Errorf("export --data: %w (--other-data exports anyway)", err)
		}
	}
	cfg, err := rundir.ReadRunConfig(runs[0])
	if err != nil {
		return nil, err
	}
	if len(cfg.Classes) > 0 {
		if test, _, err = runspec.SelectClasses(test, cfg.Classes); err != nil {
			return nil, fmt.Errorf("export --data %s: %w", dir, err)
		}
	}
	return test, nil
}

// exportNPZ writes the runs as a NumPy .npz archive at out.
func exportNPZ(stdout io.Writer, out string, runs []string, test *datasets.Dataset, win rundir.Window) error {
	sum, err := export.NPZWith(out, runs, test, export.NPZOptions{Window: win})
	if err != nil {
		return err
	}
	printExportChains(stdout, sum)
	total := 0
	for _, n := range sum.Draws {
		total += n
	}
	var names []string
	for _, l := range sum.Learnables {
		names = append(names, fmt.Sprintf("%s %v", l.Name, append([]int{total}, l.Shape...)))
	}
	fmt.Fprintf(stdout, "wrote %s: %d samples (%s) from %d chain(s) %v\n  %s\n", out, total, sum.DType, len(sum.Chains), sum.Draws, strings.Join(names, ", "))
	if test != nil {
		fmt.Fprintf(stdout, "  log_likelihood [%d %d %d]", len(sum.Chains), sum.LogLikDraws, test.N)
		if sum.LogLikDraws*len(sum.Chains) < total {
			fmt.Fprintf(stdout, " (the first %d draws of each chain: ArviZ needs equal chains)", sum.LogLikDraws)
		}
		fmt.Fprintln(stdout)
	}
	printExportNotes(stdout, sum)
	return nil
}

// exportZarr writes the runs as ArviZ InferenceData in a Zarr store.
func exportZarr(stdout io.Writer, out string, runs []string, test *datasets.Dataset, params string, compress bool, win rundir.Window) error {
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	sum, err := export.Zarr(out, runs, test, export.ZarrOptions{Params: params, Compress: compress, Created: time.Now(), Version: version, Window: win})
	if err != nil {
		return err
	}
	printExportChains(stdout, &sum.Summary)
	fmt.Fprintf(stdout, "wrote %s: InferenceData (Zarr v2), groups %s; %d chain(s) x %d draws (%s)\n  posterior: %s\n",
		out, strings.Join(sum.Groups, ", "), len(sum.Chains), sum.DrawsPerChain, sum.DType, strings.Join(sum.Variables, ", "))
	if test != nil {
		fmt.Fprintf(stdout, "  log_likelihood y [%d %d %d]\n", len(sum.Chains), sum.DrawsPerChain, test.N)
	}
	printExportNotes(stdout, &sum.Summary)
	return nil
}

// printExportChains prints the chains of the runs when one is not
// finished (only those with checkpointed samples are exported, each up to
// its checkpoint).
func printExportChains(w io.Writer, sum *export.Summary) {
	for _, s := range sum.Status {
		if s.State != rundir.ChainFinished {
			printChains(w, sum.Status)
			return
		}
	}
}

// printExportNotes prints the window the samples were taken from and the
// torn records ignored.
func printExportNotes(w io.Writer, sum *export.Summary) {
	if note := windowNote(sum.Window, ""); note != "" {
		fmt.Fprintf(w, "  %s\n", note)
	}
	if sum.Dropped > 0 {
		fmt.Fprintf(w, "  %d torn sample record(s) at file ends were ignored\n", sum.Dropped)
	}
}
