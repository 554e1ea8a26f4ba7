//go:build !amd64 || noasm

package gemm

// vectorPack has no effect where there is no assembly.
var vectorPack = true

// packTransposed32 packs nothing here: the Go loop packs every column.
func packTransposed32(buf, b []float32, ldb, kc, w, nr int) int { return 0 }
