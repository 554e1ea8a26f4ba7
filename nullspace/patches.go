package nullspace

import (
	"fmt"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// Patches is the geometry of the patches a convolution's kernel reads:
// images of Channels x Height x Width values (channel-major, as a CNN's
// input rows are), a KH x KW window moved by the strides over the image
// zero-padded by PadH rows and PadW columns on each side. A patch is the
// Channels*KH*KW values under the window, channel after channel, row
// after row: the order of a [out, Channels, KH, KW] kernel's values after
// its output channel, so that the kernel is the matrix K [out, Size()] and
// the convolution's output at a position is K p.
type Patches struct {
	Channels, Height, Width int
	KH, KW                  int
	PadH, PadW              int
	StrideH, StrideW        int
}

// Size returns the number of values of a patch, Channels*KH*KW.
func (g Patches) Size() int { return g.Channels * g.KH * g.KW }

// Positions returns the rows and columns of window positions the
// convolution visits: (Height + 2 PadH - KH)/StrideH + 1 and likewise.
func (g Patches) Positions() (rows, cols int) {
	return (g.Height+2*g.PadH-g.KH)/g.StrideH + 1, (g.Width+2*g.PadW-g.KW)/g.StrideW + 1
}

// validate reports an error when g visits no patch.
func (g Patches) validate() error {
	if g.Channels <= 0 || g.Height <= 0 || g.Width <= 0 || g.KH <= 0 || g.KW <= 0 ||
		g.PadH < 0 || g.PadW < 0 || g.StrideH <= 0 || g.StrideW <= 0 ||
		g.KH > g.Height+2*g.PadH || g.KW > g.Width+2*g.PadW {
		return fmt.Errorf("null-space prior: patches %+v: the window must fit the padded image, sizes and strides positive", g)
	}
	return nil
}

// Extract writes the patches of img (Channels*Height*Width values) to out,
// patch after patch in the order of the positions (row by row): rows*cols
// patches of Size() values (Positions). It reports an error, writing
// nothing, for a geometry that visits no patch or slices of other lengths.
func (g Patches) Extract(img []float32, out []float64) error {
	if err := g.validate(); err != nil {
		return err
	}
	rows, cols := g.Positions()
	if want := g.Channels * g.Height * g.Width; len(img) != want {
		return fmt.Errorf("null-space prior: image of %d values, patches %+v read %d", len(img), g, want)
	}
	if want := rows * cols * g.Size(); len(out) != want {
		return fmt.Errorf("null-space prior: room for %d patch values, %d patches of %d need %d", len(out), rows*cols, g.Size(), want)
	}
	g.scatter(img, out, 1, g.Size())
	return nil
}

// scatter writes value i of the patch at position q (row-major over
// Positions) of img to dst[i*is + q*qs], zero where the window lies on
// the padding. It walks the positions innermost, so that with qs = 1 each
// patch value's row of dst is written in order.
func (g Patches) scatter(img []float32, dst []float64, is, qs int) {
	oh, ow := g.Positions()
	i := 0
	for ch := 0; ch < g.Channels; ch++ {
		plane := img[ch*g.Height*g.Width : (ch+1)*g.Height*g.Width]
		for kr := 0; kr < g.KH; kr++ {
			for kc := 0; kc < g.KW; kc++ {
				row := dst[i*is:]
				q := 0
				for or := 0; or < oh; or++ {
					r := or*g.StrideH - g.PadH + kr
					for oc := 0; oc < ow; oc++ {
						c := oc*g.StrideW - g.PadW + kc
						v := 0.0
						if r >= 0 && r < g.Height && c >= 0 && c < g.Width {
							v = float64(plane[r*g.Width+c])
						}
						row[q*qs] = v
						q++
					}
				}
				i++
			}
		}
	}
}

// FitPatches returns the Prior of scale for a first convolution of
// geometry g on the images of data: the span is the fewest top
// eigenvectors of E[p p^T], over every patch p the convolution reads of
// every image (each position, padding included), whose eigenvalues hold
// at least keep of the trace, keep in (0, 1); scale > 0. The second
// moment is summed in a fixed order in float64 (gonum's own BLAS); its
// eigendecomposition takes the process's BLAS, which train sets to the
// pinned arithmetic for the fit, so a run fits the same prior, to the bit,
// on any machine and thread count.
func FitPatches(data *datasets.Dataset, g Patches, keep, scale float64) (*Prior, error) {
	if err := checkFit(keep, scale); err != nil {
		return nil, err
	}
	if err := g.validate(); err != nil {
		return nil, err
	}
	if data == nil || data.N == 0 {
		return nil, fmt.Errorf("null-space prior: no training images")
	}
	if d := g.Channels * g.Height * g.Width; data.D != d {
		return nil, fmt.Errorf("null-space prior: images of %d values, the convolution reads %dx%dx%d = %d", data.D, g.Channels, g.Height, g.Width, d)
	}
	m := patchMoment(data, g)
	p, err := fromMoment(m, keep, scale, "patches'")
	if err != nil {
		return nil, err
	}
	p.Patch = &g
	return p, nil
}

// patchMoment returns E[p p^T] over the patches of data's images. The
// images are cut into groups of a fixed size; each group's sum of p p^T is
// a few images' patches at a time as the columns of a matrix A (one row
// per patch value), C += A A^T, and the groups' sums are added in their
// order. The groups run on the process's cores, and the sums do not
// depend on how many there are.
func patchMoment(data *datasets.Dataset, g Patches) *mat.SymDense {
	const (
		images = 16   // patches per product: 16 x 784 for LeNet's first layer
		group  = 1024 // images per partial sum
	)
	d := g.Size()
	oh, ow := g.Positions()
	per := oh * ow
	groups := (data.N + group - 1) / group
	sums := make([][]float64, groups)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), groups); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := make([]float64, d*images*per)
			var impl gonum.Implementation
			for k := range next {
				c := make([]float64, d*d)
				for start := k * group; start < min((k+1)*group, data.N); start += images {
					n := min(images, data.N-start, (k+1)*group-start)
					cols := n * per
					for e := 0; e < n; e++ {
						g.scatter(data.Row(start+e), a[e*per:], cols, 1)
					}
					impl.Dsyrk(blas.Upper, blas.NoTrans, d, cols, 1, a, cols, 1, c, d)
				}
				sums[k] = c
			}
		}()
	}
	for k := 0; k < groups; k++ {
		next <- k
	}
	close(next)
	wg.Wait()
	total := float64(data.N) * float64(per)
	m := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			s := 0.0
			for _, c := range sums {
				s += c[i*d+j]
			}
			m.SetSym(i, j, s/total)
		}
	}
	return m
}

