package onnx_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptsghmc/ptsghmc/onnx"
)

// FuzzDecodeImport feeds Decode and Import arbitrary bytes, seeded with
// the committed fixtures and a small model: they return errors, never
// panic (go test -fuzz FuzzDecodeImport ./onnx/).
func FuzzDecodeImport(f *testing.F) {
	for _, name := range []string{"tiny_mlp.onnx", "tiny_cnn.onnx"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(smallMLP(rand.New(rand.NewPCG(1, 1))).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := onnx.Decode(b)
		if err != nil {
			return
		}
		onnx.Import("fuzz", m)
	})
}
