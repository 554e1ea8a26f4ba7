package datasets

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIDXRoundTrip(t *testing.T) {
	for _, typ := range []byte{IDXUint8, IDXInt8, IDXInt16, IDXInt32, IDXFloat32, IDXFloat64} {
		for _, gz := range []bool{false, true} {
			a := &IDX{Type: typ, Dims: []int{3, 2, 2}, Data: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
			if typ != IDXUint8 {
				a.Data[5] = -5
			}
			path := filepath.Join(t.TempDir(), "a.idx")
			if err := WriteIDXFile(path, a, gz); err != nil {
				t.Fatal(err)
			}
			b, err := ReadIDXFile(path)
			if err != nil {
				t.Fatalf("type %x gz %v: %v", typ, gz, err)
			}
			if b.Type != typ || len(b.Dims) != 3 || b.Dims[0] != 3 || b.Dims[2] != 2 {
				t.Fatalf("type %x: header %x %v", typ, b.Type, b.Dims)
			}
			for i := range a.Data {
				if a.Data[i] != b.Data[i] {
					t.Fatalf("type %x gz %v: element %d: %v != %v", typ, gz, i, b.Data[i], a.Data[i])
				}
			}
		}
	}
}

func writeRaw(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func encode(t *testing.T, a *IDX) []byte {
	var buf bytes.Buffer
	if err := WriteIDX(&buf, a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestIDXBadInput(t *testing.T) {
	img := encode(t, &IDX{Type: IDXUint8, Dims: []int{2, 2, 2}, Data: make([]float64, 8)})
	var gzBuf bytes.Buffer
	zw := gzip.NewWriter(&gzBuf)
	zw.Write(img)
	zw.Close()
	gzBytes := gzBuf.Bytes()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated header"},
		{"wrong magic", append([]byte{1, 2}, img[2:]...), "bad magic number"},
		{"unknown type", append([]byte{0, 0, 0x42}, img[3:]...), "unknown element type"},
		{"rank 0", []byte{0, 0, 8, 0}, "rank 0"},
		{"truncated dims", img[:9], "truncated header"},
		{"truncated data", img[:len(img)-1], "truncated data"},
		{"gzip truncated", gzBytes[:len(gzBytes)/2], "gzip stream: truncated"},
		{"gzip bad header", []byte{0x1f, 0x8b, 0, 0, 0}, "gzip"},
		{"trailing data", append(append([]byte(nil), img...), 0), "trailing data after the"},
		{"gzip trailing data", gzipped(append(append([]byte(nil), img...), 0)), "trailing data after the"},
		{"gzip checksum", corruptCRC(gzBytes), "checksum"},
		{"huge dims", []byte{0, 0, 8, 3, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff}, "more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeRaw(t, "f.idx", c.data)
			_, err := ReadIDXFile(p)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %q does not name the file and %q", err, c.want)
			}
		})
	}
}

func TestLoadImagesBadInput(t *testing.T) {
	dir := t.TempDir()
	imgs := &IDX{Type: IDXUint8, Dims: []int{3, 2, 2}, Data: make([]float64, 12)}
	p := func(n string) string { return filepath.Join(dir, n) }
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(WriteIDXFile(p("img"), imgs, false))
	must(WriteIDXFile(p("lab2"), &IDX{Type: IDXUint8, Dims: []int{2}, Data: []float64{1, 2}}, false))
	must(WriteIDXFile(p("labbig"), &IDX{Type: IDXUint8, Dims: []int{3}, Data: []float64{1, 2, 10}}, false))
	must(WriteIDXFile(p("lab3"), &IDX{Type: IDXUint8, Dims: []int{3}, Data: []float64{1, 2, 9}}, true))
	must(WriteIDXFile(p("imgf"), &IDX{Type: IDXFloat32, Dims: []int{3, 4}, Data: make([]float64, 12)}, false))
	cases := []struct{ img, lab, want string }{
		{"img", "lab2", "image count 3, label count 2"},
		{"img", "labbig", "label 10 of example 2 outside [0, 10)"},
		{"imgf", "lab3", "expected unsigned byte"},
		{"lab3", "lab3", "rank 1, expected at least 2"},
		{"img", "missing", "no such file"},
	}
	for _, c := range cases {
		_, err := LoadImages(p(c.img), p(c.lab), 10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s/%s: error %v, want %q", c.img, c.lab, err, c.want)
		}
	}
	d, err := LoadImages(p("img"), p("lab3"), 10)
	if err != nil || d.N != 3 || d.D != 4 || d.Labels[2] != 9 {
		t.Fatalf("good files: %v %+v", err, d)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMNISTDir(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	train, _ := SyntheticImages(50, 16, 10, rng)
	test, _ := SyntheticImages(20, 16, 10, rng)
	if err := WriteImages(train, 4, 4, filepath.Join(dir, TrainImages+".gz"), filepath.Join(dir, TrainLabels+".gz"), true); err != nil {
		t.Fatal(err)
	}
	if err := WriteImages(test, 4, 4, filepath.Join(dir, TestImages), filepath.Join(dir, TestLabels), false); err != nil {
		t.Fatal(err)
	}
	tr, te, err := LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N != 50 || te.N != 20 || tr.D != 16 {
		t.Fatalf("sizes %d %d %d", tr.N, te.N, tr.D)
	}
	for i := range train.X {
		if d := tr.X[i] - train.X[i]; d > 1.0/510+1e-6 || d < -1.0/510-1e-6 {
			t.Fatalf("pixel %d: %v vs %v beyond 8-bit quantisation", i, tr.X[i], train.X[i])
		}
	}
	if _, _, err := LoadMNIST(t.TempDir()); err == nil || !strings.Contains(err.Error(), TrainImages) {
		t.Fatalf("empty dir: %v", err)
	}
}

func TestBatchesVisitEachOncePerEpoch(t *testing.T) {
	for _, c := range []struct{ n, size int }{{10, 3}, {12, 4}, {7, 7}, {5, 9}, {1, 1}} {
		rng := rand.New(rand.NewPCG(3, 4))
		b, err := NewBatches(c.n, c.size, rng)
		if err != nil {
			t.Fatal(err)
		}
		for epoch := 0; epoch < 3; epoch++ {
			seen := make([]int, c.n)
			total := 0
			for total < c.n {
				idx := b.Next(rng)
				if len(idx) == 0 || len(idx) > c.size {
					t.Fatalf("n=%d size=%d: batch of %d", c.n, c.size, len(idx))
				}
				for _, i := range idx {
					seen[i]++
				}
				total += len(idx)
			}
			if b.Epoch != epoch {
				t.Fatalf("epoch counter %d, want %d", b.Epoch, epoch)
			}
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("n=%d size=%d epoch %d: example %d seen %d times", c.n, c.size, epoch, i, s)
				}
			}
		}
	}
	if _, err := NewBatches(0, 3, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Fatal("no error for n=0")
	}
}

func TestSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	d := TwoGaussians(100, 3, 4, rng)
	tr, va, err := d.Split(20, rng)
	if err != nil || tr.N != 80 || va.N != 20 {
		t.Fatalf("split: %v %d %d", err, tr.N, va.N)
	}
	if _, _, err := d.Split(100, rng); err == nil {
		t.Fatal("split of everything accepted")
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(ErrFormat, ErrFormat) {
		t.Fatal()
	}
}

func FuzzReadIDX(f *testing.F) {
	var buf bytes.Buffer
	WriteIDX(&buf, &IDX{Type: IDXUint8, Dims: []int{2, 3}, Data: []float64{1, 2, 3, 4, 5, 6}})
	f.Add(buf.Bytes())
	buf.Reset()
	WriteIDX(&buf, &IDX{Type: IDXFloat64, Dims: []int{2}, Data: []float64{1.5, -2}})
	f.Add(buf.Bytes())
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadIDX(bytes.NewReader(data))
		if err != nil {
			return
		}
		n := 1
		for _, d := range a.Dims {
			n *= d
		}
		if n != len(a.Data) {
			t.Fatalf("dims %v but %d elements", a.Dims, len(a.Data))
		}
		var out bytes.Buffer
		if err := WriteIDX(&out, a); err != nil {
			t.Fatal(err)
		}
		b, err := ReadIDX(&out)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		for i := range a.Data {
			if a.Data[i] != b.Data[i] && a.Data[i] == a.Data[i] {
				t.Fatalf("element %d changed", i)
			}
		}
	})
}

