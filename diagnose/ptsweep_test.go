package diagnose

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// sweepFixture is a sweep shaped like the measured one: 10 rungs, PT
// winning at low rejection per pair and losing once it saturates.
func sweepFixture() *PTSweep {
	row := func(d int, lambda, pt, off, ind float64) PTSweepRow {
		return PTSweepRow{Dim: d, Seeds: []uint64{1, 2, 3}, Lambda: []float64{lambda, lambda, lambda},
			Error: map[string][][]float64{"pt": {{pt}, {pt}, {pt}}, "swaps-off": {{off}, {off}, {off}}, "independent": {{ind}, {ind}, {ind}}}}
	}
	return &PTSweep{Target: "gauss1d4", Budget: 500000, Replicas: 10, TMax: 10, Fractions: []float64{1},
		Rows: []PTSweepRow{row(10, 2.7, 0.02, 0.9, 0.2), row(300, 8.1, 0.1, 0.9, 0.2), row(1000, 9, 0.9, 0.9, 0.15)}}
}

// TestPTVerdict checks that the verdict follows the run's barrier per pair
// through the sweep's rows: below the last winning row PT is the right
// tool; at or above the first losing row it is not, and the text says to
// run independent chains instead, with the sweep's figures; in between it
// is borderline. The same barrier on more rungs is less per pair.
func TestPTVerdict(t *testing.T) {
	sw := sweepFixture()
	cases := []struct {
		name   string
		lambda float64
		rungs  int
		top    float64
		fits   bool
		want   []string
	}{
		{"low barrier", 1.5, 4, 10, true, []string{"Lambda 1.5 on 4 rungs is 0.50 rejection per pair", "PT is the right tool here", "up to 0.90 per pair", "block dimension 300", "error 0.10 against 0.90 and 0.20", "right tool here."}},
		{"low barrier, cool top", 1.5, 4, 1.03, true, []string{"PT is the right tool here if the top rung moves between modes", "reached T = 10, this one T = 1.03"}},
		{"at the last win", 8.1, 10, 10, true, []string{"PT is the right tool here"}},
		{"between", 2.80, 4, 10, true, []string{"0.93 rejection per pair", "between PT's last win", "about 0.95", "--chains 4"}},
		{"past the midpoint", 2.86, 4, 10, false, []string{"0.95 rejection per pair", "PT is not the right tool here"}},
		{"saturated", 2.99, 4, 10, false, []string{"1.00 rejection per pair", "PT is not the right tool here", "--sampler sgnht --chains 4", "block dimension 1000", "mode-weight error 0.90; 0.90 with swaps off", "10 independent chains of the same cost, started apart, were off by 0.15", "2 Lambda = 6 rungs"}},
		{"same barrier, more rungs", 2.99, 10, 10, true, []string{"0.33 rejection per pair", "PT is the right tool here"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fits, text := sw.PTVerdict(c.lambda, c.rungs, c.top)
			if fits != c.fits {
				t.Errorf("fits %v, want %v: %s", fits, c.fits, text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("verdict lacks %q: %s", w, text)
				}
			}
		})
	}
}

// TestTemperingVerdict checks that a run's tempering section carries the
// measured sweep's verdict (the embedded diagnose/tempering_sweep.json) and
// that it changes with the measured barrier: a ladder with rejection 0.3
// per pair fits PT and gets no warning; one whose pairs reject nearly
// always (the issue's 784-32-10 case, Lambda 2.99 on 4 rungs) gets a
// warning that ends in the verdict: independent chains instead. A ladder
// that fits but made no round trip after burn-in is told so.
func TestTemperingVerdict(t *testing.T) {
	if _, err := MeasuredPTSweep(); err != nil {
		t.Fatal(err)
	}
	cfg := runspec.DefaultConfig()
	cfg.Exchange, cfg.BurnIn = 10, 1000
	cases := []struct {
		name    string
		reject  []float64
		accept  []int
		trips   int
		fits    bool
		verdict []string // substrings of Verdict
		warning []string // substrings of Advice; none: no warning
	}{
		{"communicates", []float64{0.3, 0.3, 0.3}, []int{300, 300, 300}, 150, true, []string{"0.30 rejection per pair", "PT is the right tool here"}, nil},
		{"no round trip", []float64{0.3, 0.3, 0.3}, []int{300, 300, 300}, 0, true, []string{"PT is the right tool here", "no round trip in 10000 steps after burn-in"},
			[]string{"communicates slowly"}},
		{"saturated", []float64{0.995, 0.997, 0.998}, []int{1, 0, 2}, 0, false, []string{"1.00 rejection per pair", "PT is not the right tool here"}, []string{"PT is not the right tool here", "--sampler sgnht --chains 4", "independent chains"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &tempering.PTState{Temps: []float64{1, 1.2, 1.5, 2}, Steps: 11000}
			st.Stats.WinStart, st.Stats.WinRoundTrips = 1000, c.trips
			st.Stats.WinProposed = []int{500, 500, 500}
			st.Stats.WinAccepted = c.accept
			for _, r := range c.reject {
				st.Stats.WinReject = append(st.Stats.WinReject, 500*r)
			}
			tp := TemperingOf(st, cfg)
			if tp.PTFits != c.fits || tp.Verdict == "" {
				t.Errorf("fits %v, want %v; verdict %q", tp.PTFits, c.fits, tp.Verdict)
			}
			for _, w := range c.verdict {
				if !strings.Contains(tp.Verdict, w) {
					t.Errorf("verdict lacks %q: %s", w, tp.Verdict)
				}
			}
			if len(c.warning) == 0 && tp.Advice != "" {
				t.Errorf("a warning for a ladder that communicates: %s", tp.Advice)
			}
			for _, w := range c.warning {
				if !strings.Contains(tp.Advice, w) {
					t.Errorf("warning lacks %q: %s", w, tp.Advice)
				}
			}
		})
	}
}

