package refcheck

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestParseGridSelect checks the user grid's selections: the whole grid's
// size, a subset's, and that bad fields and values are errors.
func TestParseGridSelect(t *testing.T) {
	ref, err := LoadReference(DataDir, "sblrc-blr")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sel     string
		n       int
		wantErr bool
	}{
		// sgnht, sghmc: 5 masses x 2 nc x (2 minibatches x 3 steps + full x 2); sgld: 5 x 8
		{"all", 2*5*2*8 + 5*8, false},
		{"", 2*5*2*8 + 5*8, false},
		{"kernel=sgnht;precond=rmsprop;scale=widest,stiffest;nc=off;batch=20,100;step=default,largest", 2 * 4, false},
		{"kernel=sgld;nc=on", 0, false},
		{"kernel=hmc", 0, true},
		{"batch=50", 0, true},
		{"step=smallest", 0, true},
		{"color=red", 0, true},
		{"kernel", 0, true},
	} {
		sel, err := ParseGridSelect(tc.sel)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error %v, want error %v", tc.sel, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		cases, err := UserGrid(ref, 100, 1000, sel)
		if err != nil {
			t.Fatal(err)
		}
		if len(cases) != tc.n {
			t.Errorf("%q: %d cases, want %d", tc.sel, len(cases), tc.n)
		}
		for _, c := range cases {
			if !(c.LR > 0) || c.Steps != 1000 || c.Kernel == "sgld" && c.NoiseCorrection || c.Precond == adapt.PrecondNone && c.MassScale != adapt.MassScaleWidest {
				t.Errorf("%q: bad case %+v", tc.sel, c)
			}
		}
	}
}

// TestClassify checks the aim's classification of a row by its verdict
// and errors.
func TestClassify(t *testing.T) {
	okH := health.Health{Windows: 1}
	sgldH := health.Health{Windows: 1, After: 1, Langevin: &health.LangevinWatch{}} // graded by its (empty: ok) watch
	failH := health.Health{Windows: 1, After: 1, Worst: health.HealthFail, WorstWindow: health.HealthFigures{Status: health.HealthFail}}
	warnH := health.Health{Windows: 1, After: 1, Worst: health.HealthWarn, WorstWindow: health.HealthFigures{Status: health.HealthWarn}}
	for _, tc := range []struct {
		name   string
		hl     health.Health
		eig    float64
		mean   float64
		ess    float64
		kernel string
		want   Classification
	}{
		{"ok within 5%", okH, 1.04, 0.05, 1000, "sgnht", ClassRight},
		{"ok 12% off", okH, 1.12, 0.05, 1000, "sgnht", ClassFalseOK},
		{"ok, mean 0.3 sd off", okH, 1.02, 0.3, 1000, "sgnht", ClassFalseOK},
		{"warn 12% off", warnH, 0.88, 0, 1000, "sgnht", ClassRight},
		{"warn 20% off", warnH, 1.2, 0, 1000, "sgnht", ClassMissedFail},
		{"fail 20% off", failH, 1.2, 0, 1000, "sgnht", ClassRight},
		{"fail within 5%", failH, 1.03, 0, 1000, "sgnht", ClassFalseFail},
		{"fail within 5%, unmixed", failH, 1.03, 0, 20, "sgnht", ClassFalseFailUnsure},
		{"sgld, ok 50% off", sgldH, 1.5, 0, 1000, "sgld", ClassFalseOK},
		{"sgld, ok within 5%", sgldH, 1.03, 0, 1000, "sgld", ClassRight},
		{"no health window", health.Health{}, 1.5, 0, 1000, "sgnht", ClassUnwatched},
		{"diverged", okH, 1, 0, 1000, "sgnht", ClassDiverged},
		// figures that are not finite are the worst, not within 5%
		{"ok, sd NaN", okH, math.NaN(), 0, 1000, "sgnht", ClassFalseOK},
		{"ok, sd +Inf", okH, math.Inf(1), 0, 1000, "sgnht", ClassFalseOK},
		{"ok, mean NaN", okH, 1.02, math.NaN(), 1000, "sgnht", ClassFalseOK},
		{"warn, sd NaN", warnH, math.NaN(), 0, 1000, "sgnht", ClassMissedFail},
		{"fail within 5%, ESS NaN", failH, 1.03, 0, math.NaN(), "sgnht", ClassFalseFailUnsure},
	} {
		r := Result{Case: Case{Kernel: tc.kernel}, Health: tc.hl, EigenSD: []float64{1, tc.eig}, MarginalSD: []float64{1}, MeanErr: []float64{tc.mean}, ESS: tc.ess}
		if tc.name == "diverged" {
			r.Err = sampler.ErrDiverged
		}
		if got := r.Classify(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestWorstErrorsNotFinite checks that a ratio or mean error that is NaN
// or infinite is the worst error, +Inf, whichever else the row has
// (math.Max with a NaN is NaN, which no threshold compares above).
func TestWorstErrorsNotFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name                        string
		eig, marg, mean             []float64
		wantEig, wantMarg, wantMean float64
	}{
		{"finite", []float64{1.1, 0.95}, []float64{1.02}, []float64{-0.3, 0.1}, 0.1, 0.02, 0.3},
		{"NaN eigen-direction sd", []float64{1.1, nan}, []float64{1.02}, []float64{0.1}, inf, 0.02, 0.1},
		{"NaN first", []float64{nan, 1.1}, []float64{1.02}, []float64{0.1}, inf, 0.02, 0.1},
		{"-Inf marginal sd", []float64{1}, []float64{math.Inf(-1)}, []float64{0.1}, 0, inf, 0.1},
		{"NaN mean error", []float64{1}, []float64{1}, []float64{0.1, nan}, 0, 0, inf},
	} {
		r := Result{EigenSD: tc.eig, MarginalSD: tc.marg, MeanErr: tc.mean}
		eig, marg, mean := r.WorstErrors()
		same := func(got, want float64) bool { return got == want || math.Abs(got-want) <= 1e-12 } // false for NaN
		if !same(eig, tc.wantEig) || !same(marg, tc.wantMarg) || !same(mean, tc.wantMean) {
			t.Errorf("%s: worst errors %v %v %v, want %v %v %v", tc.name, eig, marg, mean, tc.wantEig, tc.wantMarg, tc.wantMean)
		}
	}
}