// TestUnlabelled checks that images without labels are scaled as
// LoadImages scales them, that an empty or rank-1 file is refused as
// malformed, and that a data directory's test images are found (plain or
// gzipped) or refused naming both names.
func TestUnlabelled(t *testing.T) {
	t.Parallel()
	img := &IDX{Type: IDXUint8, Dims: []int{2, 1, 2}, Data: []float64{0, 255, 51, 102}}
	d, err := Unlabelled(img)
	if err != nil || d.N != 2 || d.D != 2 || d.X[1] != 1 || d.X[2] != float32(51.0/255) || d.Labels != nil {
		t.Fatalf("%+v, %v", d, err)
	}
	for _, dims := range [][]int{{0, 2, 2}, {4}} {
		if _, err := Unlabelled(&IDX{Type: IDXUint8, Dims: dims}); !errors.Is(err, ErrFormat) {
			t.Errorf("dims %v: %v, want ErrFormat", dims, err)
		}
	}
	// floats are pixels already (as serve reads them): kept, not divided by 255
	for _, typ := range []byte{IDXFloat32, IDXFloat64} {
		d, err := Unlabelled(&IDX{Type: typ, Dims: []int{1, 2}, Data: []float64{0.5, 1}})
		if err != nil || d.X[0] != 0.5 || d.X[1] != 1 {
			t.Errorf("type 0x%02x: %v, %v, want the pixels 0.5 and 1 kept", typ, d, err)
		}
	}
	if _, err := Unlabelled(&IDX{Type: IDXInt16, Dims: []int{1, 2}, Data: []float64{1, 2}}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "0x0b") {
		t.Errorf("int16 images: %v, want ErrFormat naming the type", err)
	}
	dir := t.TempDir()
	if _, err := TestImagesIn(dir); err == nil || !strings.Contains(err.Error(), TestImages+".gz") {
		t.Errorf("empty directory: %v", err)
	}
	if err := WriteIDXFile(filepath.Join(dir, TestImages+".gz"), img, true); err != nil {
		t.Fatal(err)
	}
	if f, err := TestImagesIn(dir); err != nil || f != filepath.Join(dir, TestImages+".gz") {
		t.Errorf("gzipped test images: %q, %v", f, err)
	}
}

// gzipped returns b gzip-compressed.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// corruptCRC returns the gzip stream z with its CRC-32 trailer changed: the
// data decode, only the check at the stream's end fails.
func corruptCRC(z []byte) []byte {
	c := append([]byte(nil), z...)
	c[len(c)-8] ^= 0xff
	return c
}