// Matrix returns A = I + (s-1) V V^T, the map of the reparametrisation,
// row-major D x D (symmetric): the first layer sampled is w' under the
// layer's isotropic prior, and the network's is A w' (a dense layer's
// column, FoldWeights) or, for a convolution, K' A (FoldKernel).
func (p *Prior) Matrix() []float64 {
	a := make([]float64, p.D*p.D)
	for i := 0; i < p.D; i++ {
		a[i*p.D+i] = 1
	}
	p.apply(a, p.D) // row i of I mapped: row i of A, as A is symmetric
	return a
}

// FoldKernel maps a first convolution's kernel K' of shape [out, Channels,
// KH, KW] (row-major, so K' is out rows of D patch values) to K = K' A in
// place: the kernel whose convolution of the raw images is the sampled
// network's, since K p = K' (A p) and A is symmetric (each row k' of K'
// becomes A k').
func (p *Prior) FoldKernel(w []float64, out int) error {
	if p.Patch == nil {
		return fmt.Errorf("null-space prior: fitted on whole inputs (a dense layer's, FoldWeights), not on a convolution's patches")
	}
	if out <= 0 || len(w) != p.D*out {
		return fmt.Errorf("null-space prior: a kernel of %d values is not %d channels of %d patch values", len(w), out, p.D)
	}
	p.apply(w, out)
	return nil
}

// Fold maps the sampled first layer w' of the given shape (a run's first
// learnable) to the raw inputs' in place: FoldWeights for a dense layer
// [D, out], FoldKernel for a convolution [out, Channels, KH, KW].
func (p *Prior) Fold(w []float64, shape []int) error {
	if p.Patch == nil {
		if len(shape) != 2 {
			return fmt.Errorf("null-space prior: a dense first layer of shape %v", shape)
		}
		return p.FoldWeights(w, shape[1])
	}
	if len(shape) != 4 || shape[1]*shape[2]*shape[3] != p.D {
		return fmt.Errorf("null-space prior: a kernel of shape %v, the prior's patches have %d values", shape, p.D)
	}
	return p.FoldKernel(w, shape[0])
}
