package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/plots"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// WriteFile writes the evaluation rep as one self-contained HTML page to
// path: its tables and the figures of plots.Evaluation embedded as base64
// PNG data URIs, no reference to anything outside the file.
func WriteFile(path string, rep *evaluate.Report) error {
	figs, err := plots.Evaluation(rep)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := Write(&b, rep, figs); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// row is one predictor's row of the metrics table.
type row struct {
	Name string
	evaluate.Metrics
}

// chain is one chain's row of the chains table.
type chain struct {
	Dir     string
	Samples int
	HeldOut float64 // mean over its samples of the held-out log-likelihood
}

// image is a figure as the page embeds it.
type image struct {
	Name, Title string
	Src         template.HTMLAttr // src="data:image/png;base64,..."
}

// Write writes the page of rep with its figures figs to w: the metrics
// table, what the ensemble and the baseline average, out-of-distribution
// detection, selective prediction, dataset shift and per-class tables when
// the report has them, the chains (with split R-hat and ESS when pooled),
// each PT chain's ladder, and the figures.
func Write(w io.Writer, rep *evaluate.Report, figs []plots.Figure) error {
	rows := []row{{"ensemble (posterior)", rep.Ensemble}, {"single sample", rep.Single}}
	if rep.Baseline != nil {
		rows = append(rows, row{rep.BaselineLabel(), *rep.Baseline})
	}
	var chains []chain
	for c, tr := range rep.HeldOut {
		m := 0.0
		for _, v := range tr {
			m += v
		}
		if len(tr) > 0 {
			m /= float64(len(tr))
		}
		chains = append(chains, chain{Dir: rep.Runs[c], Samples: len(tr), HeldOut: m})
	}
	var imgs []image
	for _, f := range figs {
		// A whole attribute, written as is: as a plain value html/template
		// would escape base64's '+' as an entity; its alphabet needs no
		// escaping, and the bytes are our own PNG.
		imgs = append(imgs, image{f.Name, f.Title, template.HTMLAttr(`src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(f.PNG) + `"`)})
	}
	baseInfo := ""
	if rep.BaselineInfo != nil {
		baseInfo = rep.BaselineInfo.String()
	}
	return page.Execute(w, map[string]any{
		"Rep":       rep,
		"Rows":      rows,
		"Chains":    chains,
		"Pooled":    len(rep.Runs) > 1,
		"Images":    imgs,
		"Bins":      evaluate.ECEBins,
		"EnsInfo":   rep.EnsembleInfo.String(),
		"BaseInfo":  baseInfo,
		"BaseLabel": rep.BaselineLabel(),
		"Classes":   runspec.FormatClasses(rep.Classes),
		"Resamples": evaluate.PairedReplicates,
	})
}

// optional formats a value that may be null ("-").
func optional(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.4f", *v)
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"f4":   func(v float64) string { return fmt.Sprintf("%.4f", v) },
	"f3":   func(v float64) string { return fmt.Sprintf("%.3g", v) },
	"fp":   optional,
	"base": filepath.Base,
	"inc":  func(i int) int { return i + 1 },
	"div1": func(t float64) float64 { return 1 / t },
	"at": func(v []float64, i int) string {
		if i < len(v) {
			return fmt.Sprintf("%.3g", v[i])
		}
		return ""
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>ptsghmc evaluation</title>
<style>
body { font-family: sans-serif; max-width: 1100px; margin: 1em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead { background: #eee; }
figure { margin: 1em 0; }
img { max-width: 100%; border: 1px solid #ddd; }
.warn { color: #a00; }
code { background: #f4f4f4; }
</style>
</head>
<body>
<h1>Posterior-predictive evaluation</h1>
{{if .Rep.Temperature}}<p id="tempered"><b>Tempered posterior, T = {{.Rep.Temperature}}</b>: the samples are from exp(-U/T), not the Bayes posterior.</p>{{end}}
{{with .Rep.Window.Phrase}}<p id="window">Only the samples {{.}} (<code>--from-step</code>, <code>--to-step</code>, <code>--thin</code>); the dynamics reports are the whole run's.</p>{{end}}
<p>{{.Rep.TestCount}} test examples; runs: {{range $i, $r := .Rep.Runs}}{{if $i}}, {{end}}<code>{{$r}}</code>{{end}}.</p>

<h2>Metrics</h2>
<table id="metrics">
<thead><tr><th>predictor</th><th>samples</th><th>accuracy</th><th>NLL</th><th>ECE ({{.Bins}} bins)</th><th>Brier</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.Name}}</td><td>{{.Samples}}</td><td>{{f4 .Accuracy}}</td><td>{{f4 .NLL}}</td><td>{{f4 .ECE}}</td><td>{{f4 .Brier}}</td></tr>
{{end}}</tbody>
</table>
<p>Ensemble: the mean of the kept samples' predictive probabilities. Single sample: the first run's last sample alone.{{if .Rep.Dropped}} {{.Rep.Dropped}} torn sample record(s) at file ends were ignored.{{end}}</p>

<p id="networks">Ensemble: {{.EnsInfo}}.{{if .BaseInfo}} {{.BaseLabel}}: {{.BaseInfo}} (runs: {{range $i, $r := .Rep.BaselineInfo.Runs}}{{if $i}}, {{end}}<code>{{$r}}</code>{{end}}).{{end}}{{if .Classes}} Trained on classes {{.Classes}} of the data; the test images of the others are the held-out-classes set below.{{end}}</p>

{{if .Rep.Paired}}<h2>Ensemble against {{.BaseLabel}}</h2>
<p>Each figure of the ensemble minus the {{.BaseLabel}}'s, with the central 95% of its value over {{.Resamples}} paired bootstrap resamples of the {{.Rep.TestCount}} examples (and of each out-of-distribution set): both predictors scored on every resample, so the interval is the noise of this comparison on these examples, not the training seeds'. ECE's bootstrap is biased upward (a binned estimate), so its interval is a rough guide.</p>
<table id="paired">
<thead><tr><th>figure</th><th>difference</th><th>95% interval</th><th>better</th></tr></thead>
<tbody>
{{range .Rep.Paired}}<tr><td>{{.Name}}</td><td>{{printf "%+.4f" .Diff}}</td><td>[{{printf "%+.4f" .Lo}}, {{printf "%+.4f" .Hi}}]</td><td>{{.Better $.BaseLabel}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
{{if .Rep.OOD}}<h2>Out-of-distribution detection</h2>
<p>How well each uncertainty score (higher: more uncertain) separates each set from the test images, out-of-distribution positive: AUROC 1 separates them, 0.5 does not. Mutual information is undefined (&ndash;) for one network.</p>
<table id="ood">
<thead><tr><th>set</th><th>score</th><th>predictor</th><th>AUROC</th><th>AUPR</th><th>FPR at 95% TPR</th></tr></thead>
<tbody>
{{range .Rep.OOD}}<tr><td>{{.Set}}</td><td>{{.Score}}</td><td>{{.Predictor}}</td><td>{{fp .AUROC}}</td><td>{{fp .AUPR}}</td><td>{{fp .FPR95}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
{{if .Rep.Selective}}<h2>Selective prediction</h2>
<p>The predictor refuses the test images it is least certain of, by each score: the area under the risk-coverage curve (AURC, lower is better) and the accuracy of the 90% and 95% most certain answers.</p>
<table id="selective">
<thead><tr><th>score</th><th>predictor</th><th>AURC</th><th>accuracy at 90% coverage</th><th>accuracy at 95% coverage</th></tr></thead>
<tbody>
{{range .Rep.Selective}}<tr><td>{{.Score}}</td><td>{{.Predictor}}</td><td>{{fp .AURC}}</td><td>{{fp .AccAt90}}</td><td>{{fp .AccAt95}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
{{if .Rep.Shift}}<h2>Dataset shift</h2>
<table id="shift">
<thead><tr><th>shift</th><th>level</th><th>predictor</th><th>accuracy</th><th>NLL</th><th>ECE</th><th>Brier</th></tr></thead>
<tbody>
{{range .Rep.Shift}}<tr><td>{{.Kind}}</td><td>{{.Level}}</td><td>{{.Predictor}}</td><td>{{f4 .Accuracy}}</td><td>{{f4 .NLL}}</td><td>{{f4 .ECE}}</td><td>{{f4 .Brier}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
{{if .Rep.PerClass}}<h2>Per class</h2>
<table id="per-class">
<thead><tr><th>predictor</th><th>class</th><th>test images</th><th>accuracy</th><th>ECE</th></tr></thead>
<tbody>
{{range .Rep.PerClass}}<tr><td>{{.Predictor}}</td><td>{{.Class}}</td><td>{{.Count}}</td><td>{{f4 .Accuracy}}</td><td>{{f4 .ECE}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
<h2>Chains</h2>
{{if .Pooled}}{{if .Rep.RHat}}<p id="rhat">Held-out log-likelihood of each kept sample over {{len .Rep.Runs}} chains: split R-hat <b>{{printf "%.3f" .Rep.RHat}}</b>, bulk ESS <b>{{printf "%.1f" .Rep.ESS}}</b>. R-hat near 1 (below about 1.01) says the chains agree; larger says they have not mixed.</p>
{{else}}<p id="rhat">No split R-hat or ESS: a chain has fewer than 4 samples.</p>
{{end}}{{else}}<p>One chain: R-hat and ESS need several (<code>train --chains K</code>, or <code>eval --run A --run B</code>).</p>
{{end}}<table id="chains">
<thead><tr><th>chain</th><th>samples</th><th>mean held-out log-likelihood</th></tr></thead>
<tbody>
{{range .Chains}}<tr><td><code>{{.Dir}}</code></td><td>{{.Samples}}</td><td>{{f4 .HeldOut}}</td></tr>
{{end}}</tbody>
</table>

{{if .Rep.Tempering}}<h2>Tempering</h2>
{{range .Rep.Tempering}}{{$tp := .}}<h3><code>{{.Run}}</code></h3>
<p>{{if .AfterBurnIn}}After burn-in{{else}}In the last tuning round (burn-in not over){{end}}, {{.WindowSteps}} steps{{if .TuningRounds}}; ladder adapted in {{.TuningRounds}} tuning rounds{{end}}:
barrier Lambda {{f3 .Barrier}}, recommended rungs {{.RecommendedRungs}}, round trips {{.RoundTrips}} ({{printf "%.2f" .RoundTripsPer1k}} per 1,000 steps); swaps accepted at every pair and 2 Lambda &le; rungs: {{if .Communicates}}yes{{else}}no{{end}}.</p>
<table class="ladder">
<thead><tr><th>rung</th><th>T</th><th>beta = 1/T</th><th>local barrier</th><th>swap acceptance with the next rung (mean swap probability)</th><th>fraction swapped (0/1)</th></tr></thead>
<tbody>
{{range $j, $t := .Temps}}<tr><td>{{inc $j}}</td><td>{{f3 $t}}</td><td>{{f3 (div1 $t)}}</td><td>{{at $tp.LocalBarrier $j}}</td><td>{{at $tp.SwapAcceptance $j}}</td><td>{{at $tp.SwapOutcomes $j}}</td></tr>
{{end}}</tbody>
</table>
{{if .TuningOver}}<p>Ladder tuning {{if .TuningConverged}}converged by burn-in{{else}}did NOT converge by burn-in: its last round did not verify the ladder, which would need a burn-in of at least {{.NeededBurnIn}} steps{{end}}{{if .TuningRestarts}} ({{.TuningRestarts}} tuning rounds restarted: the replicas were still moving){{end}}.</p>
{{end}}{{if and .Verdict .PTFits}}<p>Is PT the right tool? {{.Verdict}}</p>{{end}}{{if .Advice}}<p class="warn">WARNING: {{.Advice}}</p>{{end}}
{{end}}{{end}}
<h2>Figures</h2>
{{range .Images}}<figure id="{{.Name}}">
<img {{.Src}} alt="{{.Title}}">
<figcaption>{{.Title}} ({{.Name}})</figcaption>
</figure>
{{end}}
</body>
</html>
`))
