package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npz"
)

// TestReportAndExport trains two PT chains and an sgd baseline on tiny
// data, then checks eval --report's page (tables present, every image a
// data: URI that decodes as PNG, nothing fetched from outside the file) and
// export's archive (shapes, read back with npyio).
func TestReportAndExport(t *testing.T) {
	data := writeData(t)
	rd := filepath.Join(t.TempDir(), "run")
	common := []string{"--data", data, "--arch", "16-8-10", "--validation", "0", "--batch", "32", "--log-every", "10", "--quiet"}
	if _, stderr, code := run(t, append([]string{"train", "--out", rd, "--sampler", "ptsghmc", "--replicas", "3", "--chains", "2", "--steps", "120", "--burnin", "50", "--thin", "10", "--exchange", "5"}, common...)...); code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	sgd := filepath.Join(t.TempDir(), "sgd")
	if _, stderr, code := run(t, append([]string{"train", "--out", sgd, "--sampler", "sgd", "--steps", "60"}, common...)...); code != 0 {
		t.Fatalf("sgd: %s", stderr)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	out, stderr, code := run(t, "eval", "--run", rd, "--baseline", sgd, "--report", page)
	if code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	if !strings.Contains(out, "report written to "+page) {
		t.Fatalf("eval output %q", out)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{`<table id="metrics">`, "ensemble (posterior)", "sgd baseline", `<p id="rhat">`, "split R-hat", `<table id="chains">`, `<table class="ladder">`, "barrier Lambda", "</html>"} {
		if !strings.Contains(html, want) {
			t.Errorf("report has no %q", want)
		}
	}
	// Selective prediction: 3 predictors x 3 scores; per class: every
	// test class, for the ensemble and the baseline.
	sel := regexp.MustCompile(`(?s)<table id="selective">.*?</table>`).FindString(html)
	if n := strings.Count(sel, "<tr>"); n != 1+9 {
		t.Errorf("selective-prediction table has %d rows, want 10", n)
	}
	perClass := regexp.MustCompile(`(?s)<table id="per-class">.*?</table>`).FindString(html)
	if n := strings.Count(perClass, "<tr>"); n < 1+2*3 || (n-1)%2 != 0 {
		t.Errorf("per-class table has %d rows", n)
	}
	// The paired comparison with the baseline: accuracy, NLL, ECE, Brier
	// (no OOD set).
	paired := regexp.MustCompile(`(?s)<table id="paired">.*?</table>`).FindString(html)
	if n := strings.Count(paired, "<tr>"); n != 1+4 {
		t.Errorf("paired table has %d rows, want 5", n)
	}
	// Rows: ensemble, single, baseline; two chains.
	if n := strings.Count(html, "<tr>") - strings.Count(sel, "<tr>") - strings.Count(perClass, "<tr>") - strings.Count(paired, "<tr>"); n != 1+3+1+2+2*(1+3) {
		t.Errorf("report has %d table rows besides selective prediction, per class and the paired comparison, want %d", n, 1+3+1+2+2*(1+3))
	}
	imgs := regexp.MustCompile(`<img [^>]*>`).FindAllString(html, -1)
	want := []string{"reliability.png", "samples.png", "traces.png", "heldout.png", "risk-coverage.png", "tempering.png"}
	if len(imgs) != len(want) {
		t.Fatalf("%d images, want %d", len(imgs), len(want))
	}
	src := regexp.MustCompile(`src="data:image/png;base64,([A-Za-z0-9+/=]+)"`)
	for i, img := range imgs {
		m := src.FindStringSubmatch(img)
		if m == nil {
			t.Fatalf("image %d is not a base64 PNG data URI: %.120s", i, img)
		}
		raw, err := base64.StdEncoding.DecodeString(m[1])
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(raw))
		if err != nil || cfg.Width < 300 || cfg.Height < 300 {
			t.Fatalf("image %d: %v, %dx%d", i, err, cfg.Width, cfg.Height)
		}
		if !strings.Contains(html, `<figure id="`+want[i]+`">`) {
			t.Errorf("no figure %s", want[i])
		}
	}
	if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(html) {
		t.Error("the report refers to the network")
	}

	// export: both chains, with the test log-likelihoods.
	arch := filepath.Join(t.TempDir(), "post.npz")
	if out, stderr, code = run(t, "export", "--run", rd, "--format", "npz", "--out", arch, "--data", data); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if !strings.Contains(out, "14 samples") || !strings.Contains(out, "log_likelihood [2 7 100]") {
		t.Fatalf("export output %q", out)
	}
	r, err := npz.Open(arch)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, shape := range map[string][]int{"W0": {14, 16, 8}, "b0": {14, 8}, "W1": {14, 8, 10}, "b1": {14, 10}, "step": {14}, "chain": {14}, "log_likelihood": {2, 7, 100}} {
		h := r.Header(name + ".npy")
		if h == nil || !equalInts(h.Descr.Shape, shape) {
			t.Errorf("%s: header %v, want shape %v", name, h, shape)
		}
	}
	for _, args := range [][]string{
		{"export", "--run", rd, "--out", arch, "--format", "csv"},
		{"export", "--run", rd},
	} {
		if _, _, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	checkExportWindows(t, rd, data)
}

// checkExportWindows exports TestReportAndExport's run rd (two chains,
// samples at steps 60, 70, ..., 120) with step windows: npz's steps are
// the window's, zarr's store records the window, and an empty or inverted
// window is refused.
func checkExportWindows(t *testing.T, rd, data string) {
	t.Helper()
	dir := t.TempDir()
	for i, tc := range []struct {
		args  []string
		steps []int64 // npz step: each chain's steps in the window
		says  []string
	}{
		{[]string{"--from-step", "95"}, []int64{100, 110, 120, 100, 110, 120}, []string{"6 samples", "log_likelihood [2 3 100]", "the samples taken at step 95 or later (--from-step)"}},
		{[]string{"--to-step", "75"}, []int64{60, 70, 60, 70}, []string{"4 samples", "the samples taken at step 75 or earlier (--to-step)"}},
		{[]string{"--from-step", "95", "--to-step", "105"}, []int64{100, 100}, []string{"2 samples", "log_likelihood [2 1 100]", "the samples taken from step 95 to step 105 (--from-step, --to-step)"}},
	} {
		arch := filepath.Join(dir, fmt.Sprintf("w%d.npz", i))
		out, stderr, code := run(t, append([]string{"export", "--run", rd, "--out", arch, "--data", data}, tc.args...)...)
		if code != 0 {
			t.Fatalf("export %v: %s", tc.args, stderr)
		}
		for _, want := range tc.says {
			if !strings.Contains(out, want) {
				t.Errorf("export %v: output %q does not say %q", tc.args, out, want)
			}
		}
		r, err := npz.Open(arch)
		if err != nil {
			t.Fatal(err)
		}
		var steps []int64
		err = r.Read("step.npy", &steps)
		r.Close()
		if err != nil || !slices.Equal(steps, tc.steps) {
			t.Errorf("export %v: steps %v (%v), want %v", tc.args, steps, err, tc.steps)
		}
	}
	store := filepath.Join(dir, "w.zarr")
	out, stderr, code := run(t, "export", "--run", rd, "--format", "zarr", "--out", store, "--from-step", "110")
	if code != 0 || !strings.Contains(out, "2 chain(s) x 2 draws") {
		t.Fatalf("export --format zarr --from-step 110: %s%s", out, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(store, ".zattrs")); err != nil || !strings.Contains(string(b), `"from_step": 110`) {
		t.Errorf("zarr attributes: %s (%v)", b, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from-step", "101", "--to-step", "109"}, "has no samples from step 101 to step 109 (5 samples before it; the first after it at step 110)"},
		{[]string{"--from-step", "121"}, "has no samples at step 121 or later (7 samples, the last at step 120)"},
		{[]string{"--from-step", "100", "--to-step", "90"}, "export: --from-step 100 --to-step 90: want --from-step >= 0"},
		{[]string{"--from-step", "100", "--to-step", "90", "--format", "zarr"}, "export: --from-step 100 --to-step 90: want --from-step >= 0"},
	} {
		out := filepath.Join(dir, "refused")
		if _, stderr, code := run(t, append([]string{"export", "--run", rd, "--out", out}, tc.args...)...); code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("export %v: exit %d, %q; want 1 and an error saying %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("export %v wrote %s", tc.args, out)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
