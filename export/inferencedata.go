package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// Names in the InferenceData store besides the learnables.
const (
	// Theta is the posterior variable of flat parameter ranges
	// (ParamSelection.Ranges), dimensions (chain, draw, ThetaIndex).
	Theta = "theta"
	// ThetaIndex is Theta's dimension; its coordinate holds each value's
	// index in the flat parameter vector.
	ThetaIndex = "theta_index"
	// Observed is the name of the labels in observed_data and of their
	// log-likelihood in log_likelihood, along the dimension Example.
	Observed = "y"
	Example  = "example"
	// WindowThin is the root's and the posterior's attribute of the
	// thinning the export applied (ZarrOptions.Window.Thin, export
	// --thin; left out at 0); their attribute thin is the run's.
	WindowThin = "window_thin"
)

// ParamSelection is the part of each sample InferenceData's posterior
// group holds: whole learnables (by name) and ranges [lo, hi) of the flat
// parameter vector.
type ParamSelection struct {
	Learnables nn.Layout
	Ranges     [][2]int
}

// SelectParams parses a selection: a comma-separated list of learnable
// names (W0, b1, ... as the model's Layout names them) and flat index
// ranges lo:hi (hi excluded); "" selects every learnable.
// A learnable whose name holds '/' (an ONNX initialiser's may) or is one
// of the posterior group's own names (chain, draw, theta, theta_index)
// cannot be a variable of the store: it is refused when selected.
func SelectParams(spec string, layout nn.Layout) (ParamSelection, error) {
	sel, err := parseParams(spec, layout)
	if err == nil {
		err = checkVariableNames(sel.Learnables)
	}
	return sel, err
}

// parseParams parses SelectParams' spec against layout.
func parseParams(spec string, layout nn.Layout) (ParamSelection, error) {
	var sel ParamSelection
	if strings.TrimSpace(spec) == "" {
		sel.Learnables = layout
		return sel, nil
	}
	byName := map[string]nn.Param{}
	var names []string
	for _, p := range layout {
		byName[p.Name] = p
		names = append(names, p.Name)
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if lo, hi, ok := strings.Cut(item, ":"); ok {
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a < 0 || a >= b || b > layout.NumParams() {
				return sel, fmt.Errorf("params %q: range %q: want lo:hi with 0 <= lo < hi <= %d", spec, item, layout.NumParams())
			}
			sel.Ranges = append(sel.Ranges, [2]int{a, b})
			continue
		}
		p, ok := byName[item]
		if !ok {
			return sel, fmt.Errorf("params %q: %q is neither a learnable of the model (%s) nor a range lo:hi", spec, item, strings.Join(names, ", "))
		}
		if !seen[item] {
			seen[item] = true
			sel.Learnables = append(sel.Learnables, p)
		}
	}
	return sel, nil
}

// checkVariableNames refuses learnables whose names cannot name a variable
// of the posterior group: a '/' would nest it in a group of its own (which
// xarray does not read), and the group's own names would collide.
func checkVariableNames(ls nn.Layout) error {
	for _, l := range ls {
		switch {
		case strings.Contains(l.Name, "/"):
			return fmt.Errorf("learnable %q: a name holding '/' cannot be a Zarr variable (it would nest a group): select it by its flat range lo:hi in --params, or export --format npz", l.Name)
		case l.Name == "chain" || l.Name == "draw" || l.Name == Theta || l.Name == ThetaIndex:
			return fmt.Errorf("learnable %q: the posterior group's own name (chain, draw, %s, %s): select it by its flat range lo:hi in --params, or export --format npz", l.Name, Theta, ThetaIndex)
		}
	}
	return nil
}

// rangeIndices returns the flat indices of the ranges, in order.
func (s ParamSelection) rangeIndices() []int64 {
	var out []int64
	for _, r := range s.Ranges {
		for i := r[0]; i < r[1]; i++ {
			out = append(out, int64(i))
		}
	}
	return out
}

