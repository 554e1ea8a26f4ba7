package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"codeberg.org/sbinet/npyio/npz"
	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// Export file entries besides the learnables.
const (
	// Step is the step each sample was taken at, int64 [samples].
	Step = "step"
	// Chain is the chain each sample came from, int64 [samples]: an
	// index into ChainDirs.
	Chain = "chain"
	// ChainDirs are the chains' run directories, in order.
	ChainDirs = "chain_dirs"
	// LogLik is the per-example log-likelihood log p(y_i | x_i, theta)
	// of each chain's draws, float64 [chains, draws, examples].
	LogLik = "log_likelihood"
	// LogLikStep is the step of each draw of LogLik, int64
	// [chains, draws].
	LogLikStep = "log_likelihood_step"
)

// NPZOptions are the settings of NPZWith.
type NPZOptions struct {
	// Window keeps only the samples taken in its steps (the zero Window:
	// every sample), as eval --from-step and --to-step do.
	Window rundir.Window
}

// Summary describes what NPZ wrote.
type Summary struct {
	Chains     []string  // the chains' run directories
	Draws      []int     // samples per chain (those in Window)
	Learnables nn.Layout // the parameter arrays (the model's learnables), each with a leading sample axis
	DType      string    // float32 or float64, as stored in the samples files
	// LogLikDraws is the number of draws per chain in LogLik (the
	// shortest chain's count; 0 without data).
	LogLikDraws int
	// Dropped counts torn records at the ends of samples files (a crash
	// mid-write) that were ignored.
	Dropped int
	// Window is the step window exported (the zero Window: every sample).
	Window rundir.Window
	// Status is the state of every chain of the runs, exported or not: a
	// run of several chains exports those of its chains with samples at
	// their last checkpoint (rundir.PoolDirs).
	Status []rundir.ChainStatus
}

// NPZ is NPZWith with no options: every sample.
func NPZ(path string, runs []string, data *datasets.Dataset) (*Summary, error) {
	return NPZWith(path, runs, data, NPZOptions{})
}

