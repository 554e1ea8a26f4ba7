package refcheck

import (
	"fmt"
	"sort"

	"github.com/ptsghmc/ptsghmc/nn"
)

// Posterior is one posteriordb posterior this package checks samplers on:
// its data, its model as a Regression and the names of the sampled
// coordinates in Stan's order (the last is log sigma).
type Posterior struct {
	Name  string // posteriordb's, e.g. "earnings-earn_height"
	Data  string // posteriordb's data name, e.g. "earnings"
	Stan  string // posteriordb's model name (testdata/posteriordb/stan/NAME.stan)
	Coefs []string
	Model Regression
	// design turns the data file into the regression's design.
	design func(rawData) (Design, error)
}

// Theta returns the names of the sampled coordinates: the coefficients'
// Stan names, then "log_sigma".
func (p Posterior) Theta() []string { return append(append([]string(nil), p.Coefs...), "log_sigma") }

// Posteriors are the posteriors of the harness, by name.
var Posteriors = map[string]Posterior{
	"earnings-earn_height": {
		Name: "earnings-earn_height", Data: "earnings", Stan: "earn_height",
		Coefs: []string{"beta[1]", "beta[2]"},
		Model: Regression{Inputs: 1, InterceptFirst: true},
		design: func(d rawData) (Design, error) {
			return simple(d, "earn", "height")
		},
	},
	"kidiq-kidscore_momiq": {
		Name: "kidiq-kidscore_momiq", Data: "kidiq", Stan: "kidscore_momiq",
		Coefs: []string{"beta[1]", "beta[2]"},
		Model: Regression{Inputs: 1, InterceptFirst: true, Sigma: ScalePrior{Kind: ScaleHalfCauchy, Scale: 2.5}},
		design: func(d rawData) (Design, error) {
			return simple(d, "kid_score", "mom_iq")
		},
	},
	"mesquite-logmesquite": {
		Name: "mesquite-logmesquite", Data: "mesquite", Stan: "logmesquite",
		Coefs:  []string{"beta[1]", "beta[2]", "beta[3]", "beta[4]", "beta[5]", "beta[6]", "beta[7]"},
		Model:  Regression{Inputs: 6, InterceptFirst: true},
		design: mesquite,
	},
	"sblrc-blr": {
		Name: "sblrc-blr", Data: "sblrc", Stan: "blr",
		Coefs: []string{"beta[1]", "beta[2]", "beta[3]", "beta[4]", "beta[5]"},
		Model: Regression{Inputs: 5, NoIntercept: true, SlopePrior: nn.Prior{Precision: 0.01},
			Sigma: ScalePrior{Kind: ScaleHalfNormal, Scale: 10}},
		design: sblr,
	},
	"diamonds-diamonds": {
		Name: "diamonds-diamonds", Data: "diamonds", Stan: "diamonds",
		Coefs: diamondsCoefs(),
		Model: Regression{Inputs: 24, SlopePrior: nn.Prior{Precision: 1},
			InterceptPrior: StudentT{DF: 3, Loc: 8, Scale: 10},
			Sigma:          ScalePrior{Kind: ScaleHalfStudentT, DF: 3, Scale: 10}},
		design: diamonds,
	},
}