// ZarrOptions are the settings of Zarr.
type ZarrOptions struct {
	// Params selects the posterior group's weights (SelectParams; "":
	// every learnable).
	Params string
	// Compress compresses every chunk with zlib (level 1); otherwise
	// chunks are raw bytes.
	Compress bool
	// Created is the groups' created_at attribute (zero: left out).
	Created time.Time
	// Version is the inference_library_version attribute.
	Version string
	// Window keeps only the samples taken in its steps (the zero Window:
	// every sample), as eval --from-step and --to-step do.
	Window rundir.Window
}

// ZarrSummary describes what Zarr wrote.
type ZarrSummary struct {
	Summary
	// DrawsPerChain is the draws of each chain in every group: the
	// shortest chain's count (chains with more contribute their first).
	DrawsPerChain int
	// Variables are the posterior group's variables, "name [shape]".
	Variables []string
	// Groups are the groups written.
	Groups []string
}

// Zarr writes the rung-1 samples of runs taken in opt.Window to path, a
// new directory, as ArviZ's InferenceData in a Zarr v2 store (az.from_zarr
// reads it; docs/run-directory.md). The chains and samples are NPZWith's:
// a run of several chains stands for those of its chains with samples at
// their last checkpoint, each read up to that checkpoint's count, and a
// chain with no sample in the window is an error. Groups:
//
//   - posterior: the selected weights (opt.Params), each learnable of
//     dimensions (chain, draw, NAME_dim_0, ...), flat ranges as Theta
//     (chain, draw, ThetaIndex), in the samples' stored precision;
//   - sample_stats (chain, draw): step, and from the metrics line at or
//     before each draw's step among those the chain's last checkpoint
//     vouches for (rundir.ReadMetricsUpTo; the first line for a draw
//     taken before it; the line's step is metrics_step): the minibatch
//     potential U~ (potential_energy), p'p/2 (kinetic_energy), their sum
//     (energy), lp = -U~/T, the thermostat xi and the temperature T;
//   - with data: log_likelihood, Observed (chain, draw, Example) =
//     log p(y_i | x_i, theta), and observed_data, Observed (Example), the
//     labels (output indices).
//
// Every group has chain and draw coordinates and the attributes
// created_at, inference_library and inference_library_version; the root
// and the posterior also name the runs and their settings (and the
// window, from_step, to_step and WindowThin, each when set; their thin is
// the run's). ArviZ needs
// equal chains: each contributes its first DrawsPerChain draws, the
// shortest chain's count. The store is written in a new private directory
// next to path (os.MkdirTemp) and renamed to path once complete and its
// files flushed to disk; an existing path is refused.
func Zarr(path string, runs []string, data *datasets.Dataset, opt ZarrOptions) (*ZarrSummary, error) {
	if len(runs) == 0 {
		return nil, errors.New("export: no runs")
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("export: %s exists (remove it, or choose another --out)", path)
	}
	sum := &ZarrSummary{Summary: Summary{Window: opt.Window}}
	chains, model, engine, err := inspectRuns(runs, &sum.Summary)
	if err != nil {
		return nil, err
	}
	sel, err := SelectParams(opt.Params, model.Layout)
	if err != nil {
		return nil, err
	}
	sum.DrawsPerChain = sum.Draws[0]
	for _, n := range sum.Draws {
		sum.DrawsPerChain = min(sum.DrawsPerChain, n)
	}
	var ens *evaluate.Ensemble
	if data != nil {
		if ens, err = evaluate.NewModelEnsembleOn(engine, model, data); err != nil {
			return nil, err
		}
		sum.LogLikDraws = sum.DrawsPerChain
	}
	cfg, err := rundir.ReadRunConfig(chains[0].Dir)
	if err != nil {
		return nil, err
	}
	st, err := newStaging(path)
	if err != nil {
		return nil, err
	}
	w := &idWriter{sum: sum, sel: sel, cfg: cfg, opt: opt, data: data, ens: ens, chains: chains}
	if err := w.write(st.path); err != nil {
		st.remove()
		return nil, fmt.Errorf("export %s: %w", path, err)
	}
	if err := st.commit(); err != nil {
		return nil, fmt.Errorf("export %s: %w", path, err)
	}
	return sum, nil
}

