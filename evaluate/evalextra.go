package evaluate

import (
	"fmt"
	"math"
	"slices"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Predictor names of the uncertainty tables (eval's JSON "predictor"). They
// differ from the metrics table's row labels ("ensemble (posterior)",
// "single sample"), which scripts/check_readme.sh matches.
const (
	PredEnsemble = "ensemble" // the pooled samples of the runs
	PredSingle   = "single"   // the first run's last sample alone
	PredBaseline = "baseline" // the pooled baseline runs
)

// Names of the out-of-distribution sets eval makes itself.
const (
	OODHeldOut  = "held-out classes" // test images of the classes a --classes run did not train on
	OODUniform  = "uniform noise"    // pixels uniform on [0, 1]
	OODGaussian = "gaussian noise"   // pixels N(mean, sd) of the test images, clipped to [0, 1]
	OODInverted = "inverted"         // 1 - x of each test image
)

// OODSet is a set of inputs scored as out-of-distribution against the test
// set. Its labels are not used.
type OODSet struct {
	Name string
	Data *datasets.Dataset
}

// OODResult is how well one uncertainty score of one predictor separates an
// out-of-distribution set from the test set (out-of-distribution positive).
// AUROC, AUPR and FPR95 are nil where the score is undefined: the mutual
// information of a single network.
type OODResult struct {
	Set       string   `json:"set"`
	Score     string   `json:"score"`     // one of ScoreNames
	Predictor string   `json:"predictor"` // PredEnsemble, PredSingle or PredBaseline
	AUROC     *float64 `json:"auroc"`
	AUPR      *float64 `json:"aupr"`
	// FPR95 is the fraction of test images flagged at the threshold that
	// flags 95% of the out-of-distribution set (FPRAtTPR; lower is better).
	FPR95 *float64 `json:"fpr95"`
}

// SelectiveResult is selective prediction on the test set by one score of
// one predictor: the area under its risk-coverage curve and the accuracy
// of the 90% and 95% most certain predictions (nil where the score is
// undefined).
type SelectiveResult struct {
	Score     string       `json:"score"`
	Predictor string       `json:"predictor"`
	AURC      *float64     `json:"aurc"`
	AccAt90   *float64     `json:"acc_at_90"`
	AccAt95   *float64     `json:"acc_at_95"`
	Curve     RiskCoverage `json:"-"` // thinned to at most RiskCoveragePoints points
}

// RiskCoveragePoints is how many points of each risk-coverage curve a
// Report keeps (for its plot).
const RiskCoveragePoints = 200

// builtinStream is the stream id of the built-in OOD sets (seeded by
// EvalOptions.Seed).
const builtinStream = 0xB17

// BuiltinOOD returns the far out-of-distribution sets made from the test
// images with a stream seeded by seed: uniform noise, Gaussian noise with
// the images' mean and standard deviation (over all pixels, clipped to
// [0, 1]), and the inverted images 1 - x; each as many images as test.
func BuiltinOOD(test *datasets.Dataset, seed uint64) []OODSet {
	rng := sampler.NewStream(seed, builtinStream).Rand
	mean, sd := pixelMoments(test.X)
	uni, gau, inv := blankLike(test), blankLike(test), blankLike(test)
	for i, v := range test.X {
		uni.X[i] = float32(rng.Float64())
		gau.X[i] = float32(math.Min(1, math.Max(0, mean+sd*rng.NormFloat64())))
		inv.X[i] = 1 - v
	}
	return []OODSet{{OODUniform, uni}, {OODGaussian, gau}, {OODInverted, inv}}
}

// pixelMoments returns the mean and standard deviation of all values of x.
func pixelMoments(x []float32) (mean, sd float64) {
	if len(x) == 0 {
		return 0, 0
	}
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (float64(v) - mean) * (float64(v) - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)))
}

// blankLike returns a data set of d's shape (its image dimensions too),
// classes and labels with zero features.
func blankLike(d *datasets.Dataset) *datasets.Dataset {
	return &datasets.Dataset{N: d.N, D: d.D, Classes: d.Classes, X: make([]float32, len(d.X)), Labels: append([]int(nil), d.Labels...),
		Image: slices.Clone(d.Image)}
}