// PosteriorNames returns the names of Posteriors, sorted.
func PosteriorNames() []string {
	var out []string
	for n := range Posteriors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Load reads the posterior's data from dir (DataDir in this package's
// tests) and returns its design (float64, as in the data file) and its
// model (Regression.Model, with N set).
func (p Posterior) Load(dir string) (Design, nn.Model, error) {
	raw, err := loadData(dir, p.Data)
	if err != nil {
		return Design{}, nn.Model{}, err
	}
	d, err := p.design(raw)
	if err != nil {
		return Design{}, nn.Model{}, fmt.Errorf("%s: %s: %w", p.Name, dataFile(dir, p.Data), err)
	}
	if len(d.Y) == 0 {
		return Design{}, nn.Model{}, fmt.Errorf("%s: %s: no examples", p.Name, dataFile(dir, p.Data))
	}
	r := p.Model
	r.Name, r.N = p.Name, len(d.Y)
	if r.Inputs != len(d.X[0]) {
		return Design{}, nn.Model{}, fmt.Errorf("%s: design has %d predictors, model %d", p.Name, len(d.X[0]), r.Inputs)
	}
	m, err := r.Model()
	if err != nil {
		return Design{}, nn.Model{}, err
	}
	if m.NumParams() != len(p.Theta()) {
		return Design{}, nn.Model{}, fmt.Errorf("%s: model has %d parameters, expected %d (%v)", p.Name, m.NumParams(), len(p.Theta()), p.Theta())
	}
	return d, m, nil
}

// Regression returns the posterior's model with N set from its design.
func (p Posterior) Regression(d Design) Regression {
	r := p.Model
	r.Name, r.N = p.Name, len(d.Y)
	return r
}

// simple is the design of an ARM model y ~ normal(beta[1] + beta[2] x, sigma).
func simple(d rawData, yKey, xKey string) (Design, error) {
	n, err := d.int("N", 1)
	if err != nil {
		return Design{}, err
	}
	y, err := d.vector(yKey, n)
	if err != nil {
		return Design{}, err
	}
	x, err := d.vector(xKey, n)
	if err != nil {
		return Design{}, err
	}
	return columns(y, x), nil
}

// mesquite is logmesquite.stan's design: log weight on the logs of diam1,
// diam2, canopy_height, total_height and density, and group.
func mesquite(d rawData) (Design, error) {
	n, err := d.int("N", 1)
	if err != nil {
		return Design{}, err
	}
	var cols [][]float64
	for _, key := range []string{"weight", "diam1", "diam2", "canopy_height", "total_height", "density"} {
		v, err := d.vector(key, n)
		if err != nil {
			return Design{}, err
		}
		lv, err := logOf(key, v)
		if err != nil {
			return Design{}, err
		}
		cols = append(cols, lv)
	}
	group, err := d.vector("group", n)
	if err != nil {
		return Design{}, err
	}
	return columns(cols[0], append(cols[1:], group)...), nil
}

// diamonds is diamonds.stan's (brms's) design: X's columns after the
// first (the intercept's), each centred on its mean (Xc).
func diamonds(d rawData) (Design, error) {
	n, err := d.int("N", 1)
	if err != nil {
		return Design{}, err
	}
	k, err := d.int("K", 2) // X's first column is the intercept's
	if err != nil {
		return Design{}, err
	}
	y, err := d.vector("Y", n)
	if err != nil {
		return Design{}, err
	}
	x, err := d.matrix("X", n, k)
	if err != nil {
		return Design{}, err
	}
	cols := make([][]float64, k-1)
	for j := range cols {
		c := make([]float64, n)
		mean := 0.0
		for i := range c {
			c[i] = x[i][j+1]
			mean += c[i]
		}
		mean /= float64(n)
		for i := range c {
			c[i] -= mean
		}
		cols[j] = c
	}
	return columns(y, cols...), nil
}

// sblr is blr.stan's design: y on the N x D matrix X, no intercept.
func sblr(d rawData) (Design, error) {
	n, err := d.int("N", 1)
	if err != nil {
		return Design{}, err
	}
	k, err := d.int("D", 1)
	if err != nil {
		return Design{}, err
	}
	y, err := d.vector("y", n)
	if err != nil {
		return Design{}, err
	}
	x, err := d.matrix("X", n, k)
	if err != nil {
		return Design{}, err
	}
	return Design{X: x, Y: y}, nil
}

// diamondsCoefs returns b[1] .. b[24], Intercept.
func diamondsCoefs() []string {
	out := make([]string, 0, 25)
	for i := 1; i <= 24; i++ {
		out = append(out, fmt.Sprintf("b[%d]", i))
	}
	return append(out, "Intercept")
}