// NPZWith writes the rung-1 samples of runs taken in opt.Window to path as
// a NumPy .npz archive. A run of several chains stands for those of its
// chains with samples at their last checkpoint, and each chain is read up
// to its last checkpoint's count (a run train still writes, as eval reads
// it; rundir.ScanChain); a chain with no sample in the window is an error
// saying which samples it has. Runs of different models, sample
// precisions, temperatures or classes (train --classes, in output order)
// are refused with an error naming both runs: the test images, their
// labels and the temperature are the first run's. The archive holds:
//
//   - one array per learnable (the Layout of the runs' model), named after
//     it, of shape [samples, shape...], in the stored precision;
//   - Step and Chain, [samples], and ChainDirs;
//   - with data not nil, LogLik [chains, draws, examples] and
//     LogLikStep [chains, draws], the input of ArviZ's LOO and WAIC.
//     ArviZ needs the same number of draws in every chain: chains with more
//     samples than the shortest contribute their first draws only (so draw d
//     is at the same step in chains of the same configuration); the weight
//     arrays keep every sample.
//
// The samples are held in memory (the size of the samples files; the peak
// resident memory was about twice that for a 383 MB samples file). The
// archive is written in a new private directory next to path (os.MkdirTemp)
// and renamed to path once complete and flushed to disk.
func NPZWith(path string, runs []string, data *datasets.Dataset, opt NPZOptions) (*Summary, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("export: no runs")
	}
	sum := &Summary{Window: opt.Window}
	chains, model, engine, err := inspectRuns(runs, sum)
	if err != nil {
		return nil, err
	}
	dirs := sum.Chains
	a := newNPZArrays(sum)
	a.dirs = dirs
	if data != nil {
		if a.ens, err = evaluate.NewModelEnsembleOn(engine, model, data); err != nil {
			return nil, err
		}
		sum.LogLikDraws = sum.Draws[0]
		for _, n := range sum.Draws {
			sum.LogLikDraws = min(sum.LogLikDraws, n)
		}
		a.loglik = make([][][]float64, len(dirs))
		a.llStep = make([][]int64, len(dirs))
	}
	for c, s := range chains {
		if err := a.readChain(c, s, sum); err != nil {
			return nil, err
		}
	}
	if err := a.write(path, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// npzArrays are the arrays NPZ writes, gathered chain by chain: each
// learnable's samples in the stored precision, each sample's step and
// chain, and with an ensemble each draw's per-example log-likelihood.
type npzArrays struct {
	total         int // samples of every chain
	f32           bool
	bufs32        [][]float32 // per learnable (float32 samples)
	bufs64        [][]float64 // per learnable (float64 samples)
	steps, chains []int64
	ens           *evaluate.Ensemble // nil: no log-likelihoods
	loglik        [][][]float64      // [chain][draw][example]
	llStep        [][]int64          // [chain][draw]
	dirs          []string           // the chains' directories
}

// newNPZArrays returns empty arrays sized for the samples sum counts (its
// caller sets dirs and, for log-likelihoods, the ensemble).
func newNPZArrays(sum *Summary) *npzArrays {
	a := &npzArrays{f32: sum.DType == "float32"}
	for _, n := range sum.Draws {
		a.total += n
	}
	a.bufs32 = make([][]float32, len(sum.Learnables))
	a.bufs64 = make([][]float64, len(sum.Learnables))
	for i, l := range sum.Learnables {
		if a.f32 {
			a.bufs32[i] = make([]float32, 0, a.total*l.Size())
		} else {
			a.bufs64[i] = make([]float64, 0, a.total*l.Size())
		}
	}
	a.steps = make([]int64, 0, a.total)
	a.chains = make([]int64, 0, a.total)
	return a
}

// readChain appends the sum.Draws[c] samples of chain c (status s) in
// sum.Window.
func (a *npzArrays) readChain(c int, s rundir.ChainStatus, sum *Summary) error {
	draw := 0
	_, err := scanDraws(s, sum.Window, sum.Draws[c], func(step int, theta []float64) error {
		for i, l := range sum.Learnables {
			v := theta[l.Offset : l.Offset+l.Size()]
			if a.f32 {
				for _, x := range v {
					a.bufs32[i] = append(a.bufs32[i], float32(x))
				}
			} else {
				a.bufs64[i] = append(a.bufs64[i], v...)
			}
		}
		a.steps = append(a.steps, int64(step))
		a.chains = append(a.chains, int64(c))
		if a.ens != nil && draw < sum.LogLikDraws {
			ll, err := exampleLogLik(a.ens, theta)
			if err != nil {
				return fmt.Errorf("run %s, sample at step %d: %w", s.Dir, step, err)
			}
			a.loglik[c] = append(a.loglik[c], ll)
			a.llStep[c] = append(a.llStep[c], int64(step))
		}
		draw++
		return nil
	})
	return err
}

// errEnough ends scanDraws' scan once it has its draws.
var errEnough = errors.New("export: draws read")

// scanDraws calls keep with the first n samples of chain s taken in w
// (rundir.ScanChain) and returns their steps. Fewer than n is an error:
// inspectRuns counted n, so the samples file changed in between.
func scanDraws(s rundir.ChainStatus, w rundir.Window, n int, keep func(step int, theta []float64) error) ([]int64, error) {
	steps := make([]int64, 0, n)
	_, err := rundir.ScanChain(s, w, false, func(step int, theta []float64) error {
		if len(steps) == n {
			return errEnough
		}
		steps = append(steps, int64(step))
		return keep(step, theta)
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	if len(steps) < n {
		return nil, fmt.Errorf("export: run %s: %d samples in the window, %d counted before: the samples file changed while it was exported", s.Dir, len(steps), n)
	}
	return steps, nil
}

// write writes the arrays to the archive at path: to a staging directory
// next to it, renamed to path once complete and flushed to disk.
func (a *npzArrays) write(path string, sum *Summary) error {
	st, err := newStaging(path)
	if err != nil {
		return err
	}
	if err := a.writeFile(st.path, sum); err != nil {
		st.remove()
		return fmt.Errorf("export %s: %w", path, err)
	}
	if err := st.commit(); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	return nil
}

// writeFile writes the archive to a new file name.
func (a *npzArrays) writeFile(name string, sum *Summary) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := npz.NewWriter(f) // Close flushes the archive, not f
	err = a.writeArrays(w, sum)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeArrays writes the arrays to the archive w.
func (a *npzArrays) writeArrays(w *npz.Writer, sum *Summary) error {
	for i, l := range sum.Learnables {
		var v any
		if a.f32 {
			v = withSampleAxis(a.bufs32[i], a.total, l.Shape)
		} else {
			v = withSampleAxis(a.bufs64[i], a.total, l.Shape)
		}
		if err := w.Write(l.Name+".npy", v); err != nil {
			return err
		}
	}
	type entry struct {
		name string
		v    any
	}
	entries := []entry{{Step, a.steps}, {Chain, a.chains}, {ChainDirs, a.dirs}}
	if a.ens != nil {
		entries = append(entries, entry{LogLik, a.loglik}, entry{LogLikStep, a.llStep})
	}
	for _, e := range entries {
		if err := w.Write(e.name+".npy", e.v); err != nil {
			return err
		}
	}
	return nil
}

// inspectRuns expands runs into the chains to export (rundir.PoolDirs),
// checks that they hold samples of one model in one precision, sampled at
// one temperature on the same classes (in the same output order), counts
// each chain's samples in sum.Window, and records the chains, their
// statuses, counts and precision in sum; it returns the chains' statuses,
// the model and the engine its predictions are computed on.
func inspectRuns(runs []string, sum *Summary) ([]rundir.ChainStatus, nn.Model, autodiff.Engine, error) {
	var model nn.Model
	var engine autodiff.Engine
	if err := sum.Window.Check(); err != nil {
		return nil, model, engine, fmt.Errorf("export: %w", err)
	}
	chains, all, err := rundir.PoolDirs(runs)
	if err != nil {
		return nil, model, engine, err
	}
	sum.Status = all
	var first runspec.Config // the first chain's configuration
	for i, s := range chains {
		dir := s.Dir
		cfg, err := rundir.ReadRunConfig(dir)
		if err != nil {
			return nil, model, engine, err
		}
		m, err := cfg.BuildModel(runspec.DefaultSetup().Models) // runs of the process's registered models
		if err != nil {
			return nil, model, engine, fmt.Errorf("run %s: %w", dir, err)
		}
		path := filepath.Join(dir, rundir.SamplesFile)
		h, err := rundir.ReadSampleHeaderFile(path)
		if err != nil {
			return nil, model, engine, err
		}
		if err := rundir.CheckSamplesModel(path, h, m); err != nil {
			return nil, model, engine, err
		}
		if i == 0 {
			model, sum.DType, engine, first = m, h.DType, cfg.RunEngine(m), cfg
		} else if err := runspec.CheckSameClasses(chains[0].Dir, first.Classes, dir, cfg.Classes); err != nil {
			// the labels of the test images and the meaning of each output are the first run's
			return nil, model, engine, fmt.Errorf("export: %w", err)
		} else if t, t0 := cfg.PosteriorTemperature(), first.PosteriorTemperature(); t != t0 {
			return nil, model, engine, fmt.Errorf("export: run %s sampled at temperature %g, run %s at %g: cannot export posteriors of different temperatures together", dir, t, chains[0].Dir, t0)
		} else if rundir.SamplesModel(m) != rundir.SamplesModel(model) {
			return nil, model, engine, fmt.Errorf("export: run %s has model %s (%s), run %s has %s (%s): cannot export together", dir, m.Name, m.Layout, chains[0].Dir, model.Name, model.Layout)
		} else if h.DType != sum.DType {
			return nil, model, engine, fmt.Errorf("export: run %s stores %s samples, run %s %s: cannot export together", dir, h.DType, chains[0].Dir, sum.DType)
		}
		cs, err := rundir.ScanChain(s, sum.Window, false, func(int, []float64) error { return nil })
		if err != nil {
			return nil, model, engine, fmt.Errorf("export: %w", err)
		}
		sum.Chains = append(sum.Chains, dir)
		sum.Draws = append(sum.Draws, cs.Kept)
		sum.Dropped += cs.Dropped
	}
	sum.Learnables = model.Layout
	return chains, model, engine, nil
}

// exampleLogLik returns log p(y_i | x_i, theta) for every example of the
// ensemble's data: the log-softmax of the label's logit, unclipped (a
// log-likelihood far below log(1e-300) is kept, as LOO and WAIC need).
func exampleLogLik(ens *evaluate.Ensemble, theta []float64) ([]float64, error) {
	// The ensemble computes each sample's log-likelihoods into LastLogLik;
	// its running sums are not used here.
	if err := ens.Add(theta); err != nil {
		return nil, err
	}
	return slices.Clone(ens.LastLogLik), nil
}

// withSampleAxis returns flat (n samples of row-major arrays of shape) as
// nested slices of shape [n, shape...] sharing flat's memory: the form
// npyio writes as an n-dimensional array.
func withSampleAxis[T float32 | float64](flat []T, n int, shape []int) any {
	return nest(reflect.ValueOf(flat), append([]int{n}, shape...)).Interface()
}

// nest returns the row-major flat slice as nested slices of shape.
func nest(flat reflect.Value, shape []int) reflect.Value {
	if len(shape) <= 1 {
		return flat
	}
	inner := 1
	typ := flat.Type()
	for _, d := range shape[1:] {
		inner *= d
		typ = reflect.SliceOf(typ)
	}
	out := reflect.MakeSlice(typ, shape[0], shape[0])
	for i := 0; i < shape[0]; i++ {
		out.Index(i).Set(nest(flat.Slice(i*inner, (i+1)*inner), shape[1:]))
	}
	return out
}