// idWriter writes one InferenceData store.
type idWriter struct {
	sum  *ZarrSummary
	sel  ParamSelection
	cfg  runspec.Config
	opt  ZarrOptions
	data *datasets.Dataset
	ens  *evaluate.Ensemble
	// chains are the chains exported (sum.Chains are their directories),
	// whose checkpointed counts bound the samples read
	chains []rundir.ChainStatus

	z      *zarrStore
	vars   []*zarrArray // posterior arrays: the learnables, then Theta
	loglik *zarrArray
}

// groupAttrs are the attributes of every group ArviZ's schema asks for.
func (w *idWriter) groupAttrs() map[string]any {
	a := map[string]any{"inference_library": "ptsghmc", "inference_library_version": w.opt.Version}
	if !w.opt.Created.IsZero() {
		a["created_at"] = w.opt.Created.UTC().Format(time.RFC3339)
	}
	return a
}

// runAttrs adds the runs and their settings to the group attributes.
func (w *idWriter) runAttrs() (map[string]any, error) {
	a := w.groupAttrs()
	cj, err := json.Marshal(w.cfg)
	if err != nil {
		return nil, err
	}
	a["runs"] = w.sum.Chains
	a["config"] = string(cj)
	a["model"] = w.cfg.Arch
	if w.cfg.Model != "" {
		a["model"] = w.cfg.Model
	}
	a["sampler"] = w.cfg.Sampler
	a["temperature"] = w.cfg.PosteriorTemperature()
	a["seed"] = w.cfg.Seed
	a["steps"], a["burnin"], a["thin"], a["lr"], a["batch"] = w.cfg.Steps, w.cfg.BurnIn, w.cfg.Thin, w.cfg.LR, w.cfg.Batch
	a["samples_dtype"] = w.sum.DType
	window := w.sum.Window.Phrase()
	if window != "" {
		window = " " + window
	}
	a["draws_note"] = fmt.Sprintf("each chain's first %d draws%s (the shortest chain's count); draws are kept samples after burn-in, every thin steps", w.sum.DrawsPerChain, window)
	// the window's own JSON keys (from_step, to_step, each left out at 0),
	// as eval --json and serve's /v1/model write them, but for its thin
	// (export --thin), window_thin: thin is the run's
	wj, err := json.Marshal(w.sum.Window)
	var win map[string]any
	if err == nil {
		err = json.Unmarshal(wj, &win)
	}
	if err != nil {
		return nil, fmt.Errorf("export: step window: %w", err)
	}
	for k, v := range win {
		if k == "thin" {
			k = WindowThin
		}
		a[k] = v
	}
	return a, nil
}

func (w *idWriter) write(root string) error {
	var err error
	if w.z, err = newZarrStore(root, w.opt.Compress); err != nil {
		return err
	}
	ra, err := w.runAttrs()
	if err != nil {
		return err
	}
	if err := w.z.group("", ra); err != nil {
		return err
	}
	if err := w.posteriorArrays(ra); err != nil {
		return err
	}
	steps, err := w.draws()
	if err != nil {
		return err
	}
	if err := w.sampleStats(steps); err != nil {
		return err
	}
	if w.data != nil {
		if err := w.observedData(); err != nil {
			return err
		}
	}
	return w.z.consolidate()
}

// chainDraw writes the chain and draw coordinates of group.
func (w *idWriter) chainDraw(group string) error {
	if err := w.z.coordinate(group, "chain", arange(len(w.chains))); err != nil {
		return err
	}
	return w.z.coordinate(group, "draw", arange(w.sum.DrawsPerChain))
}

