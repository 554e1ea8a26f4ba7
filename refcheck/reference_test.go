package refcheck

import (
	"crypto/sha1"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	drawsDir    = flag.String("draws", "", "directory of posteriordb's reference draws (reference_posteriors/draws/draws): TestWriteReferences rewrites the summaries from them")
	drawsCommit = flag.String("draws-commit", "", "the posteriordb commit the draws come from (recorded in the summaries)")
)

// gitBlob returns git's blob id of the file at path.
func gitBlob(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// TestWriteReferences writes testdata/posteriordb/reference/*.json from
// posteriordb's draws (skipped without -draws):
//
//	go test ./refcheck -run TestWriteReferences -draws DIR -draws-commit SHA
func TestWriteReferences(t *testing.T) {
	if *drawsDir == "" {
		t.Skip("no -draws directory")
	}
	for _, name := range PosteriorNames() {
		p := Posteriors[name]
		path := filepath.Join(*drawsDir, name+".json.zip")
		chains, err := ReadDraws(path)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := Summarize(name, chains, p.Theta())
		if err != nil {
			t.Fatal(err)
		}
		blob, err := gitBlob(path)
		if err != nil {
			t.Fatal(err)
		}
		ref.Source = Source{Repository: "https://github.com/stan-dev/posteriordb", Commit: *drawsCommit,
			Path: "posterior_database/reference_posteriors/draws/draws/" + name + ".json.zip", Blob: blob}
		if err := ref.Write(DataDir); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d chains, %d draws, blob %s; eigenvalues %.3g", name, ref.Chains, ref.Draws, blob, ref.Eigenvalues)
	}
}

// TestDataBlobs checks that the committed data files are posteriordb's,
// byte for byte (the blob ids README.md lists).
func TestDataBlobs(t *testing.T) {
	want := map[string]string{
		"earnings": "543068f894138c69105db54ffde1fc0c8339782d",
		"kidiq":    "7f7b1977999ee2641772f1b3ac123564e2891897",
		"mesquite": "598b8e48a9a3f005afd30bbc1a8eae324294823f",
		"diamonds": "68519c7963c0e441c36de9d8be279dbaada44fbb",
		"sblrc":    "8092f509f038d17e5de145617560f57ced0ceadc",
	}
	for name, blob := range want {
		got, err := gitBlob(filepath.Join(DataDir, "data", name+".json.zip"))
		if err != nil {
			t.Fatal(err)
		}
		if got != blob {
			t.Errorf("data %s: blob %s, posteriordb's is %s", name, got, blob)
		}
	}
}

// TestReferenceMatchesModel checks the data and the model as this package
// transcribes them against Stan's reference: the exact posterior of the
// Regression on the (float32-rounded) design, by quadrature, has every
// mean within 5 Monte Carlo standard errors of the reference's (and 0.05
// sd), every sd and every eigen-direction's sd within 4% (the reference's
// 10,000 draws estimate an sd to about 0.7%). A wrong design column, prior
// or Jacobian moves them further (dropping the Jacobian of log sigma
// shifts log sigma's mean by 1/N in its own units, which is a fraction of
// an sd; TestModelPotential checks the Jacobian against the graph).
func TestReferenceMatchesModel(t *testing.T) {
	for _, name := range PosteriorNames() {
		t.Run(name, func(t *testing.T) {
			p := Posteriors[name]
			d, _, err := p.Load(DataDir)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := LoadReference(DataDir, name)
			if err != nil {
				t.Fatal(err)
			}
			mean, cov, err := Exact(p.Regression(d), d.Float32(), 2001)
			if err != nil {
				t.Fatal(err)
			}
			for j, th := range ref.Theta {
				sd := math.Sqrt(cov[j][j])
				mcse := ref.SD[j] / math.Sqrt(ref.ESS[j])
				dev := (mean[j] - ref.Mean[j]) / mcse
				t.Logf("%-10s exact %12.6g sd %10.4g | Stan %12.6g sd %10.4g (mean %+.2f MCSE, sd ratio %.4f)", th, mean[j], sd, ref.Mean[j], ref.SD[j], dev, sd/ref.SD[j])
				if math.Abs(dev) > 5 && math.Abs(mean[j]-ref.Mean[j]) > 0.05*ref.SD[j] {
					t.Errorf("%s: exact mean %.6g, Stan's %.6g: %.1f Monte Carlo standard errors apart", th, mean[j], ref.Mean[j], dev)
				}
				if math.Abs(sd/ref.SD[j]-1) > 0.04 {
					t.Errorf("%s: exact sd %.4g, Stan's %.4g", th, sd, ref.SD[j])
				}
			}
			for k, v := range ref.Eigenvectors {
				q := 0.0
				for a := range v {
					for b := range v {
						q += v[a] * cov[a][b] * v[b]
					}
				}
				if r := math.Sqrt(q / ref.Eigenvalues[k]); math.Abs(r-1) > 0.04 {
					t.Errorf("eigen-direction %d: exact sd / Stan's %.4f", k+1, r)
				}
			}
		})
	}
}

// TestLoadReferenceValidation checks that LoadReference refuses a summary
// the harness cannot use (a row of the covariance or an eigenvector of
// the wrong length panicked in covMatrix and compare; a zero sd or
// eigenvalue divides by zero), naming the file, the field, the row, its
// length and d; and that validate refuses numbers that are not finite
// (which JSON cannot carry).
func TestLoadReferenceValidation(t *testing.T) {
	const name = "earnings-earn_height"
	load := func() Reference {
		r, err := LoadReference(DataDir, name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *Reference)
		want   []string
	}{
		{"valid", func(r *Reference) {}, nil},
		{"eigenvector of 4 numbers", func(r *Reference) { r.Eigenvectors[1] = append(r.Eigenvectors[1], 0) }, []string{"eigenvectors", "row 2", "length 4", "d = 3"}},
		{"short covariance row", func(r *Reference) { r.Cov[2] = r.Cov[2][:2] }, []string{"cov", "row 3", "length 2", "d = 3"}},
		{"covariance rows missing", func(r *Reference) { r.Cov = r.Cov[:2] }, []string{"cov", "2 rows", "d = 3"}},
		{"ess missing", func(r *Reference) { r.ESS = nil }, []string{"ess", "0 values", "d = 3"}},
		{"short mean", func(r *Reference) { r.Mean = r.Mean[:2] }, []string{"mean", "2 values", "d = 3"}},
		{"zero sd", func(r *Reference) { r.SD[1] = 0 }, []string{"sd", "value 2", "positive"}},
		{"negative eigenvalue", func(r *Reference) { r.Eigenvalues[2] = -1e-4 }, []string{"eigenvalues", "value 3", "positive"}},
		{"no coordinates", func(r *Reference) { *r = Reference{Posterior: r.Posterior} }, []string{"theta"}},
	} {
		r := load()
		tc.mutate(&r)
		dir := t.TempDir()
		if err := r.Write(dir); err != nil {
			t.Fatal(err)
		}
		_, err := LoadReference(dir, name)
		checkLoadError(t, tc.name, err, tc.want, ReferenceFile(dir, name))
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *Reference)
		want   string
	}{
		{"NaN sd", func(r *Reference) { r.SD[0] = math.NaN() }, "sd: value 1 is NaN"},
		{"infinite eigenvalue", func(r *Reference) { r.Eigenvalues[0] = math.Inf(1) }, "eigenvalues: value 1 is +Inf"},
		{"NaN in an eigenvector", func(r *Reference) { r.Eigenvectors[2][1] = math.NaN() }, "eigenvectors: row 3, value 2 is NaN"},
	} {
		r := load()
		tc.mutate(&r)
		if err := r.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
