package refcheck

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/ptsghmc/ptsghmc/diagnose"
	"gonum.org/v1/gonum/mat"
)

// Reference summarises a posteriordb reference posterior (Stan's draws) in
// the coordinates the harness samples, theta = (coefficients, log sigma):
// means, sds, the covariance and its eigen-decomposition, and the Monte
// Carlo standard errors of the means (sd / sqrt(bulk ESS)).
type Reference struct {
	Posterior string    `json:"posterior"`
	Source    Source    `json:"source"`
	Chains    int       `json:"chains"`
	Draws     int       `json:"draws"` // in all chains
	Theta     []string  `json:"theta"`
	Mean      []float64 `json:"mean"`
	SD        []float64 `json:"sd"`
	ESS       []float64 `json:"ess"` // bulk ESS of each coordinate over the chains
	// Sigma is sigma's own mean and sd (Stan's parameter).
	SigmaMean float64 `json:"sigma_mean"`
	SigmaSD   float64 `json:"sigma_sd"`
	// Cov is the covariance of theta; Eigenvalues are its eigenvalues,
	// largest first, and Eigenvectors[k] the unit eigenvector of
	// Eigenvalues[k] (sign fixed so that its largest component is
	// positive).
	Cov          [][]float64 `json:"cov"`
	Eigenvalues  []float64   `json:"eigenvalues"`
	Eigenvectors [][]float64 `json:"eigenvectors"`
}

// Source names where a reference's draws came from.
type Source struct {
	Repository string `json:"repository"`
	Commit     string `json:"commit"`
	Path       string `json:"path"`
	Blob       string `json:"blob"` // git blob id of the file at that commit
}

// Summarize returns the reference summary of Stan's draws, one map per
// chain from parameter name to draws, in the coordinates names (Stan's
// names; "log_sigma" is the log of Stan's "sigma").
func Summarize(posterior string, chains []map[string][]float64, names []string) (Reference, error) {
	if len(chains) == 0 {
		return Reference{}, fmt.Errorf("reference %s: no chains", posterior)
	}
	d := len(names)
	// per coordinate, per chain, the draws
	traces := make([][][]float64, d)
	var sigma []float64
	n := -1
	for c, ch := range chains {
		sig, ok := ch["sigma"]
		if !ok {
			return Reference{}, fmt.Errorf("reference %s: chain %d has no sigma", posterior, c+1)
		}
		if n >= 0 && len(sig) != n {
			return Reference{}, fmt.Errorf("reference %s: chain %d has %d draws, chain 1 %d", posterior, c+1, len(sig), n)
		}
		n = len(sig)
		sigma = append(sigma, sig...)
		for j, name := range names {
			var tr []float64
			if name == "log_sigma" {
				for _, s := range sig {
					if !(s > 0) {
						return Reference{}, fmt.Errorf("reference %s: chain %d: sigma draw %v", posterior, c+1, s)
					}
					tr = append(tr, math.Log(s))
				}
			} else {
				v, ok := ch[name]
				if !ok {
					return Reference{}, fmt.Errorf("reference %s: chain %d has no %s", posterior, c+1, name)
				}
				if len(v) != n {
					return Reference{}, fmt.Errorf("reference %s: chain %d: %s has %d draws, sigma %d", posterior, c+1, name, len(v), n)
				}
				tr = append([]float64(nil), v...)
			}
			traces[j] = append(traces[j], tr)
		}
	}
	ref := Reference{Posterior: posterior, Chains: len(chains), Draws: n * len(chains), Theta: append([]string(nil), names...)}
	pooled := make([][]float64, d)
	for j := range names {
		for _, tr := range traces[j] {
			pooled[j] = append(pooled[j], tr...)
		}
		ref.ESS = append(ref.ESS, diagnose.BulkESS(traces[j]))
	}
	ref.Mean, ref.Cov = meanCov(pooled)
	for j := range names {
		ref.SD = append(ref.SD, math.Sqrt(ref.Cov[j][j]))
	}
	sm, sc := meanCov([][]float64{sigma})
	ref.SigmaMean, ref.SigmaSD = sm[0], math.Sqrt(sc[0][0])
	var err error
	ref.Eigenvalues, ref.Eigenvectors, err = eigen(ref.Cov)
	if err != nil {
		return Reference{}, fmt.Errorf("reference %s: %w", posterior, err)
	}
	return ref, nil
}

// meanCov returns the means and the covariance (divisor n-1) of the
// coordinates cols[j], each of n draws.
func meanCov(cols [][]float64) ([]float64, [][]float64) {
	d, n := len(cols), len(cols[0])
	mean := make([]float64, d)
	for j, c := range cols {
		for _, v := range c {
			mean[j] += v
		}
		mean[j] /= float64(n)
	}
	cov := make([][]float64, d)
	for a := range cov {
		cov[a] = make([]float64, d)
	}
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			s := 0.0
			for i := 0; i < n; i++ {
				s += (cols[a][i] - mean[a]) * (cols[b][i] - mean[b])
			}
			cov[a][b] = s / float64(n-1)
			cov[b][a] = cov[a][b]
		}
	}
	return mean, cov
}

