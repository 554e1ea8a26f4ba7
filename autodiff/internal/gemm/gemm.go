package gemm

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ptsghmc/ptsghmc/internal/workpool"
)

// BlockK is the block of the inner dimension over which each element's
// products are chained (doc.go). It is part of the arithmetic: changing it
// changes results.
const BlockK = 256

// Version names the arithmetic this package computes; it goes into a run's
// record of its arithmetic.
const Version = "pinned-v1"

type float interface{ ~float32 | ~float64 }

// tileFunc computes one mr x nr tile of C from kc steps of the inner
// dimension: A's element (r, l) at a + (r ars + l aks) elements, B's (l, j)
// at b + (l bs + j), C's (r, j) at c + (r ldc + j), with the arithmetic of
// doc.go for one block.
type tileFunc[T float] func(kc int, a *T, ars, aks int, b *T, bs int, c *T, ldc int, alpha, beta T)

// kernel is a tile function with its shape.
type kernel[T float] struct {
	name   string
	mr, nr int
	tile   tileFunc[T]
}

// minParallelFMAs is the product size (m n k) below which a product runs on
// one goroutine: smaller ones cost more to hand out than they gain.
const minParallelFMAs = 1 << 21

var workers atomic.Int64

func init() { workers.Store(int64(runtime.NumCPU())) }

// SetWorkers sets how many goroutines one product may split its columns
// over (at least 1). It changes no result.
func SetWorkers(n int) { workers.Store(int64(max(n, 1))) }

// Workers returns how many goroutines one product may use.
func Workers() int { return int(workers.Load()) }

// Sgemm computes C = beta C + alpha op(A) op(B) for row-major float32
// matrices, op(A) m x k and op(B) k x n, in the pinned arithmetic. It
// panics, as BLAS does, when a dimension or leading dimension is
// inconsistent with the slices.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(sKernel(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm for float64.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gemm(dKernel(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Kernel names the kernel the products run on: "avx512", "avx2" or "go".
func Kernel() string { return sKernel().name }

// check panics when the operands do not hold the matrices they describe.
func check[T float](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	need := func(name string, s []T, rows, cols, ld int) {
		if ld < max(cols, 1) {
			panic(fmt.Sprintf("gemm: %s: leading dimension %d < %d columns", name, ld, cols))
		}
		if rows > 0 && cols > 0 && len(s) < (rows-1)*ld+cols {
			panic(fmt.Sprintf("gemm: %s: %d elements, a %d x %d matrix with leading dimension %d needs %d", name, len(s), rows, cols, ld, (rows-1)*ld+cols))
		}
	}
	need("A", a, ar, ac, lda)
	need("B", b, br, bc, ldb)
	need("C", c, m, n, ldc)
}

