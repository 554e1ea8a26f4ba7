package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// loadOODImages reads the images of eval --ood: a data directory's test
// images (t10k-images-idx3-ubyte, optionally .gz), a data set's by name
// (mnist, fashion-mnist: datasets.ResolveTestImages, which needs no other
// file) or an IDX image file of unsigned bytes, scaled to [0, 1]. Labels
// are not read.
func loadOODImages(path string) (*datasets.Dataset, error) {
	dir, err := datasets.ResolveTestImages(path)
	if err != nil {
		return nil, fmt.Errorf("--ood %s: %w", path, err)
	}
	file := dir
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("--ood %s: %w", path, err)
	} else if st.IsDir() {
		if file, err = datasets.TestImagesIn(dir); err != nil {
			return nil, fmt.Errorf("--ood %s: %w (give an IDX image file instead)", path, err)
		}
	}
	img, err := datasets.ReadIDXFile(file)
	if err != nil {
		return nil, fmt.Errorf("--ood %s: %w", path, err)
	}
	if len(img.Dims) < 2 || img.Dims[0] == 0 || img.Type != datasets.IDXUint8 {
		return nil, fmt.Errorf("--ood %s: %s holds %v elements of type 0x%02x, expected images (count, rows[, cols]) of unsigned bytes", path, file, img.Dims, img.Type)
	}
	return datasets.Unlabelled(img)
}

// fmtPtr formats a value that may be null.
func fmtPtr(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.4f", *v)
}

// printUncertainty prints the tables of the uncertainty evaluation eval was
// asked for: what the predictors average (with a baseline), out-of-distribution
// detection, dataset shift, and with selective the selective-prediction and
// per-class tables.
func printUncertainty(w io.Writer, rep *evaluate.Report, selective bool) {
	if rep.BaselineInfo != nil {
		fmt.Fprintf(w, "\nensemble: %s\n", rep.EnsembleInfo.String())
		fmt.Fprintf(w, "%s: %s (%s)\n", rep.BaselineLabel(), rep.BaselineInfo.String(), strings.Join(rep.BaselineInfo.Runs, ", "))
	}
	if len(rep.Classes) > 0 {
		fmt.Fprintf(w, "\ntrained on classes %s (outputs 0..%d)\n", runspec.FormatClasses(rep.Classes), len(rep.Classes)-1)
	}
	if len(rep.OOD) > 0 {
		fmt.Fprintf(w, "\nout-of-distribution detection (OOD positive; score higher = more uncertain; - : undefined for one network)\n")
		fmt.Fprintf(w, "%-24s %-20s %-10s %8s %8s %8s\n", "set", "score", "predictor", "auroc", "aupr", "fpr@95")
		for _, r := range rep.OOD {
			fmt.Fprintf(w, "%-24s %-20s %-10s %8s %8s %8s\n", r.Set, r.Score, r.Predictor, fmtPtr(r.AUROC), fmtPtr(r.AUPR), fmtPtr(r.FPR95))
		}
	}
	printPaired(w, rep)
	if len(rep.Shift) > 0 {
		fmt.Fprintf(w, "\ndataset shift\n%-8s %6s %-10s %9s %8s %8s %8s\n", "kind", "level", "predictor", "accuracy", "nll", "ece", "brier")
		for _, r := range rep.Shift {
			fmt.Fprintf(w, "%-8s %6g %-10s %9.4f %8.4f %8.4f %8.4f\n", r.Kind, r.Level, r.Predictor, r.Accuracy, r.NLL, r.ECE, r.Brier)
		}
	}
	if !selective {
		return
	}
	fmt.Fprintf(w, "\nselective prediction on the test set (refusing the most uncertain first)\n%-20s %-10s %8s %9s %9s\n", "score", "predictor", "aurc", "acc@90%", "acc@95%")
	for _, r := range rep.Selective {
		fmt.Fprintf(w, "%-20s %-10s %8s %9s %9s\n", r.Score, r.Predictor, fmtPtr(r.AURC), fmtPtr(r.AccAt90), fmtPtr(r.AccAt95))
	}
	fmt.Fprintf(w, "\nper class\n%-10s %6s %6s %9s %8s\n", "predictor", "class", "count", "accuracy", "ece")
	for _, r := range rep.PerClass {
		fmt.Fprintf(w, "%-10s %6d %6d %9.4f %8.4f\n", r.Predictor, r.Class, r.Count, r.Accuracy, r.ECE)
	}
}

// printPaired prints the paired comparison of the ensemble with the
// baseline (Report.Paired): each figure's difference, its 95% interval and
// which predictor the interval favours.
func printPaired(w io.Writer, rep *evaluate.Report) {
	if len(rep.Paired) == 0 {
		return
	}
	fmt.Fprintf(w, "\nensemble minus %s: 95%% interval of %d paired bootstrap resamples of the %d %s examples\n(and of each OOD set): the noise of this comparison on these examples, not the training seeds'\n",
		rep.BaselineLabel(), evaluate.PairedReplicates, rep.TestCount, scoredSet(rep))
	fmt.Fprintf(w, "%-46s %9s %21s  %s\n", "figure", "diff", "95% interval", "better")
	for _, d := range rep.Paired {
		fmt.Fprintf(w, "%-46s %+9.4f  [%+8.4f, %+8.4f]  %s\n", d.Name(), d.Diff, d.Lo, d.Hi, d.Better(rep.BaselineLabel()))
	}
}