// eigen returns the eigenvalues of the symmetric matrix cov, largest
// first, and their unit eigenvectors, each signed so that its largest
// component (in absolute value) is positive.
func eigen(cov [][]float64) ([]float64, [][]float64, error) {
	d := len(cov)
	s := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			s.SetSym(a, b, cov[a][b])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return nil, nil, fmt.Errorf("eigen-decomposition of the %dx%d covariance failed", d, d)
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return vals[order[i]] > vals[order[j]] })
	outVals := make([]float64, d)
	outVecs := make([][]float64, d)
	for k, i := range order {
		outVals[k] = vals[i]
		v := make([]float64, d)
		big := 0
		for a := 0; a < d; a++ {
			v[a] = vecs.At(a, i)
			if math.Abs(v[a]) > math.Abs(v[big]) {
				big = a
			}
		}
		if v[big] < 0 {
			for a := range v {
				v[a] = -v[a]
			}
		}
		outVecs[k] = v
	}
	return outVals, outVecs, nil
}

// ReferenceFile returns the path of posterior's reference summary under dir.
func ReferenceFile(dir, posterior string) string {
	return filepath.Join(dir, "reference", posterior+".json")
}

// LoadReference reads posterior's reference summary from dir.
func LoadReference(dir, posterior string) (Reference, error) {
	path := ReferenceFile(dir, posterior)
	b, err := os.ReadFile(path)
	if err != nil {
		return Reference{}, fmt.Errorf("reference %s: %w", posterior, err)
	}
	var r Reference
	if err := json.Unmarshal(b, &r); err != nil {
		return Reference{}, fmt.Errorf("reference %s: %s: %w", posterior, path, err)
	}
	if err := r.validate(); err != nil {
		return Reference{}, fmt.Errorf("reference %s: %s: %w", posterior, path, err)
	}
	return r, nil
}

// validate checks that the summary has every field the harness reads, of
// the length of Theta (d): Mean, SD, ESS and Eigenvalues d numbers, Cov
// and Eigenvectors d rows of d; every number finite, and every sd, ESS
// and eigenvalue positive (a covariance the harness can factorise).
func (r Reference) validate() error {
	d := len(r.Theta)
	if d == 0 {
		return fmt.Errorf("theta: no coordinates")
	}
	vectors := []struct {
		field    string
		v        []float64
		positive bool
	}{
		{"mean", r.Mean, false},
		{"sd", r.SD, true},
		{"ess", r.ESS, true},
		{"eigenvalues", r.Eigenvalues, true},
	}
	for _, f := range vectors {
		if len(f.v) != d {
			return fmt.Errorf("%s: %d values, expected d = %d (the theta's)", f.field, len(f.v), d)
		}
		for i, x := range f.v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s: value %d is %v, expected a finite number", f.field, i+1, x)
			}
			if f.positive && !(x > 0) {
				return fmt.Errorf("%s: value %d is %v, expected a positive number", f.field, i+1, x)
			}
		}
	}
	for _, f := range []struct {
		field string
		m     [][]float64
	}{{"cov", r.Cov}, {"eigenvectors", r.Eigenvectors}} {
		if len(f.m) != d {
			return fmt.Errorf("%s: %d rows, expected d = %d (the theta's)", f.field, len(f.m), d)
		}
		for i, row := range f.m {
			if len(row) != d {
				return fmt.Errorf("%s: row %d has length %d, expected d = %d", f.field, i+1, len(row), d)
			}
			for j, x := range row {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return fmt.Errorf("%s: row %d, value %d is %v, expected a finite number", f.field, i+1, j+1, x)
				}
			}
		}
	}
	return nil
}

// Write writes the summary to its file under dir, indented.
func (r Reference) Write(dir string) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	path := ReferenceFile(dir, r.Posterior)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadDraws reads a posteriordb draws file (a zip of a JSON array of
// chains, each an object from parameter name to draws).
func ReadDraws(path string) ([]map[string][]float64, error) {
	var chains []map[string][]float64
	if err := readZippedJSON(path, &chains); err != nil {
		return nil, fmt.Errorf("draws: %w", err)
	}
	return chains, nil
}

// Correlation returns the reference's correlation matrix and its
// eigenvalues, largest first: what is left of the posterior's
// conditioning once each coordinate is scaled by its sd (the best a
// diagonal mass can do; their ratio is the condition number a diagonal
// mass leaves).
func (r Reference) Correlation() ([][]float64, []float64, error) {
	d := len(r.Cov)
	corr := make([][]float64, d)
	for a := range corr {
		corr[a] = make([]float64, d)
		for b := range corr[a] {
			corr[a][b] = r.Cov[a][b] / math.Sqrt(r.Cov[a][a]*r.Cov[b][b])
		}
	}
	vals, _, err := eigen(corr)
	if err != nil {
		return nil, nil, fmt.Errorf("reference %s: correlation: %w", r.Posterior, err)
	}
	return corr, vals, nil
}

// covMatrix returns the reference covariance as a symmetric matrix.
func (r Reference) covMatrix() *mat.SymDense {
	d := len(r.Cov)
	cov := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			cov.SetSym(a, b, r.Cov[a][b])
		}
	}
	return cov
}