func gemm[T float](kn kernel[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	check(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	p := getProduct[T]()
	defer putProduct(p)
	p.kn, p.transA, p.transB, p.m, p.n, p.k = kn, transA, transB, m, n, k
	p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc = alpha, a, lda, b, ldb, beta, c, ldc
	panels := (n + kn.nr - 1) / kn.nr
	w := min(Workers(), panels)
	if w <= 1 || m*n*k < minParallelFMAs {
		p.columns(0, n)
		return
	}
	// Goroutines take contiguous runs of whole panels; the split changes no
	// bit (doc.go).
	columnPool.Ensure(w - 1)
	p.wg.Add(w - 1)
	for i := 1; i < w; i++ {
		columnPool.Submit(job{p: p, j0: i * panels / w * kn.nr, j1: min((i+1)*panels/w*kn.nr, n)})
	}
	p.columns(0, min(panels/w*kn.nr, n))
	p.wg.Wait()
}

// A job is a run of C's columns for a pool goroutine.
type job struct {
	p      columnRunner
	j0, j1 int
}

// Run computes the job's columns and reports them done.
func (j job) Run() {
	j.p.columns(j.j0, j.j1)
	j.p.done()
}

type columnRunner interface {
	columns(j0, j1 int)
	done()
}

// columnPool runs products' column jobs on goroutines that live as long as
// the process.
var columnPool = workpool.New[job](64)

// A freeList holds values for reuse. Unlike a sync.Pool it is not emptied
// by the garbage collector, so a product allocates nothing in a steady run
// even across collections (TestNoAllocs); it holds at most as many values as
// were ever in use at once.
type freeList[X any] struct {
	mu    sync.Mutex
	items []*X
}

// get returns a held value, or a new one.
func (f *freeList[X]) get() *X {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.items); n > 0 {
		x := f.items[n-1]
		f.items = f.items[:n-1]
		return x
	}
	return new(X)
}

// put holds x for a later get.
func (f *freeList[X]) put(x *X) {
	f.mu.Lock()
	f.items = append(f.items, x)
	f.mu.Unlock()
}

var (
	products32 freeList[product[float32]]
	products64 freeList[product[float64]]
	scratch32  freeList[scratch[float32]]
	scratch64  freeList[scratch[float64]]
)

// listFor returns l32 for float32 and l64 for float64 as the list of X[T].
func listFor[T float, X any](l32, l64 any) *freeList[X] {
	var zero T
	if unsafe.Sizeof(zero) == 4 {
		return l32.(*freeList[X])
	}
	return l64.(*freeList[X])
}

func productList[T float]() *freeList[product[T]] {
	return listFor[T, product[T]](&products32, &products64)
}

func getProduct[T float]() *product[T] { return productList[T]().get() }

func putProduct[T float](p *product[T]) {
	p.a, p.b, p.c = nil, nil, nil // hold no caller's memory
	productList[T]().put(p)
}

// scale sets C = beta C (C = 0 when beta is 0, without reading C).
func scale[T float](m, n int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// product is one call's operands.
type product[T float] struct {
	kn             kernel[T]
	transA, transB bool
	m, n, k        int
	alpha, beta    T
	a, b, c        []T
	lda, ldb, ldc  int
	wg             sync.WaitGroup
}

func (p *product[T]) done() { p.wg.Done() }

// scratch is one goroutine's packing buffers.
type scratch[T float] struct {
	a, b, c []T
}

func scratchList[T float]() *freeList[scratch[T]] {
	return listFor[T, scratch[T]](&scratch32, &scratch64)
}

func getScratch[T float](mr, nr int) *scratch[T] {
	s := scratchList[T]().get()
	if len(s.a) < mr*BlockK {
		s.a = make([]T, mr*BlockK)
	}
	if len(s.b) < nr*BlockK {
		s.b = make([]T, nr*BlockK)
	}
	if len(s.c) < mr*nr {
		s.c = make([]T, mr*nr)
	}
	return s
}

// columns computes C's columns [j0, j1): every K block, every panel of nr
// columns, every tile of mr rows.
func (p *product[T]) columns(j0, j1 int) {
	if j0 >= j1 {
		return
	}
	mr, nr := p.kn.mr, p.kn.nr
	s := getScratch[T](mr, nr)
	defer scratchList[T]().put(s)
	for pc := 0; pc < p.k; pc += BlockK {
		kc := min(BlockK, p.k-pc)
		beta := p.beta
		if pc > 0 {
			beta = 1
		}
		for jc := j0; jc < j1; jc += nr {
			w := min(nr, j1-jc)
			bp, bs := p.panelB(s.b, pc, kc, jc, w)
			for ic := 0; ic < p.m; ic += mr {
				h := min(mr, p.m-ic)
				ap, ars, aks := p.rowsA(s.a, ic, h, pc, kc)
				if h == mr && w == nr {
					p.kn.tile(kc, ap, ars, aks, bp, bs, &p.c[ic*p.ldc+jc], p.ldc, p.alpha, beta)
					continue
				}
				// An edge tile: computed whole into scratch, its valid part
				// copied in and out (the padding rows and columns are zero).
				t := s.c[:mr*nr]
				clear(t)
				if beta != 0 {
					for r := 0; r < h; r++ {
						copy(t[r*nr:r*nr+w], p.c[(ic+r)*p.ldc+jc:])
					}
				}
				p.kn.tile(kc, ap, ars, aks, bp, bs, &t[0], nr, p.alpha, beta)
				for r := 0; r < h; r++ {
					copy(p.c[(ic+r)*p.ldc+jc:(ic+r)*p.ldc+jc+w], t[r*nr:])
				}
			}
		}
	}
}

// panelB returns B's block of rows [pc, pc+kc) and columns [jc, jc+w) as the
// kernel reads it: in place when B is not transposed and the panel is full,
// otherwise packed into buf, kc rows of nr, zero beyond w.
func (p *product[T]) panelB(buf []T, pc, kc, jc, w int) (*T, int) {
	nr := p.kn.nr
	if !p.transB && w == nr {
		return &p.b[pc*p.ldb+jc], p.ldb
	}
	buf = buf[:kc*nr]
	if !p.transB {
		for l := 0; l < kc; l++ {
			row := buf[l*nr : (l+1)*nr]
			copy(row, p.b[(pc+l)*p.ldb+jc:(pc+l)*p.ldb+jc+w])
			clear(row[w:])
		}
		return &buf[0], nr
	}
	if w < nr {
		clear(buf)
	}
	done := p.packTransposed(buf, pc, kc, jc, w)
	for j := 0; j < w; j++ { // B[l, jc+j] = b[(jc+j) ldb + l]
		col := p.b[(jc+j)*p.ldb+pc+done : (jc+j)*p.ldb+pc+kc]
		for l, v := range col {
			buf[(done+l)*nr+j] = v
		}
	}
	return &buf[0], nr
}

// packTransposed packs the leading columns of a transposed panel of B, w of
// nr columns wide, with the vector copy where there is one (packb_amd64.s:
// float32, 32-wide panels, 16 x 16 blocks) and returns how many of the kc
// it packed; the Go loop packs the rest. Packing only copies, so both give
// the same bits.
func (p *product[T]) packTransposed(buf []T, pc, kc, jc, w int) int {
	b32, ok := any(p.b).([]float32)
	if !ok {
		return 0
	}
	return packTransposed32(any(buf).([]float32), b32[jc*p.ldb+pc:], p.ldb, kc, w, p.kn.nr)
}

// rowsA returns A's rows [ic, ic+h) and columns [pc, pc+kc) as the kernel
// reads them, with their row and column strides: in place for a full tile,
// otherwise packed into buf (column l's mr values together, zero below h).
func (p *product[T]) rowsA(buf []T, ic, h, pc, kc int) (*T, int, int) {
	mr := p.kn.mr
	if h == mr {
		if p.transA { // A[i, l] = a[l lda + i]
			return &p.a[pc*p.lda+ic], 1, p.lda
		}
		return &p.a[ic*p.lda+pc], p.lda, 1
	}
	buf = buf[:kc*mr]
	clear(buf)
	for r := 0; r < h; r++ {
		for l := 0; l < kc; l++ {
			if p.transA {
				buf[l*mr+r] = p.a[(pc+l)*p.lda+ic+r]
			} else {
				buf[l*mr+r] = p.a[(ic+r)*p.lda+pc+l]
			}
		}
	}
	return &buf[0], 1, mr
}
