package refcheck

import (
	"crypto/sha1"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
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