// posteriorArrays creates the posterior and log_likelihood groups and
// their arrays.
func (w *idWriter) posteriorArrays(attrs map[string]any) error {
	c, d := len(w.chains), w.sum.DrawsPerChain
	dtype := "<f8"
	if w.sum.DType == "float32" {
		dtype = "<f4"
	}
	w.sum.Groups = append(w.sum.Groups, "posterior")
	if err := w.z.group("posterior", attrs); err != nil {
		return err
	}
	if err := w.chainDraw("posterior"); err != nil {
		return err
	}
	for _, l := range w.sel.Learnables {
		dims := []string{"chain", "draw"}
		for k, n := range l.Shape {
			dim := fmt.Sprintf("%s_dim_%d", l.Name, k)
			dims = append(dims, dim)
			if err := w.z.coordinate("posterior", dim, arange(n)); err != nil {
				return err
			}
		}
		a, err := w.z.array("posterior/"+l.Name, append([]int{c, d}, l.Shape...), append([]int{1, 1}, l.Shape...), dtype, dims, nil)
		if err != nil {
			return err
		}
		w.vars = append(w.vars, a)
		w.sum.Variables = append(w.sum.Variables, fmt.Sprintf("%s %v", l.Name, append([]int{c, d}, l.Shape...)))
	}
	if idx := w.sel.rangeIndices(); len(idx) > 0 {
		if err := w.z.coordinate("posterior", ThetaIndex, idx); err != nil {
			return err
		}
		a, err := w.z.array("posterior/"+Theta, []int{c, d, len(idx)}, []int{1, 1, len(idx)}, dtype, []string{"chain", "draw", ThetaIndex}, nil)
		if err != nil {
			return err
		}
		w.vars = append(w.vars, a)
		w.sum.Variables = append(w.sum.Variables, fmt.Sprintf("%s %v", Theta, []int{c, d, len(idx)}))
	}
	if w.data == nil {
		return nil
	}
	w.sum.Groups = append(w.sum.Groups, "log_likelihood")
	if err := w.z.group("log_likelihood", w.groupAttrs()); err != nil {
		return err
	}
	if err := w.chainDraw("log_likelihood"); err != nil {
		return err
	}
	if err := w.z.coordinate("log_likelihood", Example, arange(w.data.N)); err != nil {
		return err
	}
	var err error
	w.loglik, err = w.z.array("log_likelihood/"+Observed, []int{c, d, w.data.N}, []int{1, 1, w.data.N}, "<f8", []string{"chain", "draw", Example},
		map[string]any{"description": "log p(y_i | x_i, theta) of each test example under each draw"})
	return err
}

