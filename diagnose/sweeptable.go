package diagnose

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// ReadSweep reads a sweep saved as JSON (tempering-sweep --json) from path.
func ReadSweep(path string) (*PTSweep, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sw PTSweep
	if err := json.Unmarshal(b, &sw); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &sw, nil
}

// spread formats values as "median (min-max)".
func spread(x []float64, prec int) string {
	if len(x) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)", prec, Median(x), prec, slices.Min(x), prec, slices.Max(x))
}

// WriteTable writes the sweep as markdown to w: per block dimension, PT's
// barrier and each method's error at the full budget (median and range
// over the seeds, and the best method), then the medians at each budget
// fraction.
func (sw *PTSweep) WriteTable(w io.Writer) error {
	if sw.Target == "tinybnn" {
		fmt.Fprintf(w, "tinybnn (one-unit tanh network, d = 0: no block): largest error of the posterior predictive mean at x = -0.5, 0, 0.5 against quadrature; ")
	} else {
		fmt.Fprintf(w, "%s + d-dimensional Gaussian block: largest mode-weight error; ", sw.Target)
	}
	fmt.Fprintf(w, "%d gradient evaluations per method and seed (%d steps x %d replicas, burn-in %d); median (min-max) over seeds\n\n",
		sw.Budget, sw.Budget/sw.Replicas, sw.Replicas, sw.BurnIn)
	fmt.Fprintln(w, "| d | seeds | Lambda after burn-in | Lambda tuned | round trips | PT (adapted ladder) | same ladder, swaps off | independent chains | best |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range sw.Rows {
		trips := make([]float64, len(r.RoundTrips))
		for i, t := range r.RoundTrips {
			trips[i] = float64(t)
		}
		best, bestErr := "", math.Inf(1)
		for _, m := range PTSweepMethods {
			if e := Median(r.Final(m)); e < bestErr {
				best, bestErr = m, e
			}
		}
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", r.Dim, len(r.Seeds), spread(r.Lambda, 2), spread(r.LambdaTuned, 1),
			spread(trips, 0), spread(r.Final("pt"), 3), spread(r.Final("swaps-off"), 3), spread(r.Final("independent"), 3), best)
	}
	fmt.Fprintf(w, "\nmedian error against gradient evaluations\n\n| d | method |")
	for _, f := range sw.Fractions {
		fmt.Fprintf(w, " %d |", int(math.Round(f*float64(sw.Budget))))
	}
	_, err := fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---|", len(sw.Fractions)))
	for _, r := range sw.Rows {
		for _, m := range PTSweepMethods {
			fmt.Fprintf(w, "| %d | %s |", r.Dim, m)
			for f := range sw.Fractions {
				var e []float64
				for _, s := range r.Error[m] {
					e = append(e, s[f])
				}
				fmt.Fprintf(w, " %.3f |", Median(e))
			}
			_, err = fmt.Fprintln(w)
		}
	}
	return err
}