// asOOD returns set's data ready to be scored by a model of classes
// outputs: of the test set's number of pixels, with zero labels (unused),
// and its image dimensions, which checkExtraImages compares with those a
// model takes.
func asOOD(set OODSet, d, classes int) (*datasets.Dataset, error) {
	x := set.Data
	if x == nil || x.N == 0 {
		return nil, fmt.Errorf("out-of-distribution set %s has no images", set.Name)
	}
	if x.D != d {
		return nil, fmt.Errorf("out-of-distribution set %s has images of %d pixels, the test images %d", set.Name, x.D, d)
	}
	if len(x.X) != x.N*x.D {
		return nil, fmt.Errorf("out-of-distribution set %s: %d images of %d pixels need %d values, have %d", set.Name, x.N, x.D, x.N*x.D, len(x.X))
	}
	return &datasets.Dataset{N: x.N, D: x.D, X: x.X, Classes: classes, Labels: make([]int, x.N), Image: x.Image}, nil
}

// checkExtraImages refuses, naming the set, a set scored beside the test
// set whose images model does not take: a CNN's images of another shape
// than its own (nn.ConvNet.CheckImages), even of as many pixels, as
// runspec.Config.ModelFits refuses the test images. A set's pixel count
// is checked against the test images' before (asOOD).
func checkExtraImages(model nn.Model, extras []*evalSet) error {
	if model.Conv == nil {
		return nil
	}
	for _, x := range extras {
		if err := model.Conv.CheckImages(x.data.Image); err != nil {
			kind := "out-of-distribution set"
			if x.shift != nil {
				kind = "shifted set"
			}
			return fmt.Errorf("%s %s: model %s: %w", kind, x.name, model.Name, err)
		}
	}
	return nil
}

// ptr returns a pointer to v, nil when v is NaN (JSON null).
func ptr(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// predictorScores is what the uncertainty tables need of one predictor:
// its probabilities and scores on the test set and its scores on each
// out-of-distribution set.
type predictorScores struct {
	Name  string
	Probs []float64 // on the test set
	// Ens, when not nil, is the ensemble Probs are the mean of: the NLL
	// of an example whose label's probability underflows comes from it
	// (Ensemble.Metrics).
	Ens    *Ensemble
	Test   UncertaintyScores
	Others []UncertaintyScores // per OOD set
}

// oodResults scores every set against the test set for every predictor
// and score, in the order set, predictor, score.
func oodResults(sets []string, preds []predictorScores) []OODResult {
	var out []OODResult
	for s, name := range sets {
		for _, p := range preds {
			for _, sc := range ScoreNames {
				in, o := p.Test.Get(sc), p.Others[s].Get(sc)
				r := OODResult{Set: name, Score: sc, Predictor: p.Name}
				if in != nil && o != nil {
					r.AUROC, r.AUPR, r.FPR95 = ptr(AUROC(in, o)), ptr(AUPR(in, o)), ptr(FPRAtTPR(in, o, 0.95))
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// selectiveResults computes selective prediction on test for every
// predictor and score.
func selectiveResults(labels []int, k int, preds []predictorScores) []SelectiveResult {
	var out []SelectiveResult
	for _, p := range preds {
		correct := make([]bool, len(labels))
		for i, y := range labels {
			correct[i] = autodiff.ArgMax(p.Probs[i*k:(i+1)*k]) == y
		}
		for _, sc := range ScoreNames {
			r := SelectiveResult{Score: sc, Predictor: p.Name}
			if u := p.Test.Get(sc); u != nil {
				rc := NewRiskCoverage(u, correct)
				r.AURC, r.AccAt90, r.AccAt95 = ptr(rc.AURC()), ptr(rc.AccuracyAt(0.9)), ptr(rc.AccuracyAt(0.95))
				r.Curve = rc.Thin(RiskCoveragePoints)
			}
			out = append(out, r)
		}
	}
	return out
}
