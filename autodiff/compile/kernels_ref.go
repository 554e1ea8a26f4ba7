package compile

// The reference kernels: the convolution's column kernels as the graph
// compiler first ran them (short runs, scalar adds). The faster kernels of
// kernels.go compute the same values bit for bit; tests check them against
// these, and the A/B benchmark (BenchmarkLeNetKernelsAB) times one against
// the other in one process. referenceKernels names the kernels that run
// as the reference instead; it is set only by tests, between evaluations.
var referenceKernels kernelSet

// kernelSet is a set of the faster kernels, for the tests' A/B switch.
type kernelSet uint16

const (
	fastColumns            kernelSet = 1 << iota // im2colImage, col2imImage and addTo's long runs
	fastPooling                                  // the branch-free float32 2x2 max pooling
	fastPoolRelu                                 // a convolution block's pooling and ReLU adjoints in one pass
	fastReluPool                                 // its forward pooling reading the ReLU's input
	fastBiasSums                                 // a convolution's bias sums four rows at a time
	fastBiasReluPool                             // the bias added in the ReLU-pooling's pass
	fastEdges                                    // the columns' padding entries set a column at a time
	fastRows                                     // the kernel-row factorisation (kernelRows): not bit-exact
	fastPoolScatter                              // the pooling-and-ReLU adjoint clearing whole planes, then one store a window
	fastBiasReluPoolVector                       // the bias-ReLU-pooling pass in AVX-512 registers, planes up to 32 wide
	fastPoolScatterVector                        // the pooling-and-ReLU adjoint's scatter by AVX-512 gathers and scatters
	allFast                = fastColumns | fastPooling | fastPoolRelu | fastReluPool | fastBiasSums | fastBiasReluPool | fastEdges | fastRows | fastPoolScatter | fastBiasReluPoolVector | fastPoolScatterVector
)

// im2colImageRef is the reference im2colImage: it writes one image's [c, h, w] columns into col, laid out
// [c*kh*kw, oh*ow] (the row index running over channel, kernel row, kernel
// column, as Gorgonia's column index does).
func im2colImageRef[T float](ic *im2col, img, col []T) {
	ohw := ic.oh * ic.ow
	row := 0
	for ch := 0; ch < ic.c; ch++ {
		plane := img[ch*ic.h*ic.w : (ch+1)*ic.h*ic.w]
		for kr := 0; kr < ic.kh; kr++ {
			for kc := 0; kc < ic.kw; kc++ {
				dst := col[row*ohw : (row+1)*ohw]
				row++
				for or := 0; or < ic.oh; or++ {
					d := dst[or*ic.ow : (or+1)*ic.ow]
					ir := or*ic.strideH - ic.padH + kr*ic.dilH
					if ir < 0 || ir >= ic.h {
						clear(d)
						continue
					}
					src := plane[ir*ic.w : (ir+1)*ic.w]
					off := kc*ic.dilW - ic.padW // icol = oc*strideW + off
					if ic.strideW == 1 {
						lo, hi := min(max(-off, 0), ic.ow), min(max(ic.w-off, 0), ic.ow)
						clear(d[:lo])
						if lo < hi {
							copy(d[lo:hi], src[lo+off:hi+off])
						}
						clear(d[max(hi, lo):])
						continue
					}
					for oc := range d {
						icol := oc*ic.strideW + off
						if icol < 0 || icol >= ic.w {
							d[oc] = 0
						} else {
							d[oc] = src[icol]
						}
					}
				}
			}
		}
	}
}

// col2imImageRef is the reference col2imImage: it adds one image's column adjoints (im2colImage's layout) into
// the image's adjoint.
func col2imImageRef[T float](ic *im2col, col, img []T) {
	ohw := ic.oh * ic.ow
	row := 0
	for ch := 0; ch < ic.c; ch++ {
		plane := img[ch*ic.h*ic.w : (ch+1)*ic.h*ic.w]
		for kr := 0; kr < ic.kh; kr++ {
			for kc := 0; kc < ic.kw; kc++ {
				src := col[row*ohw : (row+1)*ohw]
				row++
				for or := 0; or < ic.oh; or++ {
					ir := or*ic.strideH - ic.padH + kr*ic.dilH
					if ir < 0 || ir >= ic.h {
						continue
					}
					d := plane[ir*ic.w : (ir+1)*ic.w]
					s := src[or*ic.ow : (or+1)*ic.ow]
					off := kc*ic.dilW - ic.padW
					if ic.strideW == 1 {
						lo, hi := min(max(-off, 0), ic.ow), min(max(ic.w-off, 0), ic.ow)
						if lo < hi {
							addToRef(d[lo+off:hi+off], s[lo:hi])
						}
						continue
					}
					for oc, v := range s {
						if icol := oc*ic.strideW + off; icol >= 0 && icol < ic.w {
							d[icol] += v
						}
					}
				}
			}
		}
	}
}

// addToRef is the reference addTo: it adds src to dst, four at a time.
func addToRef[T float](dst, src []T) {
	dst = dst[:len(src)]
	i := 0
	for ; i+4 <= len(src); i += 4 {
		d, s := dst[i:i+4:i+4], src[i:i+4:i+4]
		d[0] += s[0]
		d[1] += s[1]
		d[2] += s[2]
		d[3] += s[3]
	}
	for ; i < len(src); i++ {
		dst[i] += src[i]
	}
}

// biasSumsRef is the reference biasSums: db[o] written (or, with acc,
// added) with the sum of g's row o (rows of n), one row after another.
func biasSumsRef[T float](g []T, n int, db []T, acc bool) {
	for o := range db {
		var s T
		for _, v := range g[o*n : (o+1)*n] {
			s += v
		}
		if acc {
			db[o] += s
		} else {
			db[o] = s
		}
	}
}