// draws reads each chain's first DrawsPerChain samples in the window,
// writing their posterior chunks and log-likelihoods; it returns each
// draw's step.
func (w *idWriter) draws() ([][]int64, error) {
	d := w.sum.DrawsPerChain
	steps := make([][]int64, len(w.chains))
	for c, s := range w.chains {
		draw := 0
		var err error
		steps[c], err = scanDraws(s, w.sum.Window, d, func(step int, theta []float64) error {
			if err := w.writeDraw(c, draw, theta); err != nil {
				return fmt.Errorf("run %s, sample at step %d: %w", s.Dir, step, err)
			}
			draw++
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return steps, nil
}

// writeDraw writes draw d of chain c: its selected weights and, with data,
// its per-example log-likelihoods.
func (w *idWriter) writeDraw(c, d int, theta []float64) error {
	values := make([][]float64, 0, len(w.vars))
	for _, l := range w.sel.Learnables {
		values = append(values, theta[l.Offset:l.Offset+l.Size()])
	}
	if len(w.sel.Ranges) > 0 {
		var v []float64
		for _, r := range w.sel.Ranges {
			v = append(v, theta[r[0]:r[1]]...)
		}
		values = append(values, v)
	}
	for i, a := range w.vars {
		idx := make([]int, len(a.shape))
		idx[0], idx[1] = c, d
		var err error
		if a.dtype == "<f4" {
			f := make([]float32, len(values[i]))
			for j, x := range values[i] {
				f[j] = float32(x)
			}
			err = a.write(idx, f)
		} else {
			err = a.write(idx, values[i])
		}
		if err != nil {
			return err
		}
	}
	if w.ens == nil {
		return nil
	}
	ll, err := exampleLogLik(w.ens, theta)
	if err != nil {
		return err
	}
	return w.loglik.write([]int{c, d, 0}, ll)
}

// sampleStats writes the sample_stats group from each chain's metrics.
func (w *idWriter) sampleStats(steps [][]int64) error {
	w.sum.Groups = append(w.sum.Groups, "sample_stats")
	if err := w.z.group("sample_stats", w.groupAttrs()); err != nil {
		return err
	}
	if err := w.chainDraw("sample_stats"); err != nil {
		return err
	}
	c, d := len(w.chains), w.sum.DrawsPerChain
	T := w.cfg.PosteriorTemperature()
	dim := float64(w.sum.Learnables.NumParams())
	floats := []struct {
		name, desc string
		of         func(m rundir.MetricsLine) float64
	}{
		{"potential_energy", "the minibatch potential U~ of the metrics line at or before the draw's step", func(m rundir.MetricsLine) float64 { return m.U }},
		{"kinetic_energy", "p'p/2 of rung 1 at that line", func(m rundir.MetricsLine) float64 { return kinetic(m) * dim / 2 }},
		{"energy", "potential_energy + kinetic_energy: the Hamiltonian with unit mass, from a minibatch", func(m rundir.MetricsLine) float64 { return m.U + kinetic(m)*dim/2 }},
		{"lp", "-U~/T: the log density of the sampled exp(-U/T) up to a constant, from a minibatch", func(m rundir.MetricsLine) float64 { return -m.U / T }},
		{"thermostat", "the SGNHT thermostat xi of rung 1 at that line (0 without one)", func(m rundir.MetricsLine) float64 { return first(m.Xi) }},
		{"temperature", "the posterior temperature T of exp(-U/T) that rung 1 samples", func(rundir.MetricsLine) float64 { return T }},
	}
	lines := make([][]rundir.MetricsLine, c)
	mstep := make([][]int64, c)
	for ci, dir := range w.sum.Chains {
		// the lines the chain's checkpoint vouches for: a chain still
		// training may have a half-written last line
		all, err := rundir.ReadMetricsUpTo(dir, w.chains[ci].MetricsBytes)
		if err != nil {
			return err
		}
		if len(all) == 0 && len(steps[ci]) > 0 {
			return fmt.Errorf("run %s: %s has no lines", dir, rundir.MetricsFile)
		}
		for _, s := range steps[ci] {
			// the line at or before the draw; the first line for a draw
			// taken before it (a burn-in shorter than --log-every)
			i := max(sort.Search(len(all), func(i int) bool { return int64(all[i].Step) > s })-1, 0)
			lines[ci] = append(lines[ci], all[i])
			mstep[ci] = append(mstep[ci], int64(all[i].Step))
		}
	}
	for _, v := range []struct {
		name string
		vals [][]int64
		desc string
	}{{"step", steps, "the step the draw was taken at"}, {"metrics_step", mstep, "the step of the metrics line the other statistics come from (the line at or before the draw's step; the first line for a draw taken before it)"}} {
		a, err := w.z.array("sample_stats/"+v.name, []int{c, d}, []int{1, d}, "<i8", []string{"chain", "draw"}, map[string]any{"description": v.desc})
		if err != nil {
			return err
		}
		for ci := range c {
			if err := a.write([]int{ci, 0}, v.vals[ci]); err != nil {
				return err
			}
		}
	}
	for _, f := range floats {
		a, err := w.z.array("sample_stats/"+f.name, []int{c, d}, []int{1, d}, "<f8", []string{"chain", "draw"}, map[string]any{"description": f.desc})
		if err != nil {
			return err
		}
		for ci := range c {
			v := make([]float64, d)
			for j, m := range lines[ci] {
				v[j] = f.of(m)
			}
			if err := a.write([]int{ci, 0}, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func kinetic(m rundir.MetricsLine) float64 { return first(m.Kinetic) }

func first(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// observedData writes the labels.
func (w *idWriter) observedData() error {
	w.sum.Groups = append(w.sum.Groups, "observed_data")
	if err := w.z.group("observed_data", w.groupAttrs()); err != nil {
		return err
	}
	if err := w.z.coordinate("observed_data", Example, arange(w.data.N)); err != nil {
		return err
	}
	a, err := w.z.array("observed_data/"+Observed, []int{w.data.N}, []int{w.data.N}, "<i8", []string{Example},
		map[string]any{"description": "the test labels, as indices of the model's outputs"})
	if err != nil {
		return err
	}
	y := make([]int64, w.data.N)
	for i, l := range w.data.Labels {
		y[i] = int64(l)
	}
	return a.write([]int{0}, y)
}