// ExamplePTSweep_PTVerdict asks the measured sweep whether PT is the right
// tool for three runs of 4 rungs: swaps accepted freely, at the edge, and
// the issue's 784-32-10 network whose pairs rejected nearly every swap.
func ExamplePTSweep_PTVerdict() {
	sw, err := MeasuredPTSweep()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, lambda := range []float64{0.9, 2.92, 2.99} {
		fits, text := sw.PTVerdict(lambda, 4, 10)
		fmt.Printf("Lambda %.2f on 4 rungs: PT fits %v, independent chains advised %v\n", lambda, fits, strings.Contains(text, "--sampler sgnht --chains 4"))
	}
	// Output:
	// Lambda 0.90 on 4 rungs: PT fits true, independent chains advised false
	// Lambda 2.92 on 4 rungs: PT fits true, independent chains advised true
	// Lambda 2.99 on 4 rungs: PT fits false, independent chains advised true
}

// TestNetworkNote checks that a run whose ladder fits PT quotes the small
// Bayesian network's row (the embedded diagnose/tempering_bnn.json), that
// a run with more rungs than its barrier needs is told so, and that a run
// PT does not fit is not given the network's row.
func TestNetworkNote(t *testing.T) {
	bnn, err := MeasuredBNNSweep()
	if err != nil {
		t.Fatal(err)
	}
	if bnn.Target != "tinybnn" || len(bnn.Rows[0].Final("pt")) == 0 {
		t.Fatalf("network row: target %q, %d seeds", bnn.Target, len(bnn.Rows[0].Final("pt")))
	}
	cfg := runspec.DefaultConfig()
	cfg.Exchange, cfg.BurnIn = 10, 1000
	for _, c := range []struct {
		name   string
		temps  []float64
		reject float64
		want   []string
		absent []string
	}{
		{"fits, rungs to spare", []float64{1, 1.2, 1.5, 2, 2.5, 3}, 0.1, []string{"small Bayesian network", "tinybnn", "This run has 6 rungs where 2 Lambda = 2 would do"}, nil},
		{"fits", []float64{1, 1.2, 1.5, 2}, 0.5, []string{"small Bayesian network"}, []string{"would do"}},
		{"does not fit", []float64{1, 1.2, 1.5, 2}, 0.999, nil, []string{"small Bayesian network"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pairs := len(c.temps) - 1
			st := &tempering.PTState{Temps: c.temps, Steps: 11000}
			st.Stats.WinStart, st.Stats.WinRoundTrips = 1000, 100
			for p := 0; p < pairs; p++ {
				st.Stats.WinProposed = append(st.Stats.WinProposed, 500)
				st.Stats.WinAccepted = append(st.Stats.WinAccepted, 1+int(500*(1-c.reject)/2))
				st.Stats.WinReject = append(st.Stats.WinReject, 500*c.reject)
			}
			tp := TemperingOf(st, cfg)
			text := tp.Verdict + " " + tp.Advice
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q: %s", w, text)
				}
			}
			for _, w := range c.absent {
				if strings.Contains(text, w) {
					t.Errorf("has %q: %s", w, text)
				}
			}
		})
	}
}
