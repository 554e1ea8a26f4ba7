package main

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
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
	// Rows: ensemble, single, baseline; two chains.
	if n := strings.Count(html, "<tr>") - strings.Count(sel, "<tr>") - strings.Count(perClass, "<tr>"); n != 1+3+1+2+2*(1+3) {
		t.Errorf("report has %d table rows besides selective prediction and per class, want %d", n, 1+3+1+2+2*(1+3))
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
