package export

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"codeberg.org/sbinet/npyio/npz"
)

// TestExportStaging: an export leaves alone the user's files named after
// its output with .tmp (an npz never truncates one, a store never removes
// a directory of that name), writes a store given with a trailing slash,
// gets the permissions os.Create and os.Mkdir give, leaves no temporary
// directory behind on success or failure, and two concurrent exports to
// one path both succeed with a readable archive.
func TestExportStaging(t *testing.T) {
	run, _ := trainRun(t, 1, 160)
	out := t.TempDir()
	mine := []byte("the user's file\n")
	if err := os.WriteFile(filepath.Join(out, "p.npz.tmp"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, "p.zarr.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "p.zarr.tmp", "keep"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NPZ(filepath.Join(out, "p.npz"), []string{run}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Zarr(filepath.Join(out, "p.zarr"), []string{run}, nil, ZarrOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Zarr(filepath.Join(out, "q.zarr")+"/", []string{run}, nil, ZarrOptions{}); err != nil {
		t.Fatalf("a store given with a trailing slash: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "q.zarr", ".zmetadata")); err != nil {
		t.Fatalf("the store given with a trailing slash: %v", err)
	}
	for _, name := range []string{"p.npz.tmp", filepath.Join("p.zarr.tmp", "keep")} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != string(mine) {
			t.Errorf("the user's %s: %q, %v", name, b, err)
		}
	}

	// the modes a plain os.Create and os.Mkdir give under the umask
	probeFile, err := os.Create(filepath.Join(t.TempDir(), "probe"))
	if err != nil {
		t.Fatal(err)
	}
	probeFile.Close()
	probeDir := filepath.Join(t.TempDir(), "probe")
	if err := os.Mkdir(probeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, probe := range map[string]string{"p.npz": probeFile.Name(), "p.zarr": probeDir} {
		got, err1 := os.Stat(filepath.Join(out, name))
		want, err2 := os.Stat(probe)
		if err1 != nil || err2 != nil || got.Mode() != want.Mode() {
			t.Errorf("%s has mode %v (%v), want %v", name, got.Mode(), err1, want.Mode())
		}
	}

	// failures: a directory in the way of the archive, a missing directory
	if err := os.MkdirAll(filepath.Join(out, "d.npz", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := NPZ(filepath.Join(out, "d.npz"), []string{run}, nil); err == nil {
		t.Error("an archive exported over a directory")
	}
	if _, err := NPZ(filepath.Join(out, "no", "p.npz"), []string{run}, nil); err == nil || !strings.Contains(err.Error(), filepath.Join(out, "no", "p.npz")) {
		t.Errorf("an archive in a missing directory: %v", err)
	}

	// concurrent exports to one path
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = NPZ(filepath.Join(out, "c.npz"), []string{run}, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent export %d: %v", i, err)
		}
	}
	r, err := npz.Open(filepath.Join(out, "c.npz"))
	if err != nil {
		t.Fatalf("the archive of concurrent exports: %v", err)
	}
	r.Close()

	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"c.npz", "d.npz", "p.npz", "p.npz.tmp", "p.zarr", "p.zarr.tmp", "q.zarr"}; !slices.Equal(names, want) {
		t.Errorf("the output directory holds %v, want %v (no temporary directory left)", names, want)
	}
}
