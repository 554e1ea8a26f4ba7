package evaluate

import (
	"fmt"
	"math"
	"slices"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// Metrics are the figures of a predictive distribution on labelled data.
type Metrics struct {
	Accuracy float64 `json:"accuracy"` // fraction whose most probable class is the label
	NLL      float64 `json:"nll"`      // mean -log p(label)
	ECE      float64 `json:"ece"`      // expected calibration error, 15 equal-width confidence bins
	Brier    float64 `json:"brier"`    // mean sum over classes of (p_c - 1[c = label])^2
	Samples  int     `json:"samples"`  // weight samples averaged
}

// probFloor is the least probability of a label Score takes the log of
// (-log of it, 690.8, the most an example adds to its NLL).
const probFloor = 1e-300

// ECEBins is the number of confidence bins of Metrics.ECE.
const ECEBins = 15

// confidenceBin returns the ECE bin of a confidence in [0, 1]: bins are
// (b/15, (b+1)/15], with 0 in the first.
func confidenceBin(conf float64) int {
	return min(max(int(math.Ceil(conf*ECEBins))-1, 0), ECEBins-1)
}

// Score computes Metrics for predictive probabilities probs (n rows of k
// classes, row-major) against n labels in [0, k). Probabilities of another
// number of rows than labels, no labels, or a label outside [0, k) are an
// error naming what was expected and what was found.
func Score(probs []float64, labels []int, k int) (Metrics, error) {
	if err := checkScored(probs, labels, k); err != nil {
		return Metrics{}, fmt.Errorf("score: %w", err)
	}
	return score(probs, labels, k), nil
}

// checkScored returns an error unless probs holds len(labels) > 0 rows of
// k > 0 probabilities and every label is in [0, k).
func checkScored(probs []float64, labels []int, k int) error {
	if k <= 0 {
		return fmt.Errorf("%d classes: want at least 1", k)
	}
	if len(labels) == 0 {
		return fmt.Errorf("no labels: want at least one example")
	}
	if len(probs) != len(labels)*k {
		return fmt.Errorf("%d labels of %d classes need %d probabilities, have %d", len(labels), k, len(labels)*k, len(probs))
	}
	for i, y := range labels {
		if y < 0 || y >= k {
			return fmt.Errorf("label %d of example %d outside [0, %d)", y, i, k)
		}
	}
	return nil
}

// score is Score of probabilities and labels known to fit (checkScored).
func score(probs []float64, labels []int, k int) Metrics {
	n := len(labels)
	var m Metrics
	var binN [ECEBins]int
	var binConf, binAcc [ECEBins]float64
	for i, y := range labels {
		p := probs[i*k : (i+1)*k]
		best := autodiff.ArgMax(p)
		correct := 0.0
		if best == y {
			correct = 1
		}
		m.Accuracy += correct
		m.NLL -= math.Log(math.Max(p[y], probFloor))
		for c, v := range p {
			t := 0.0
			if c == y {
				t = 1
			}
			m.Brier += (v - t) * (v - t)
		}
		conf := p[best]
		b := confidenceBin(conf)
		binN[b]++
		binConf[b] += conf
		binAcc[b] += correct
	}
	for b := range binN {
		if binN[b] > 0 {
			m.ECE += math.Abs(binAcc[b]-binConf[b]) / float64(n)
		}
	}
	m.Accuracy /= float64(n)
	m.NLL /= float64(n)
	m.Brier /= float64(n)
	return m
}

// Reliability returns, per confidence bin, the number of examples, their
// mean confidence and their accuracy: the data of a reliability diagram of
// probabilities probs (n rows of k classes, row-major) against n labels in
// [0, k). Input that does not fit is an error, as for Score.
func Reliability(probs []float64, labels []int, k int) (Reliab, error) {
	if err := checkScored(probs, labels, k); err != nil {
		return Reliab{}, fmt.Errorf("reliability: %w", err)
	}
	count := make([]int, ECEBins)
	conf := make([]float64, ECEBins)
	acc := make([]float64, ECEBins)
	for i, y := range labels {
		p := probs[i*k : (i+1)*k]
		best := autodiff.ArgMax(p)
		b := confidenceBin(p[best])
		count[b]++
		conf[b] += p[best]
		if best == y {
			acc[b]++
		}
	}
	for b := range count {
		if count[b] > 0 {
			conf[b] /= float64(count[b])
			acc[b] /= float64(count[b])
		}
	}
	return Reliab{Count: count, Conf: conf, Acc: acc}, nil
}

// Ensemble accumulates the posterior-predictive distribution of weight
// samples on a data set: the mean of the samples' softmax probabilities.
type Ensemble struct {
	Data  *datasets.Dataset
	Model nn.Model
	Spec  nn.Spec   // the model's spec when it is an MLP
	Sum   []float64 // sum over samples of p(c | x_i, theta_s), row-major
	Ent   []float64 // sum over samples of the entropy of p(. | x_i, theta_s)
	Count int
	Last  []float64 // the last sample's probabilities
	// LastLogLik is the last sample's log p(y_i | x_i, theta) of each
	// example's label y_i: z_y - logsumexp(z) of its logits z, unclipped
	// (the log of Last's probability can underflow to -Inf). Every label
	// is in [0, Classes): an ensemble refuses data with another.
	LastLogLik []float64
	// LogLik is log sum_s p(y_i | x_i, theta_s) of each example's label, a
	// running log-sum-exp of the samples' log-probabilities (meaningful
	// once Count > 0): the predictive NLL of an example whose mean
	// probability underflows (Metrics).
	LogLik []float64

	pred    *autodiff.Predictor   // an MLP's (or a VM graph's) logits, batch by batch
	pool    *autodiff.ForwardPool // a compiled graph's logits, all the sets of a pass at once (nil: pred)
	wide    []float64             // a float32 sample widened (AddFloat32)
	threads int                   // BLAS threads per call while Add runs (0: the process's setting)
}

// NewEnsemble returns an empty ensemble of an MLP spec on data.
func NewEnsemble(spec nn.Spec, data *datasets.Dataset) (*Ensemble, error) {
	if len(spec.Sizes) < 2 {
		return nil, fmt.Errorf("ensemble: spec of %d layer widths %v: want at least 2 (inputs and outputs)", len(spec.Sizes), spec.Sizes)
	}
	if data.Classes != spec.Sizes[len(spec.Sizes)-1] || data.D != spec.Sizes[0] {
		return nil, fmt.Errorf("ensemble: model %s does not fit data of %d features and %d classes", spec.Arch(), data.D, data.Classes)
	}
	m, err := spec.Model()
	if err != nil {
		return nil, err
	}
	return NewModelEnsemble(m, data)
}

// NewModelEnsemble returns an empty ensemble of a classifier model on data:
// the compiled graph computes the logits (an MLP's in its BLAS plan's
// arithmetic; NewModelEnsembleOn with engine plan).
func NewModelEnsemble(model nn.Model, data *datasets.Dataset) (*Ensemble, error) {
	return NewModelEnsembleOn(autodiff.EnginePlan, model, data)
}

// NewModelEnsembleOn is NewModelEnsemble with the logits computed on
// engine (a run's Config.RunEngine, so that a run made on the VM is
// evaluated on it).
//
// A compiled model other than an MLP (autodiff.Poolable: LeNet, say)
// computes its logits on an autodiff.ForwardPool, one worker per core,
// which Add and AddAll share out batch by batch: the probabilities are
// those of the model's autodiff.Predictor, bit for bit
// (TestPooledEnsembleMatchesPredictor).
func NewModelEnsembleOn(engine autodiff.Engine, model nn.Model, data *datasets.Dataset) (*Ensemble, error) {
	return newModelEnsemble(engine, model, data, autodiff.Poolable(engine, model))
}

// poolBatch is the batch of examples each forward pass of an ensemble's
// pool takes at once (docs/speed.md, "Scoring a CNN posterior").
const poolBatch = 100

// newModelEnsemble is NewModelEnsembleOn with the logits on a forward
// pool (pooled) or on the model's predictor (the reference the pool is
// tested against).
func newModelEnsemble(engine autodiff.Engine, model nn.Model, data *datasets.Dataset, pooled bool) (*Ensemble, error) {
	if data.Classes != model.Outputs || data.D != model.Inputs || !model.Logits {
		return nil, fmt.Errorf("ensemble: model %s (%d inputs, %d outputs, logits %v) does not fit data of %d features and %d classes", model.Name, model.Inputs, model.Outputs, model.Logits, data.D, data.Classes)
	}
	if err := checkEnsembleData(data, model); err != nil {
		return nil, err
	}
	k := data.Classes
	e := &Ensemble{Data: data, Model: model, Sum: make([]float64, data.N*k), Ent: make([]float64, data.N),
		Last: make([]float64, data.N*k), LastLogLik: make([]float64, data.N), LogLik: make([]float64, data.N)}
	if pooled {
		pool, err := autodiff.NewForwardPool(engine, model, poolBatch, autodiff.Float32, autodiff.PoolWorkers())
		if err != nil {
			return nil, fmt.Errorf("ensemble: %w", err)
		}
		e.pool = pool
	} else {
		ev, err := autodiff.NewLogitEvaluator(engine, model, autodiff.Float32)
		if err != nil {
			return nil, err
		}
		e.pred = &autodiff.Predictor{Eval: ev}
		if autodiff.PredictorShards(model) > 1 {
			e.threads = 1 // the shards run in parallel
		}
	}
	if model.MLP != nil {
		e.Spec = *model.MLP
	}
	return e, nil
}

// checkEnsembleData returns an error unless data holds N > 0 examples of
// D values and N labels in [0, Classes) (an evaluator loads a batch's
// labels with its images; data scored for its uncertainty alone, an
// out-of-distribution set, has labels of 0), and, for a CNN, images of
// the shape it takes (nn.ConvNet.CheckImages; data of unknown shape
// passes).
func checkEnsembleData(data *datasets.Dataset, model nn.Model) error {
	if data.Classes <= 0 {
		return fmt.Errorf("ensemble: data of %d classes: an ensemble scores a classifier's", data.Classes)
	}
	if err := data.Validate(); err != nil {
		return fmt.Errorf("ensemble: %w", err)
	}
	if model.Conv != nil {
		if err := model.Conv.CheckImages(data.Image); err != nil {
			return fmt.Errorf("ensemble: model %s: %w", model.Name, err)
		}
	}
	return nil
}

// Add adds one weight sample.
func (e *Ensemble) Add(theta []float64) error {
	return AddAll(theta, e)
}

// checkSample refuses a sample of another length than the model's
// parameters.
func (e *Ensemble) checkSample(n int) error {
	if p := e.Model.NumParams(); n != p {
		return fmt.Errorf("ensemble: sample of %d values, model %s has %d parameters (samples of another model?)", n, e.Model.Name, p)
	}
	return nil
}

// AddAll adds one weight sample to every ensemble of ens: distinct
// ensembles of one model on several data sets (eval's test set and the
// sets scored beside it), made by one ensemble's On. On a forward pool the images of every
// set go through the pool in one pass, with the weights loaded once per
// forward pass; otherwise each ensemble adds the sample in turn (on its
// own pool, if it has one). Each ensemble's probabilities are those Add
// gives it. An ensemble given twice is an error.
func AddAll(theta []float64, ens ...*Ensemble) error {
	return addAll(theta, nil, ens)
}

// addAll is AddAll with progress, when not nil, called during a pooled
// pass with the examples done so far (autodiff.ForwardPool.Progress).
func addAll(theta []float64, progress func(done int), ens []*Ensemble) error {
	if err := checkAll(ens, len(theta)); err != nil {
		return err
	}
	if pool := sharedPool(ens); pool != nil {
		pool.Progress = progress
		defer func() { pool.Progress = nil }()
		return addPooled(ens, func(sets []*datasets.Dataset, f func(set, i int, z []float64)) error {
			return pool.Each(theta, sets, f)
		})
	}
	for _, e := range ens {
		var err error
		if e.pool != nil { // pooled, but not with the others: a pass of its own
			err = addPooled([]*Ensemble{e}, func(sets []*datasets.Dataset, f func(set, i int, z []float64)) error {
				return e.pool.Each(theta, sets, f)
			})
		} else {
			err = e.addEach(func(f func(i int, z []float64)) error { return e.pred.Each(theta, e.Data, f) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkAll refuses a sample of n values that is not of every ensemble's
// model, and an ensemble given twice (its rows would be added to twice, by
// two of a pool's workers at once).
func checkAll(ens []*Ensemble, n int) error {
	for j, e := range ens {
		if err := e.checkSample(n); err != nil {
			return err
		}
		if slices.Contains(ens[:j], e) {
			return fmt.Errorf("ensemble: ensemble %d given again as %d: a sample is added to each ensemble once", slices.Index(ens, e), j)
		}
	}
	return nil
}

// sharedPool returns the forward pool of the ensembles if they share one,
// else nil.
func sharedPool(ens []*Ensemble) *autodiff.ForwardPool {
	if len(ens) == 0 || ens[0].pool == nil {
		return nil
	}
	for _, e := range ens[1:] {
		if e.pool != ens[0].pool {
			return nil
		}
	}
	return ens[0].pool
}

// addPooled adds to each ensemble of ens the sample whose logits on the
// ensembles' data sets each hands over, from the pool's workers at once
// (each example's row is written by one worker).
func addPooled(ens []*Ensemble, each func(sets []*datasets.Dataset, f func(set, i int, z []float64)) error) error {
	sets := make([]*datasets.Dataset, len(ens))
	for j, e := range ens {
		sets[j] = e.Data
	}
	if err := each(sets, func(set, i int, z []float64) { ens[set].accumulate(i, z) }); err != nil {
		return fmt.Errorf("ensemble: %w", err)
	}
	for _, e := range ens {
		e.Count++
	}
	return nil
}

// addEach adds the sample whose logits each hands over, example by
// example.
func (e *Ensemble) addEach(each func(f func(i int, z []float64)) error) error {
	defer autodiff.WithBLASThreads(e.threads)()
	if err := each(e.accumulate); err != nil {
		return err
	}
	e.Count++
	return nil
}

// accumulate adds example i's probabilities under one sample, from its
// logits z, to the sums (and writes them into Last, and its label's
// log-probability into LastLogLik).
func (e *Ensemble) accumulate(i int, z []float64) {
	k := e.Data.Classes
	lse := autodiff.LogSumExp(z)
	h := 0.0
	for c, v := range z {
		p := math.Exp(v - lse)
		e.Last[i*k+c] = p
		e.Sum[i*k+c] += p
		if p != 0 { // 0 log 0 = 0; a NaN (logits not a number) stays NaN
			h -= p * (v - lse)
		}
	}
	e.Ent[i] += h
	ll := z[e.Data.Labels[i]] - lse // every label in [0, k): checkEnsembleData
	e.LastLogLik[i] = ll
	if e.Count == 0 { // the first sample (Count counts those added)
		e.LogLik[i] = ll
	} else if a, b := math.Max(e.LogLik[i], ll), math.Min(e.LogLik[i], ll); !math.IsInf(a, -1) {
		e.LogLik[i] = a + math.Log1p(math.Exp(b-a))
	}
}

// forwardMACs returns the multiply-adds of one example's forward pass of
// the ensemble's model, or 0 if not known (a graph on Gorgonia's VM).
func (e *Ensemble) forwardMACs() int64 {
	if e.pool != nil {
		return e.pool.MACsPerExample()
	}
	if e.Model.MLP == nil {
		return 0
	}
	var n int64
	sizes := e.Model.MLP.Sizes
	for l := 0; l+1 < len(sizes); l++ {
		n += int64(sizes[l]) * int64(sizes[l+1])
	}
	return n
}

// Reset empties the ensemble.
func (e *Ensemble) Reset() {
	clear(e.Sum)
	clear(e.Ent)
	e.Count = 0
}

// Probs returns the ensemble's mean probabilities (a new slice).
func (e *Ensemble) Probs() []float64 {
	p := make([]float64, len(e.Sum))
	for i, v := range e.Sum {
		p[i] = v / float64(e.Count)
	}
	return p
}

// Metrics scores the ensemble. An example whose mean probability of its
// label is below Score's floor (probFloor: every sample's underflowed, or
// nearly) adds -log of it from the samples' log-probabilities (LogLik),
// not -log of the floor.
func (e *Ensemble) Metrics() Metrics {
	probs := e.Probs()
	m := score(probs, e.Data.Labels, e.Data.Classes) // fits: checkEnsembleData
	m.Samples = e.Count
	k, n := e.Data.Classes, float64(len(e.Data.Labels))
	for i, y := range e.Data.Labels {
		if probs[i*k+y] < probFloor {
			m.NLL += (math.Log(probFloor) + e.exampleNLL(i)) / n
		}
	}
	return m
}

// exampleNLL returns example i's -log of the mean over samples of its
// label's probability, from the samples' log-probabilities (LogLik).
func (e *Ensemble) exampleNLL(i int) float64 {
	return math.Log(float64(e.Count)) - e.LogLik[i]
}

// Uncertainty returns example i's predictive entropy H[mean_s p_s] and the
// mutual information between its label and the weights,
// H[mean_s p_s] - mean_s H[p_s] (the epistemic part); both NaN for a
// prediction that is not a number.
func (e *Ensemble) Uncertainty(i int) (entropy, mutualInfo float64) {
	k := e.Data.Classes
	p := make([]float64, k)
	for c := range p {
		p[c] = e.Sum[i*k+c] / float64(e.Count)
	}
	entropy = entropyOf(p)
	return entropy, math.Max(0, entropy-e.Ent[i]/float64(e.Count))
}
