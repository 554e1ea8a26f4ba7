package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/diagnose"
)

// TestTemperingSweepCrossover runs a small tempering sweep (seed 1, 100,000
// gradient evaluations per method) at block dimensions 10 and 1,000 and
// checks that it shows where PT stops earning its cost, as the full sweep
// does: at d = 10, PT's swaps carry the hot rungs' modes down (PT's
// mode-weight error below 0.1, below both the independent chains' and the
// swaps-off ablation's, which stays in the start's mode: error at least
// 0.3) with Lambda well below its ceiling R - 1; at d = 1,000 the barrier
// saturates (Lambda above 0.95 (R - 1), no round trip), PT's rung 1 stays
// in its start mode like the ablation (error at least 0.5), and the
// independent chains of equal cost do better.
func TestTemperingSweepCrossover(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--dims", "10,1000", "--seeds", "1", "--budget", "100000", "--burnin", "2000", "--fractions", "0.5,1", "--json", out}
	if code := mainCode(append([]string{"tempering-sweep"}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	t.Logf("%s\n%s", stderr.String(), stdout.String())
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var sw diagnose.PTSweep
	if err := json.Unmarshal(b, &sw); err != nil {
		t.Fatal(err)
	}
	if len(sw.Rows) != 2 || sw.Budget != 100000 || sw.Replicas != 10 {
		t.Fatalf("sweep of %d rows, budget %d, %d replicas", len(sw.Rows), sw.Budget, sw.Replicas)
	}
	low, high := sw.Rows[0], sw.Rows[1]
	pt, off, ind := low.Final("pt")[0], low.Final("swaps-off")[0], low.Final("independent")[0]
	if !(pt < 0.1 && pt < ind && off >= 0.3) || !low.PTWins() {
		t.Errorf("d = 10: errors PT %.3f, swaps off %.3f, independent %.3f: want PT below 0.1 and both others, swaps off at least 0.3", pt, off, ind)
	}
	if low.Lambda[0] > 0.6*9 || low.RoundTrips[0] == 0 {
		t.Errorf("d = 10: Lambda %.3g, %d round trips: want a ladder that communicates", low.Lambda[0], low.RoundTrips[0])
	}
	pt, ind = high.Final("pt")[0], high.Final("independent")[0]
	if pt < 0.5 || ind >= pt || high.PTWins() {
		t.Errorf("d = 1000: errors PT %.3f, independent %.3f: want PT stuck (at least 0.5) and the independent chains better", pt, ind)
	}
	if high.Lambda[0] < 0.95*9 || high.RoundTrips[0] != 0 || high.LambdaTuned[0] < 2*low.LambdaTuned[0] {
		t.Errorf("d = 1000: Lambda %.3g (tuned %.3g), %d round trips: want a saturated ladder", high.Lambda[0], high.LambdaTuned[0], high.RoundTrips[0])
	}
	for _, w := range []string{"| 10 | 1 |", "| 1000 | 1 |", "100000 gradient evaluations per method"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("table lacks %q", w)
		}
	}
}

// TestTemperingSweepTinyBNN runs the sweep's network case small (seed 1,
// 200,000 gradient evaluations, 4 rungs) and checks the command's table:
// one row (d = 0) titled by the predictive-mean error, PT's error below
// 0.2 and the swaps-off ablation's, stuck in the lighter mode, above 0.5.
func TestTemperingSweepTinyBNN(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"tempering-sweep", "--target", "tinybnn", "--dims", "10,100", "--seeds", "1", "--budget", "200000", "--replicas", "4", "--h", "0.05", "--fractions", "0.5,1"}
	if code := mainCode(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	t.Logf("%s\n%s", stderr.String(), stdout.String())
	for _, w := range []string{"| 0 | 1 |", "posterior predictive mean at x = -0.5, 0, 0.5", "mass of v > 0 0.7059"} {
		if !strings.Contains(stdout.String()+stderr.String(), w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if strings.Contains(stdout.String(), "| 10 |") {
		t.Errorf("--dims should be ignored for tinybnn:\n%s", stdout.String())
	}
	var pt, off float64
	if _, err := fmt.Sscanf(stderr.String()[strings.Index(stderr.String(), "error PT"):], "error PT %g, swaps off %g", &pt, &off); err != nil {
		t.Fatalf("read the errors from %q: %v", stderr.String(), err)
	}
	if !(pt < 0.2 && off > 0.5) {
		t.Errorf("error PT %.3f, swaps off %.3f: want PT below 0.2, swaps off above 0.5", pt, off)
	}
}

// TestTemperingSweepDiverged: the network case at the default --h 0.2
// diverges within a few hundred steps; the command fails saying that a
// chain diverged, at which --h, and the step the Makefile uses (it used to
// stop with "noise sd NaN of deltaE still above the correction's 1").
func TestTemperingSweepDiverged(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"tempering-sweep", "--target", "tinybnn", "--seeds", "1", "--budget", "500000", "--replicas", "10"}
	if code := mainCode(args, &stdout, &stderr); code == 0 {
		t.Fatalf("exit 0 at --h 0.2: %s", stdout.String())
	}
	for _, w := range []string{"diverged", "not finite", "at --h 0.2", "--h 0.05"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("error lacks %q: %s", w, stderr.String())
		}
	}
}
