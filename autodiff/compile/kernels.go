package compile

import (
	"math"

	"gonum.org/v1/gonum/blas"
	gonumblas "gonum.org/v1/gonum/blas/gonum"
)

// runs walks a tensor of some shape, in row-major order, together with
// other strided operands, as contiguous runs of the innermost collapsed
// axis: offs holds, per run, one start offset per operand; run r covers
// elements offs[k*r+j] + i*st[j], i < n, of operand j. Axes along which
// every operand is contiguous are merged first, so a bias broadcast over a
// convolution's [B, C, H, W] output walks B*C runs of H*W.
type runs struct {
	n    int
	st   []int
	offs []int
}

// newRuns returns the runs of shape for operands with the given strides
// (one per axis of shape; 0 along broadcast axes).
func newRuns(shape []int, strides ...[]int) runs {
	k := len(strides)
	type dim struct {
		n  int
		st []int
	}
	var merged []dim // innermost first
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] == 1 {
			continue
		}
		d := dim{n: shape[i], st: make([]int, k)}
		for j := range strides {
			d.st[j] = strides[j][i]
		}
		if len(merged) > 0 {
			last := &merged[len(merged)-1]
			ok := true
			for j := range d.st {
				ok = ok && d.st[j] == last.st[j]*last.n
			}
			if ok {
				last.n *= d.n
				continue
			}
		}
		merged = append(merged, d)
	}
	if len(merged) == 0 {
		merged = []dim{{n: 1, st: make([]int, k)}}
	}
	r := runs{n: merged[0].n, st: merged[0].st}
	outer := merged[1:]
	count := 1
	for _, d := range outer {
		count *= d.n
	}
	r.offs = make([]int, 0, count*k)
	idx := make([]int, len(outer))
	off := make([]int, k)
	for c := 0; c < count; c++ {
		r.offs = append(r.offs, off...)
		for a := 0; a < len(outer); a++ {
			idx[a]++
			for j := range off {
				off[j] += outer[a].st[j]
			}
			if idx[a] < outer[a].n {
				break
			}
			for j := range off {
				off[j] -= outer[a].n * outer[a].st[j]
			}
			idx[a] = 0
		}
	}
	return r
}

// gather writes src[i*st] into dst[i].
func gather[T float](dst, src []T, st int) {
	if st == 1 {
		copy(dst, src[:len(dst)])
		return
	}
	for i := range dst {
		dst[i] = src[i*st]
	}
}

// gatherAcc writes, or with acc adds, src[i*st] into dst[i].
func gatherAcc[T float](dst, src []T, st int, acc bool) {
	if !acc {
		gather(dst, src, st)
		return
	}
	for i := range dst {
		dst[i] += src[i*st]
	}
}

// scatter writes, or with acc adds, src[i] into dst[i*st] (with st = 0
// and acc it sums src into dst[0]).
func scatter[T float](dst []T, st int, src []T, acc bool) {
	switch {
	case st == 0 && acc:
		var s T
		for _, v := range src {
			s += v
		}
		dst[0] += s
	case st == 1:
		accumulate(dst[:len(src)], src, acc)
	case acc:
		for i, v := range src {
			dst[i*st] += v
		}
	default:
		for i, v := range src {
			dst[i*st] = v
		}
	}
}

// accumulate writes, or with acc adds, src into dst.
func accumulate[T float](dst, src []T, acc bool) {
	if !acc {
		copy(dst, src)
		return
	}
	addTo(dst, src)
}

// matmul is C = op(A) op(B) through BLAS GEMM, op transposing with ta, tb;
// A is ar x ac, B br x bc as stored.
type matmul[T float] struct {
	gemm           gemmFunc[T]
	a, b, c        []T
	da, db, dc     []T
	ta, tb         bool
	ar, ac, br, bc int
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func beta[T float](acc bool) T {
	if acc {
		return 1
	}
	return 0
}

func (m *matmul[T]) forward() {
	rows, inner, cols := m.ar, m.ac, m.bc
	if m.ta {
		rows, inner = m.ac, m.ar
	}
	if m.tb {
		cols = m.br
	}
	m.gemm(trans(m.ta), trans(m.tb), rows, cols, inner, 1, m.a, m.ac, m.b, m.bc, 0, m.c, cols)
}

// backward writes (or adds) dA and dB from dC: with C = op(A) op(B),
// d op(A) = dC op(B)^T and d op(B) = op(A)^T dC, each transposed back when
// the operand was used transposed. dB is written before dA (the order the
// compiler claimed them).
func (m *matmul[T]) backward(accA, accB bool) {
	rows, inner, cols := m.ar, m.ac, m.bc
	if m.ta {
		rows, inner = m.ac, m.ar
	}
	if m.tb {
		cols = m.br
	}
	if m.db != nil {
		if !m.tb { // dB [inner, cols] = op(A)^T dC
			m.gemm(trans(!m.ta), blas.NoTrans, inner, cols, rows, 1, m.a, m.ac, m.dc, cols, beta[T](accB), m.db, cols)
		} else { // dB [cols, inner] = dC^T op(A)
			m.gemm(blas.Trans, trans(m.ta), cols, inner, rows, 1, m.dc, cols, m.a, m.ac, beta[T](accB), m.db, inner)
		}
	}
	if m.da != nil {
		if !m.ta { // dA [rows, inner] = dC op(B)^T
			m.gemm(blas.NoTrans, trans(!m.tb), rows, inner, cols, 1, m.dc, cols, m.b, m.bc, beta[T](accA), m.da, inner)
		} else { // dA [inner, rows] = op(B) dC^T
			m.gemm(trans(m.tb), blas.Trans, inner, rows, cols, 1, m.b, m.bc, m.dc, cols, beta[T](accA), m.da, rows)
		}
	}
}

// Elementwise binary operations and the partial derivatives their adjoints
// use.
const (
	binAdd = iota
	binSub
	binMul
	binDiv
	binLt
	binGt
	binLte
	binGte
	binEq
	binNe
	binRelu // x ⊙ (x >= 0), fused
)

var binOps = map[string]int{"+": binAdd, "-": binSub, "⊙": binMul, "÷": binDiv, "<": binLt, ">": binGt,
	"<=": binLte, ">=": binGte, "==": binEq, "!=": binNe, "relu": binRelu}

func b2f[T float](b bool) T {
	if b {
		return 1
	}
	return 0
}

// binRun computes out[i] = a[i*sa] op b[i*sb].
func binRun[T float](op int, out, a []T, sa int, b []T, sb int) {
	if op == binRelu {
		if sa == 1 {
			a = a[:len(out)]
			for i, v := range a {
				out[i] = max(v, 0) // branch-free; v >= 0 keeps v, as x * (x >= 0) does
			}
			return
		}
		for i := range out {
			if v := a[i*sa]; v >= 0 {
				out[i] = v
			} else {
				out[i] = 0
			}
		}
		return
	}
	if sa == 1 && sb == 0 {
		y := b[0]
		a = a[:len(out)]
		switch op {
		case binAdd:
			for i, x := range a {
				out[i] = x + y
			}
			return
		case binMul:
			for i, x := range a {
				out[i] = x * y
			}
			return
		}
	}
	if sa == 1 && sb == 1 {
		a, b = a[:len(out)], b[:len(out)]
		switch op {
		case binAdd:
			for i, x := range a {
				out[i] = x + b[i]
			}
			return
		case binMul:
			for i, x := range a {
				out[i] = x * b[i]
			}
			return
		}
	}
	for i := range out {
		x, y := a[i*sa], b[i*sb]
		var v T
		switch op {
		case binAdd:
			v = x + y
		case binSub:
			v = x - y
		case binMul:
			v = x * y
		case binDiv:
			v = x / y
		case binLt:
			v = b2f[T](x < y)
		case binGt:
			v = b2f[T](x > y)
		case binLte:
			v = b2f[T](x <= y)
		case binGte:
			v = b2f[T](x >= y)
		case binEq:
			v = b2f[T](x == y)
		case binNe:
			v = b2f[T](x != y)
		}
		out[i] = v
	}
}

// Partial derivatives of a binary operation's output g with respect to one
// operand, times the output's adjoint.
const (
	partIdent = iota // g
	partNeg          // -g
	partMulB         // g b
	partMulA         // g a
	partDivB         // g / b
	partDivAB        // -g a / b^2
	partReluA        // g where a >= 0
)

// partOf returns the partial of op with respect to operand side (0: a).
func partOf(op, side int) int {
	switch op {
	case binSub:
		if side == 1 {
			return partNeg
		}
	case binMul:
		if side == 0 {
			return partMulB
		}
		return partMulA
	case binDiv:
		if side == 0 {
			return partDivB
		}
		return partDivAB
	case binRelu:
		return partReluA
	}
	return partIdent
}

// partRun writes (or with acc adds) the partial part of each of the run's
// outputs into d[i*sd].
func partRun[T float](part int, d []T, sd int, acc bool, g, a []T, sa int, b []T, sb int) {
	if part == partReluA && sd == 1 && sa == 1 && !acc {
		d = d[:len(g)]
		copy(d, g)
		reluMask(a[:len(g)], d)
		return
	}
	if part == partIdent && sd == 1 {
		accumulate(d[:len(g)], g, acc)
		return
	}
	if part == partIdent && sd == 0 && acc {
		var s T
		for _, v := range g {
			s += v
		}
		d[0] += s
		return
	}
	for i, v := range g {
		var x T
		switch part {
		case partIdent:
			x = v
		case partNeg:
			x = -v
		case partMulB:
			x = v * b[i*sb]
		case partMulA:
			x = v * a[i*sa]
		case partDivB:
			x = v / b[i*sb]
		case partDivAB:
			y := b[i*sb]
			x = -v * a[i*sa] / (y * y)
		case partReluA:
			if a[i*sa] >= 0 {
				x = v
			}
		}
		if acc {
			d[i*sd] += x
		} else {
			d[i*sd] = x
		}
	}
}

// Unary operations.
const (
	unNeg = iota
	unSquare
	unCube
	unSqrt
	unInv
	unExp
	unLn
	unLog1p
	unTanh
	unSigmoid
	unSoftplus
	unAbs
)

var unaryCodes = map[string]int{"neg": unNeg, "square": unSquare, "cube": unCube, "sqrt": unSqrt, "inv": unInv,
	"exp": unExp, "ln": unLn, "log1p": unLog1p, "tanh": unTanh, "sigmoid": unSigmoid, "softplus": unSoftplus, "abs": unAbs}

func unaryForward[T float](op int, in, out []T) {
	in = in[:len(out)]
	for i, x := range in {
		var y T
		switch op {
		case unNeg:
			y = -x
		case unSquare:
			y = x * x
		case unCube:
			y = x * x * x
		case unSqrt:
			y = T(math.Sqrt(float64(x)))
		case unInv:
			y = 1 / x
		case unExp:
			y = T(math.Exp(float64(x)))
		case unLn:
			y = T(math.Log(float64(x)))
		case unLog1p:
			y = T(math.Log1p(float64(x)))
		case unTanh:
			y = T(math.Tanh(float64(x)))
		case unSigmoid:
			y = T(1 / (1 + math.Exp(-float64(x))))
		case unSoftplus:
			y = T(softplus(float64(x)))
		case unAbs:
			y = T(math.Abs(float64(x)))
		}
		out[i] = y
	}
}

func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// unaryBackward writes (or adds) dout * f'(x) into din, from the input x
// and the output y = f(x).
func unaryBackward[T float](op int, in, out, dout, din []T, acc bool) {
	in, out, din = in[:len(dout)], out[:len(dout)], din[:len(dout)]
	for i, g := range dout {
		x, y := in[i], out[i]
		var d T
		switch op {
		case unNeg:
			d = -1
		case unSquare:
			d = 2 * x
		case unCube:
			d = 3 * x * x
		case unSqrt:
			d = 0.5 / y
		case unInv:
			d = -y * y
		case unExp:
			d = y
		case unLn:
			d = 1 / x
		case unLog1p:
			d = 1 / (1 + x)
		case unTanh:
			d = 1 - y*y
		case unSigmoid:
			d = y * (1 - y)
		case unSoftplus:
			d = T(1 / (1 + math.Exp(-float64(x))))
		case unAbs:
			d = T(math.Copysign(1, float64(x)))
		}
		if acc {
			din[i] += g * d
		} else {
			din[i] = g * d
		}
	}
}

// softmaxForward applies the (log-)softmax to each row of w values.
func softmaxForward[T float](in, out []T, w int, isLog bool) {
	for r := 0; r+w <= len(out); r += w {
		z, o := in[r:r+w], out[r:r+w]
		m := z[0]
		for _, v := range z {
			m = max(m, v)
		}
		var s float64
		for _, v := range z {
			s += math.Exp(float64(v - m))
		}
		if isLog {
			lse := m + T(math.Log(s))
			for j, v := range z {
				o[j] = v - lse
			}
			continue
		}
		for j, v := range z {
			o[j] = T(math.Exp(float64(v-m)) / s)
		}
	}
}

// softmaxBackward writes (or adds) the adjoint of the softmax's input from
// its output y and the output's adjoint g: g - softmax * sum(g) for the log
// version, y (g - sum(g y)) otherwise.
func softmaxBackward[T float](out, dout, din []T, w int, isLog, acc bool) {
	for r := 0; r+w <= len(out); r += w {
		y, g, d := out[r:r+w], dout[r:r+w], din[r:r+w]
		var s T
		for j, v := range g {
			if isLog {
				s += v
			} else {
				s += v * y[j]
			}
		}
		for j, v := range g {
			var x T
			if isLog {
				x = v - T(math.Exp(float64(y[j])))*s
			} else {
				x = y[j] * (v - s)
			}
			if acc {
				d[j] += x
			} else {
				d[j] = x
			}
		}
	}
}

// im2col is Gorgonia's im2col: an image batch [b, c, h, w] to columns
// [b, oh, ow, c*kh*kw], the column index running over channel, kernel row,
// kernel column.
type im2col struct {
	b, c, h, w, oh, ow           int
	kh, kw, padH, padW           int
	strideH, strideW, dilH, dilW int
}

func im2colForward[T float](ic *im2col, im, col []T) {
	k := 0
	for b := 0; b < ic.b; b++ {
		img := im[b*ic.c*ic.h*ic.w:]
		for or := 0; or < ic.oh; or++ {
			for oc := 0; oc < ic.ow; oc++ {
				for ch := 0; ch < ic.c; ch++ {
					plane := img[ch*ic.h*ic.w:]
					for kr := 0; kr < ic.kh; kr++ {
						ir := -ic.padH + kr*ic.dilH + or*ic.strideH
						for kc := 0; kc < ic.kw; kc++ {
							icol := -ic.padW + kc*ic.dilW + oc*ic.strideW
							if ir < 0 || ir >= ic.h || icol < 0 || icol >= ic.w {
								col[k] = 0
							} else {
								col[k] = plane[ir*ic.w+icol]
							}
							k++
						}
					}
				}
			}
		}
	}
}

// col2im writes (or adds) the adjoint of im2col's input: each column
// entry's adjoint added to the pixel it was read from.
func col2im[T float](ic *im2col, dcol, dim []T, acc bool) {
	if !acc {
		clear(dim[:ic.b*ic.c*ic.h*ic.w])
	}
	k := 0
	for b := 0; b < ic.b; b++ {
		img := dim[b*ic.c*ic.h*ic.w:]
		for or := 0; or < ic.oh; or++ {
			for oc := 0; oc < ic.ow; oc++ {
				for ch := 0; ch < ic.c; ch++ {
					plane := img[ch*ic.h*ic.w:]
					for kr := 0; kr < ic.kh; kr++ {
						ir := -ic.padH + kr*ic.dilH + or*ic.strideH
						for kc := 0; kc < ic.kw; kc++ {
							icol := -ic.padW + kc*ic.dilW + oc*ic.strideW
							if ir >= 0 && ir < ic.h && icol >= 0 && icol < ic.w {
								plane[ir*ic.w+icol] += dcol[k]
							}
							k++
						}
					}
				}
			}
		}
	}
}

// maxPool is Gorgonia's 2-d max pooling of [b, c, h, w] into
// [b, c, oh, ow], remembering each output's argmax within its plane (-1
// when the window is empty).
type maxPool struct {
	b, c, h, w, oh, ow int
	kh, kw, padH, padW int
	strideH, strideW   int
	arg                []int32
}

// maxPoolForward pools planes planes of in into out, their argmaxes into
// args.
func maxPoolForward[T float](mp *maxPool, in, out []T, args []int32, planes int) {
	lowest := T(-math.MaxFloat32)
	if _, ok := any(lowest).(float64); ok {
		lowest = T(-math.Nextafter(math.Inf(1), 0)) // -MaxFloat64, as Gorgonia starts
	}
	if mp.kh == 2 && mp.kw == 2 && mp.strideH == 2 && mp.strideW == 2 && mp.padH == 0 && mp.padW == 0 {
		maxPool2x2(mp, in, out, args, planes, lowest)
		return
	}
	for p := 0; p < planes; p++ {
		plane := in[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		o := out[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		for ph := 0; ph < mp.oh; ph++ {
			h0 := ph*mp.strideH - mp.padH
			h1 := min(h0+mp.kh, mp.h)
			h0 = max(h0, 0)
			for pw := 0; pw < mp.ow; pw++ {
				w0 := pw*mp.strideW - mp.padW
				w1 := min(w0+mp.kw, mp.w)
				w0 = max(w0, 0)
				best, at := lowest, int32(-1)
				for hi := h0; hi < h1; hi++ {
					for wi := w0; wi < w1; wi++ {
						if v := plane[hi*mp.w+wi]; v > best {
							best, at = v, int32(hi*mp.w+wi)
						}
					}
				}
				o[ph*mp.ow+pw], arg[ph*mp.ow+pw] = best, at
			}
		}
	}
}

// maxPool2x2 is maxPoolForward for 2x2 windows of stride 2 without
// padding (the windows never leave the plane): the same comparisons in the
// same order.
func maxPool2x2[T float](mp *maxPool, in, out []T, args []int32, planes int, lowest T) {
	if in32, ok := any(in).([]float32); ok && referenceKernels&fastPooling == 0 {
		maxPool2x2F32(mp, in32, any(out).([]float32), args, planes, float32(lowest), false)
		return
	}
	for p := 0; p < planes; p++ {
		plane := in[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		o := out[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		for ph := 0; ph < mp.oh; ph++ {
			r0 := plane[2*ph*mp.w : (2*ph+1)*mp.w]
			r1 := plane[(2*ph+1)*mp.w : (2*ph+2)*mp.w]
			oo, aa := o[ph*mp.ow:(ph+1)*mp.ow], arg[ph*mp.ow:(ph+1)*mp.ow]
			for pw := range oo {
				w := 2 * pw
				best, at := lowest, int32(-1)
				if v := r0[w]; v > best {
					best, at = v, int32(2*ph*mp.w+w)
				}
				if v := r0[w+1]; v > best {
					best, at = v, int32(2*ph*mp.w+w+1)
				}
				if v := r1[w]; v > best {
					best, at = v, int32((2*ph+1)*mp.w+w)
				}
				if v := r1[w+1]; v > best {
					best, at = v, int32((2*ph+1)*mp.w+w+1)
				}
				oo[pw], aa[pw] = best, at
			}
		}
	}
}

// maxPool2x2Backward is maxPoolBackward, writing, for 2x2 windows of
// stride 2 that tile the plane: each input gets its window's adjoint if it
// is the argmax and 0 otherwise, with no separate clearing pass.
func maxPool2x2Backward[T float](mp *maxPool, dout, din []T, args []int32, planes int) {
	if g32, ok := any(dout).([]float32); ok && referenceKernels&fastPooling == 0 {
		maxPool2x2BackwardF32(mp, g32, any(din).([]float32), args, planes)
		return
	}
	for p := 0; p < planes; p++ {
		d := din[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		g := dout[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		for ph := 0; ph < mp.oh; ph++ {
			i0, i1 := 2*ph*mp.w, (2*ph+1)*mp.w
			r0, r1 := d[i0:i0+mp.w], d[i1:i1+mp.w]
			gg, aa := g[ph*mp.ow:(ph+1)*mp.ow], arg[ph*mp.ow:(ph+1)*mp.ow]
			for pw, v := range gg {
				w := 2 * pw
				r0[w], r0[w+1], r1[w], r1[w+1] = 0, 0, 0, 0
				switch a := int(aa[pw]); a {
				case i0 + w:
					r0[w] = v
				case i0 + w + 1:
					r0[w+1] = v
				case i1 + w:
					r1[w] = v
				case i1 + w + 1:
					r1[w+1] = v
				}
			}
		}
	}
}

// maxPoolBackward writes (or adds) the adjoint of the pooling's input: each
// output's adjoint goes to its argmax.
func maxPoolBackward[T float](mp *maxPool, dout, din []T, args []int32, planes int, acc bool) {
	if !acc && mp.kh == 2 && mp.kw == 2 && mp.strideH == 2 && mp.strideW == 2 && mp.padH == 0 && mp.padW == 0 && mp.h == 2*mp.oh && mp.w == 2*mp.ow {
		maxPool2x2Backward(mp, dout, din, args, planes)
		return
	}
	if !acc {
		clear(din[:planes*mp.h*mp.w])
	}
	for p := 0; p < planes; p++ {
		d := din[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		g := dout[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		for j, v := range g {
			if a := arg[j]; a >= 0 {
				d[a] += v
			}
		}
	}
}

// conv is a fused 2-d convolution, the pattern Gorgonia's Conv2d builds
// (im2col, a product with the flattened filter, a reshape and a transpose
// to [b, o, oh, ow]) run image by image: each image's columns, laid out
// [c*kh*kw, oh*ow], go through one GEMM with the filter [o, c*kh*kw]
// straight into the image's [o, oh*ow] output, with no batch-sized column
// buffer and no transpose. The backward pass recomputes each image's
// columns.
type conv[T float] struct {
	ic   im2col
	o    int
	gemm gemmFunc[T]
	col  []T // one image's columns
	dcol []T
	rows *kernelRows[T] // nil: the convolution runs on full columns (im2colImage)
}

// rowsPath returns the convolution's kernel-row factorisation if it runs
// on it, else nil.
func (cv *conv[T]) rowsPath() *kernelRows[T] {
	if cv.rows != nil && referenceKernels&fastRows == 0 {
		return cv.rows
	}
	return nil
}

// im2colImage writes one image's [c, h, w] columns into col, laid out
// [c*kh*kw, oh*ow] (the row index running over channel, kernel row, kernel
// column, as Gorgonia's column index does). With unit strides and as many
// output columns as input columns (a "same" convolution, LeNet's), each row
// of col is the plane shifted by a constant: one copy of the row's valid
// rows, then the few wrapped-around entries at its edges cleared.
// Otherwise it runs im2colImageRef.
func im2colImage[T float](ic *im2col, img, col []T) {
	if referenceKernels&fastColumns != 0 || ic.strideH != 1 || ic.strideW != 1 || ic.ow != ic.w {
		im2colImageRef(ic, img, col)
		return
	}
	ohw, hw := ic.oh*ic.ow, ic.h*ic.w
	row := 0
	for ch := 0; ch < ic.c; ch++ {
		plane := img[ch*hw : (ch+1)*hw]
		for kr := 0; kr < ic.kh; kr++ {
			dr := kr*ic.dilH - ic.padH // input row = output row + dr
			or0, or1 := min(max(-dr, 0), ic.oh), min(max(ic.h-dr, 0), ic.oh)
			for kc := 0; kc < ic.kw; kc++ {
				dst := col[row*ohw : (row+1)*ohw]
				row++
				s := shiftOf(ic, dr, or0, or1, kc)
				if referenceKernels&fastEdges == 0 || s.d0 >= s.d1 {
					copyShift(dst, plane, s, ic.ow, or0, or1)
					continue
				}
				clear(dst[:s.d0])
				copy(dst[s.d0:s.d1], plane[s.d0+s.base:s.d1+s.base])
				clear(dst[s.d1:])
				if s.lo > 0 || s.hi < ic.ow {
					for or := or0; or < or1; or++ { // a few entries: stores, not clear's calls
						r := dst[or*ic.ow : (or+1)*ic.ow]
						for i := 0; i < s.lo; i++ {
							r[i] = 0
						}
						for i := max(s.hi, s.lo); i < len(r); i++ {
							r[i] = 0
						}
					}
				}
			}
		}
	}
}

// shift is one row of a same convolution's columns as a shifted copy of
// its input plane: column entry i (i in [d0, d1)) reads pixel i+base, the
// entries of output rows [or0, or1) outside output columns [lo, hi) being
// padding (wrapped-around pixels), and every entry outside [d0, d1) too.
type shift struct {
	base, d0, d1, lo, hi int
}

// shiftOf returns the shift of column row (kernel row with input row
// offset dr and valid output rows [or0, or1), kernel column kc), for
// unit strides and ow == w.
func shiftOf(ic *im2col, dr, or0, or1, kc int) shift {
	off := kc*ic.dilW - ic.padW // input column = output column + off
	s := shift{base: dr*ic.w + off, lo: min(max(-off, 0), ic.ow), hi: min(max(ic.w-off, 0), ic.ow)}
	s.d0, s.d1 = max(or0*ic.ow, -s.base), min(or1*ic.ow, ic.h*ic.w-s.base)
	return s
}

// copyShift writes one row of a same convolution's columns: dst[i] =
// plane[i+s.base] on [s.d0, s.d1), zero elsewhere and at the padding
// entries of output rows [or0, or1) outside output columns [s.lo, s.hi).
func copyShift[T float](dst, plane []T, s shift, ow, or0, or1 int) {
	if s.d0 >= s.d1 {
		clear(dst)
		return
	}
	clear(dst[:s.d0])
	copy(dst[s.d0:s.d1], plane[s.d0+s.base:s.d1+s.base])
	clear(dst[s.d1:])
	if s.lo > 0 || s.hi < ow {
		setEdges(dst[or0*ow:or1*ow], ow, s.lo, s.hi, 0)
	}
}

// col2imImage adds one image's column adjoints (im2colImage's layout) into
// the image's adjoint. For a same convolution with unit strides it adds
// each column row to its plane in one run (addTo), its padding entries
// first overwritten with -0, which adds nothing to any value (x + -0 == x
// for every x, -0 included), so each pixel receives the same additions in
// the same order as in col2imImageRef. It overwrites those entries of col.
func col2imImage[T float](ic *im2col, col, img []T) {
	if referenceKernels&fastColumns != 0 || ic.strideH != 1 || ic.strideW != 1 || ic.ow != ic.w {
		col2imImageRef(ic, col, img)
		return
	}
	ohw, hw := ic.oh*ic.ow, ic.h*ic.w
	negZero := T(math.Copysign(0, -1))
	row := 0
	for ch := 0; ch < ic.c; ch++ {
		plane := img[ch*hw : (ch+1)*hw]
		for kr := 0; kr < ic.kh; kr++ {
			dr := kr*ic.dilH - ic.padH
			or0, or1 := min(max(-dr, 0), ic.oh), min(max(ic.h-dr, 0), ic.oh)
			for kc := 0; kc < ic.kw; kc++ {
				src := col[row*ohw : (row+1)*ohw]
				row++
				s := shiftOf(ic, dr, or0, or1, kc)
				if s.d0 >= s.d1 {
					continue
				}
				if s.lo > 0 || s.hi < ic.ow {
					if referenceKernels&fastEdges == 0 {
						setEdges(src[or0*ic.ow:or1*ic.ow], ic.ow, s.lo, s.hi, negZero)
					} else {
						for or := or0; or < or1; or++ {
							r := src[or*ic.ow : (or+1)*ic.ow]
							for i := range r[:s.lo] {
								r[i] = negZero
							}
							for i := max(s.hi, s.lo); i < len(r); i++ {
								r[i] = negZero
							}
						}
					}
				}
				addTo(plane[s.d0+s.base:s.d1+s.base], src[s.d0:s.d1])
			}
		}
	}
}

// forward computes out [b, o, oh, ow] from the images x and the filter w
// [o, c*kh*kw].
func (cv *conv[T]) forward(x, w, out []T) {
	ic := &cv.ic
	k, ohw, img := ic.c*ic.kh*ic.kw, ic.oh*ic.ow, ic.c*ic.h*ic.w
	rows := cv.rowsPath()
	if rows != nil {
		rows.packFilter(w)
	}
	for b := 0; b < ic.b; b++ {
		if rows != nil {
			rows.forward(cv.gemm, x[b*img:(b+1)*img], out[b*cv.o*ohw:(b+1)*cv.o*ohw])
			continue
		}
		im2colImage(ic, x[b*img:(b+1)*img], cv.col)
		cv.gemm(blas.NoTrans, blas.NoTrans, cv.o, ohw, k, 1, w, k, cv.col, ohw, 0, out[b*cv.o*ohw:(b+1)*cv.o*ohw], ohw)
	}
}

// backward writes (or adds) the filter's adjoint dw and, when dx is not
// nil, the images' adjoint dx, from the output's adjoint dout.
func (cv *conv[T]) backward(x, w, dout, dw, dx []T, accW, accX bool) {
	ic := &cv.ic
	ohw, img := ic.oh*ic.ow, ic.c*ic.h*ic.w
	if dx != nil && !accX {
		clear(dx[:ic.b*img])
	}
	rows := cv.rowsPath()
	if rows != nil {
		rows.packFilter(w)
	}
	for b := 0; b < ic.b; b++ {
		cv.imageGrads(b, x, w, dout[b*cv.o*ohw:(b+1)*cv.o*ohw], dw, dx, cv.dcol, accW)
	}
	if rows != nil && dw != nil && ic.b > 0 {
		rows.unpackFilterGrad(dw, accW)
	}
}

// imageGrads adds image b's share of the filter's adjoint to dw (written,
// not added, for the first image unless accW) and adds its input's adjoint
// into dx (when not nil), given the image's output adjoint g; dcol is
// scratch of the unfolded image's size.
func (cv *conv[T]) imageGrads(b int, x, w, g, dw, dx, dcol []T, accW bool) {
	ic := &cv.ic
	k, ohw, img := ic.c*ic.kh*ic.kw, ic.oh*ic.ow, ic.c*ic.h*ic.w
	if rows := cv.rowsPath(); rows != nil {
		rows.imageGrads(cv.gemm, b, x[b*img:(b+1)*img], g, dw != nil, dx)
		return
	}
	if dw != nil {
		im2colImage(ic, x[b*img:(b+1)*img], cv.col)
		cv.gemm(blas.NoTrans, blas.Trans, cv.o, k, ohw, 1, g, ohw, cv.col, ohw, beta[T](accW || b > 0), dw, k)
	}
	if dx != nil {
		cv.gemm(blas.Trans, blas.NoTrans, k, ohw, cv.o, 1, w, k, g, ohw, 0, dcol, ohw)
		col2imImage(ic, dcol, dx[b*img:(b+1)*img])
	}
}

// addTo adds src to dst: runs of 16 or more through gonum's assembly axpy
// with alpha 1 (x*1 is exact, so the sums are addToRef's bit for bit),
// shorter ones four at a time.
func addTo[T float](dst, src []T) {
	if len(src) >= 16 && referenceKernels&fastColumns == 0 {
		switch s := any(src).(type) {
		case []float32:
			gonumblas.Implementation{}.Saxpy(len(s), 1, s, 1, any(dst).([]float32), 1)
			return
		case []float64:
			gonumblas.Implementation{}.Daxpy(len(s), 1, s, 1, any(dst).([]float64), 1)
			return
		}
	}
	addToRef(dst, src)
}

// convBlockKernel runs a convolution block image by image: the convolution
// GEMM into the pre-activation, the bias added, the ReLU, and the max
// pooling if any, each image's activations still in cache; backward, per
// image: the pooling's adjoint, the ReLU's mask, the bias sums, then the
// filter's and the input's products. The arithmetic is the unfused
// kernels', in the same order.
type convBlockKernel[T float] struct {
	conv    conv[T]
	pool    *maxPool // nil: no pooling
	scratch []T      // one image's [o, oh*ow] adjoint
	dcol    []T
}

func (cb *convBlockKernel[T]) forward(x, w, bias, pre, post, pooled []T) {
	cv := &cb.conv
	ic := &cv.ic
	k, ohw, img := ic.c*ic.kh*ic.kw, ic.oh*ic.ow, ic.c*ic.h*ic.w
	lowest := T(-math.MaxFloat32)
	if _, ok := any(lowest).(float64); ok {
		lowest = T(-math.Nextafter(math.Inf(1), 0))
	}
	rows := cv.rowsPath()
	if rows != nil {
		rows.packFilter(w)
	}
	for b := 0; b < ic.b; b++ {
		z := pre[b*cv.o*ohw : (b+1)*cv.o*ohw]
		if rows != nil {
			rows.forward(cv.gemm, x[b*img:(b+1)*img], z)
		} else {
			im2colImage(ic, x[b*img:(b+1)*img], cv.col)
			cv.gemm(blas.NoTrans, blas.NoTrans, cv.o, ohw, k, 1, w, k, cv.col, ohw, 0, z, ohw)
		}
		if mp := cb.pool; mp != nil && fuseReluPool(mp, z) {
			// The ReLU applied as the pooling reads z: no ReLU output
			// written (no one else reads it).
			po := mp.oh * mp.ow * mp.c
			if fuseBiasReluPool(mp) {
				biasReluPool2x2F32(mp, any(z).([]float32), any(bias).([]float32), any(pooled[b*po:(b+1)*po]).([]float32), mp.arg[b*po:(b+1)*po])
				continue
			}
			for o := 0; o < cv.o; o++ {
				zr, bo := z[o*ohw:(o+1)*ohw], bias[o]
				for i, v := range zr {
					zr[i] = v + bo
				}
			}
			maxPool2x2F32(mp, any(z).([]float32), any(pooled[b*po:(b+1)*po]).([]float32), mp.arg[b*po:(b+1)*po], mp.c, float32(lowest), true)
			continue
		}
		y := post[b*cv.o*ohw : (b+1)*cv.o*ohw]
		for o := 0; o < cv.o; o++ {
			zr, yr, bo := z[o*ohw:(o+1)*ohw], y[o*ohw:(o+1)*ohw], bias[o]
			for i, v := range zr {
				v += bo
				zr[i] = v
				yr[i] = max(v, 0)
			}
		}
		if mp := cb.pool; mp != nil {
			po := mp.oh * mp.ow * mp.c
			if mp.kh == 2 && mp.kw == 2 && mp.strideH == 2 && mp.strideW == 2 && mp.padH == 0 && mp.padW == 0 {
				maxPool2x2(mp, y, pooled[b*po:(b+1)*po], mp.arg[b*po:(b+1)*po], mp.c, lowest)
			} else {
				maxPoolForward(mp, y, pooled[b*po:(b+1)*po], mp.arg[b*po:(b+1)*po], mp.c)
			}
		}
	}
}

// backward reads the block's output adjoint dlast (the pooling's, or the
// ReLU's without pooling) and writes (or adds) the filter's, the bias's and,
// when dx is not nil, the input's adjoints.
func (cb *convBlockKernel[T]) backward(x, w, pre, dlast, dw, db, dx []T, accW, accB, accX bool) {
	cv := &cb.conv
	ic := &cv.ic
	ohw, img := ic.oh*ic.ow, ic.c*ic.h*ic.w
	if dx != nil && !accX {
		clear(dx[:ic.b*img])
	}
	rows := cv.rowsPath()
	if rows != nil {
		rows.packFilter(w)
		if dw != nil && ic.b > 0 {
			defer rows.unpackFilterGrad(dw, accW)
		}
	}
	g := cb.scratch
	for b := 0; b < ic.b; b++ {
		z := pre[b*cv.o*ohw : (b+1)*cv.o*ohw]
		switch mp := cb.pool; {
		case mp != nil && fusePoolRelu(mp, g):
			po := mp.oh * mp.ow * mp.c
			maxPool2x2ReluBackwardF32(mp, any(dlast[b*po:(b+1)*po]).([]float32), any(g).([]float32), mp.arg[b*po:(b+1)*po], mp.c, any(z).([]float32))
		case mp != nil:
			po := mp.oh * mp.ow * mp.c
			maxPoolBackward(mp, dlast[b*po:(b+1)*po], g, mp.arg[b*po:(b+1)*po], mp.c, false)
			reluMask(z, g)
		default:
			copy(g, dlast[b*cv.o*ohw:(b+1)*cv.o*ohw])
			reluMask(z, g)
		}
		if db != nil {
			biasSums(g, ohw, db[:cv.o], b > 0 || accB)
		}
		cv.imageGrads(b, x, w, g, dw, dx, cb.dcol, accW)
	}
}

// reluMask zeroes g[i] where !(z[i] >= 0) (z negative or NaN), without
// branches (a branch per unit mispredicts on half of them): z >= 0 exactly
// when z is a zero of either sign, or positive and not NaN.
func reluMask[T float](z, g []T) {
	switch z := any(z).(type) {
	case []float32:
		g := any(g).([]float32)[:len(z)]
		for i, v := range z {
			g[i] = math.Float32frombits(math.Float32bits(g[i]) & reluKeep32(v))
		}
	case []float64:
		g := any(g).([]float64)[:len(z)]
		for i, v := range z {
			bits := math.Float64bits(v)
			abs := bits & 0x7fffffffffffffff
			zero := (abs - 1) >> 63
			pos := ^bits >> 63
			num := ((0x7ff0000000000000 - abs) >> 63) ^ 1
			keep := -(zero | (pos & num))
			g[i] = math.Float64frombits(math.Float64bits(g[i]) & keep)
		}
	}
}

// maxPool2x2F32 is maxPool2x2 for float32 without data-dependent branches
// (on post-ReLU activations which of a window's four is largest is a coin
// toss, and a branch per comparison mispredicts often): each comparison
// selects the value's bits and index with conditional moves. The same
// comparisons in the same order, so the same maxima and argmaxes. With
// relu it pools max(in, 0), the ReLU's output, from the ReLU's input.
func maxPool2x2F32(mp *maxPool, in, out []float32, args []int32, planes int, lowest float32, relu bool) {
	low := math.Float32bits(lowest)
	for p := 0; p < planes; p++ {
		plane := in[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		o := out[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		for ph := 0; ph < mp.oh; ph++ {
			i0, i1 := int32(2*ph*mp.w), int32((2*ph+1)*mp.w)
			r0 := plane[i0 : int(i0)+mp.w]
			r1 := plane[i1 : int(i1)+mp.w]
			oo, aa := o[ph*mp.ow:(ph+1)*mp.ow], arg[ph*mp.ow:(ph+1)*mp.ow]
			for pw := range oo {
				w := 2 * pw
				v0, v1, v2, v3 := r0[w], r0[w+1], r1[w], r1[w+1]
				if relu {
					v0, v1, v2, v3 = max(v0, 0), max(v1, 0), max(v2, 0), max(v3, 0)
				}
				bits, at := low, int32(-1)
				bits, at = selectGreater(v0, bits, i0+int32(w), at)
				bits, at = selectGreater(v1, bits, i0+int32(w)+1, at)
				bits, at = selectGreater(v2, bits, i1+int32(w), at)
				bits, at = selectGreater(v3, bits, i1+int32(w)+1, at)
				oo[pw], aa[pw] = math.Float32frombits(bits), at
			}
		}
	}
}

// selectGreater returns v's bits and index i if v > the float32 of bits
// best, else best and at, with conditional moves.
func selectGreater(v float32, best uint32, i, at int32) (uint32, int32) {
	b := math.Float32bits(v)
	if v > math.Float32frombits(best) {
		best = b
		at = i
	}
	return best, at
}

// maxPool2x2BackwardF32 is maxPool2x2Backward for float32 without
// data-dependent branches: each input of a window gets the window's
// adjoint's bits masked by whether it is the argmax (v or +0, as the
// reference writes).
func maxPool2x2BackwardF32(mp *maxPool, dout, din []float32, args []int32, planes int) {
	for p := 0; p < planes; p++ {
		d := din[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		g := dout[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		for ph := 0; ph < mp.oh; ph++ {
			i0, i1 := 2*ph*mp.w, (2*ph+1)*mp.w
			r0, r1 := d[i0:i0+mp.w], d[i1:i1+mp.w]
			gg, aa := g[ph*mp.ow:(ph+1)*mp.ow], arg[ph*mp.ow:(ph+1)*mp.ow]
			for pw, v := range gg {
				w := 2 * pw
				b, a := math.Float32bits(v), int(aa[pw])
				r0[w] = math.Float32frombits(b & eqMask(a, i0+w))
				r0[w+1] = math.Float32frombits(b & eqMask(a, i0+w+1))
				r1[w] = math.Float32frombits(b & eqMask(a, i1+w))
				r1[w+1] = math.Float32frombits(b & eqMask(a, i1+w+1))
			}
		}
	}
}

// eqMask returns all ones if a == b, else 0, without a branch.
func eqMask(a, b int) uint32 {
	x := uint64(a ^ b)            // 0 exactly when equal
	return uint32((x|-x)>>63) - 1 // (x|-x) has its top bit set unless x == 0
}

// reluKeep32 returns all ones if z >= 0 (a zero of either sign, or
// positive and not NaN), else 0, without branches.
func reluKeep32(z float32) uint32 {
	bits := math.Float32bits(z)
	abs := bits & 0x7fffffff
	zero := (abs - 1) >> 31               // 1 for +-0
	pos := ^bits >> 31                    // 1 when the sign is clear
	num := ((0x7f800000 - abs) >> 31) ^ 1 // 1 unless NaN
	return -(zero | (pos & num))
}

// fuseReluPool reports whether a convolution block's forward pass pools
// its ReLU's output straight from the ReLU's float32 input
// (maxPool2x2F32 with relu): 2x2 windows of stride 2 without padding.
func fuseReluPool[T float](mp *maxPool, z []T) bool {
	_, f32 := any(z).([]float32)
	return f32 && referenceKernels&fastReluPool == 0 && mp.kh == 2 && mp.kw == 2 && mp.strideH == 2 && mp.strideW == 2 &&
		mp.padH == 0 && mp.padW == 0
}

// fusePoolRelu reports whether a convolution block's backward pass runs
// the pooling's adjoint and the ReLU's mask as one float32 pass
// (maxPool2x2ReluBackwardF32): 2x2 windows of stride 2 tiling the plane.
func fusePoolRelu[T float](mp *maxPool, g []T) bool {
	_, f32 := any(g).([]float32)
	return f32 && referenceKernels&fastPoolRelu == 0 && mp.kh == 2 && mp.kw == 2 && mp.strideH == 2 && mp.strideW == 2 &&
		mp.padH == 0 && mp.padW == 0 && mp.h == 2*mp.oh && mp.w == 2*mp.ow
}

// maxPool2x2ReluBackwardF32 is maxPool2x2Backward followed by reluMask
// with the ReLU's input z, in one pass: the planes cleared, then each
// window's argmax (if any) gets the window's adjoint masked by z >= 0
// there. Only the argmax can be nonzero after the pooling's adjoint, so
// the values are the two passes' bit for bit (and
// maxPool2x2ReluBackwardF32Windows's, which clears window by window).
func maxPool2x2ReluBackwardF32(mp *maxPool, dout, din []float32, args []int32, planes int, z []float32) {
	if referenceKernels&fastPoolScatter != 0 {
		maxPool2x2ReluBackwardF32Windows(mp, dout, din, args, planes, z)
		return
	}
	// The windows tile the planes (fusePoolRelu): clearing the planes
	// clears every window's four inputs.
	clear(din[:planes*mp.h*mp.w])
	for p := 0; p < planes; p++ {
		d := din[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		zp := z[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		g := dout[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg = arg[:len(g)]
		done := poolReluScatterVector(d, zp, g, arg)
		for j, v := range g[done:] {
			j += done
			if a := arg[j]; a >= 0 { // -1 only for a window of NaNs
				d[a] = math.Float32frombits(math.Float32bits(v) & reluKeep32(zp[a]))
			}
		}
	}
}

// biasSums writes (or, with acc, adds) into db[o] the sum of g's row o
// (rows of n): each row summed from its first entry to its last, as
// biasSumsRef does, but four rows at a time, so that four independent
// chains of additions overlap instead of each waiting on the one before.
// The same additions in the same order per row: the same sums bit for bit.
func biasSums[T float](g []T, n int, db []T, acc bool) {
	if referenceKernels&fastBiasSums != 0 {
		biasSumsRef(g, n, db, acc)
		return
	}
	o := 0
	for ; o+4 <= len(db); o += 4 {
		r0, r1, r2, r3 := g[o*n:(o+1)*n], g[(o+1)*n:(o+2)*n], g[(o+2)*n:(o+3)*n], g[(o+3)*n:(o+4)*n]
		var s0, s1, s2, s3 T
		for i := range r0 {
			s0 += r0[i]
			s1 += r1[i]
			s2 += r2[i]
			s3 += r3[i]
		}
		if acc {
			db[o] += s0
			db[o+1] += s1
			db[o+2] += s2
			db[o+3] += s3
		} else {
			db[o], db[o+1], db[o+2], db[o+3] = s0, s1, s2, s3
		}
	}
	biasSumsRef(g[o*n:], n, db[o:], acc)
}

// fuseBiasReluPool reports whether a convolution block whose forward
// pooling reads the ReLU's input (fuseReluPool) also adds the bias in the
// pooling's pass (biasReluPool2x2F32): 2x2 windows tiling the plane.
func fuseBiasReluPool(mp *maxPool) bool {
	return referenceKernels&fastBiasReluPool == 0 && mp.h == 2*mp.oh && mp.w == 2*mp.ow
}

// biasReluPool2x2F32 adds bias[p] to plane p of z in place (the
// pre-activation, which the backward pass reads) and pools the ReLU of
// the sums, 2x2 windows of stride 2 tiling the plane, in one pass: the
// values and argmaxes of the bias loop followed by maxPool2x2F32 with
// relu, bit for bit (the same additions, the same comparisons in the same
// order), with one pass over z instead of two; on AVX-512 the same
// operations 16 windows at a time (pool_amd64.s), bit for bit.
func biasReluPool2x2F32(mp *maxPool, z, bias, out []float32, args []int32) {
	if biasReluPoolVector(mp, z, bias, out, args) {
		return
	}
	low := math.Float32bits(-math.MaxFloat32)
	w := mp.w
	for p := range mp.c {
		plane := z[p*mp.h*w : (p+1)*mp.h*w]
		o := out[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		bp := bias[p]
		for ph := 0; ph < mp.oh; ph++ {
			i0, i1 := int32(2*ph*w), int32((2*ph+1)*w)
			r0, r1 := plane[i0:int(i0)+w], plane[i1:int(i1)+w]
			oo, aa := o[ph*mp.ow:(ph+1)*mp.ow], arg[ph*mp.ow:(ph+1)*mp.ow]
			aa = aa[:len(oo)]
			for pw := range oo {
				c := 2 * pw
				q0, q1 := r0[c:c+2:c+2], r1[c:c+2:c+2]
				v0, v1, v2, v3 := q0[0]+bp, q0[1]+bp, q1[0]+bp, q1[1]+bp
				q0[0], q0[1], q1[0], q1[1] = v0, v1, v2, v3
				bits, at := low, int32(-1)
				bits, at = selectGreater(max(v0, 0), bits, i0+int32(c), at)
				bits, at = selectGreater(max(v1, 0), bits, i0+int32(c)+1, at)
				bits, at = selectGreater(max(v2, 0), bits, i1+int32(c), at)
				bits, at = selectGreater(max(v3, 0), bits, i1+int32(c)+1, at)
				oo[pw], aa[pw] = math.Float32frombits(bits), at
			}
		}
	}
}

// setEdges sets entries [0, lo) and [max(hi, lo), w) of each row of rows
// (rows of w) to v: a column row's padding entries, a column of entries
// at a time (strided stores of fixed count, no loop per row).
func setEdges[T float](rows []T, w, lo, hi int, v T) {
	for i := 0; i < lo; i++ {
		for j := i; j < len(rows); j += w {
			rows[j] = v
		}
	}
	for i := max(hi, lo); i < w; i++ {
		for j := i; j < len(rows); j += w {
			rows[j] = v
		}
	}
}

// rowsMinK is the least number of channels times kernel columns for which
// a convolution runs on its kernel-row factorisation: each of its
// products has that inner dimension, and OpenBLAS's SGEMM runs short ones
// (LeNet's first convolution: 5) below its rate.
const rowsMinK = 64

// kernelRows is a convolution's kernel-row factorisation, for unit
// strides, no dilation and as many output columns as input columns (a
// "same" convolution in width, LeNet's and CNN3's): the product with the
// full columns [c*kh*kw, oh*ow] is split into kh products, one per kernel
// row kr, of the filter's entries of that row [o, c*kw] with the columns
// of a 1 x kw convolution of the vertically padded image, [c*kw,
// (h+2*padH)*ow], read from output row kr on (a column offset kr*ow with
// the leading dimension of the whole row): the same multiply-adds, on
// columns kh times smaller than im2colImage's, which are written once an
// image instead of kh times as many, and added back into the image's
// adjoint (col2im) kh times fewer. The sums run in another order than the
// full columns' (kernel row by kernel row), so the values differ from
// im2colImage's path in the last bits (TestKernelRowsMatchReference).
type kernelRows[T float] struct {
	icr     im2col // the 1 x kw convolution of a kernel row: kh 1, no vertical padding, oh = h
	kh, o   int
	ohw, ld int // the output's oh*ow; a row of xr: (h + 2*padH)*ow
	xr, dxr []T // [c*kw, ld]: one image's rows, vertically padded (the pads stay zero), and their adjoint
	wr, dwr []T // [kh][o, c*kw]: the filter by kernel row, and its adjoint summed over the images
}

// newKernelRows returns the kernel-row factorisation of the convolution
// ic with o output channels, or nil if it does not apply (or its products
// would be too short, rowsMinK).
func newKernelRows[T float](ic im2col, o int) *kernelRows[T] {
	if ic.strideH != 1 || ic.strideW != 1 || ic.dilH != 1 || ic.dilW != 1 || ic.ow != ic.w ||
		ic.oh+ic.kh-1 != ic.h+2*ic.padH || ic.c*ic.kw < rowsMinK {
		return nil
	}
	icr := ic
	icr.kh, icr.padH, icr.oh = 1, 0, ic.h
	ld := (ic.h + 2*ic.padH) * ic.ow
	ck := ic.c * ic.kw
	return &kernelRows[T]{icr: icr, kh: ic.kh, o: o, ohw: ic.oh * ic.ow, ld: ld,
		xr: make([]T, ck*ld), dxr: make([]T, ck*ld), wr: make([]T, ic.kh*o*ck), dwr: make([]T, ic.kh*o*ck)}
}

// packFilter copies the filter w [o, c*kh*kw] into wr, kernel row by
// kernel row.
func (k *kernelRows[T]) packFilter(w []T) {
	c, kw := k.icr.c, k.icr.kw
	ck, full := c*kw, c*k.kh*kw
	for r := 0; r < k.kh; r++ {
		for o := 0; o < k.o; o++ {
			dst, src := k.wr[(r*k.o+o)*ck:(r*k.o+o+1)*ck], w[o*full:(o+1)*full]
			for ch := 0; ch < c; ch++ {
				copy(dst[ch*kw:(ch+1)*kw], src[ch*k.kh*kw+r*kw:ch*k.kh*kw+(r+1)*kw])
			}
		}
	}
}

// unpackFilterGrad writes (or, with acc, adds) dwr into the filter's
// adjoint dw [o, c*kh*kw].
func (k *kernelRows[T]) unpackFilterGrad(dw []T, acc bool) {
	c, kw := k.icr.c, k.icr.kw
	ck, full := c*kw, c*k.kh*kw
	for r := 0; r < k.kh; r++ {
		for o := 0; o < k.o; o++ {
			src, dst := k.dwr[(r*k.o+o)*ck:(r*k.o+o+1)*ck], dw[o*full:(o+1)*full]
			for ch := 0; ch < c; ch++ {
				d, s := dst[ch*k.kh*kw+r*kw:ch*k.kh*kw+(r+1)*kw], src[ch*kw:(ch+1)*kw]
				if acc {
					for i, v := range s {
						d[i] += v
					}
				} else {
					copy(d, s)
				}
			}
		}
	}
}

// image writes one image's [c, h, w] rows into xr: row c*kw+kc holds,
// after padH*ow zeros, the plane shifted by kc-padW (im2colImage's shifted
// copy, its wrapped-around entries cleared), then padH*ow zeros.
func (k *kernelRows[T]) image(img []T) {
	ic := &k.icr
	hw, n := ic.h*ic.w, ic.h*ic.ow
	pad := (k.ld - n) / 2
	row := 0
	for ch := 0; ch < ic.c; ch++ {
		plane := img[ch*hw : (ch+1)*hw]
		for kc := 0; kc < ic.kw; kc++ {
			dst := k.xr[row*k.ld+pad : row*k.ld+pad+n]
			row++
			copyShift(dst, plane, shiftOf(ic, 0, 0, ic.h, kc), ic.ow, 0, ic.h)
		}
	}
}

// forward computes one image's output out [o, oh*ow]: its rows, then one
// product per kernel row, summed into out.
func (k *kernelRows[T]) forward(gemm gemmFunc[T], img, out []T) {
	k.image(img)
	ck, ow := k.icr.c*k.icr.kw, k.icr.ow
	for r := 0; r < k.kh; r++ {
		gemm(blas.NoTrans, blas.NoTrans, k.o, k.ohw, ck, 1, k.wr[r*k.o*ck:], ck, k.xr[r*ow:], k.ld, beta[T](r > 0), out, k.ohw)
	}
}

// imageGrads adds image b's share of the filter's adjoint into dwr
// (written for the first image) when withW, and adds its input's adjoint
// into dx (the whole batch's; nil: not wanted), given the image's output
// adjoint g [o, oh*ow].
func (k *kernelRows[T]) imageGrads(gemm gemmFunc[T], b int, img, g []T, withW bool, dx []T) {
	ic := &k.icr
	ck, ow := ic.c*ic.kw, ic.ow
	if withW {
		k.image(img)
		for r := 0; r < k.kh; r++ {
			gemm(blas.NoTrans, blas.Trans, k.o, ck, k.ohw, 1, g, k.ohw, k.xr[r*ow:], k.ld, beta[T](b > 0), k.dwr[r*k.o*ck:], ck)
		}
	}
	if dx == nil {
		return
	}
	clear(k.dxr)
	for r := 0; r < k.kh; r++ {
		gemm(blas.Trans, blas.NoTrans, ck, k.ohw, k.o, 1, k.wr[r*k.o*ck:], ck, g, k.ohw, 1, k.dxr[r*ow:], k.ld)
	}
	hw, n := ic.h*ic.w, ic.h*ic.ow
	pad := (k.ld - n) / 2
	negZero := T(math.Copysign(0, -1))
	img0 := dx[b*ic.c*hw : (b+1)*ic.c*hw]
	row := 0
	for ch := 0; ch < ic.c; ch++ {
		plane := img0[ch*hw : (ch+1)*hw]
		for kc := 0; kc < ic.kw; kc++ {
			src := k.dxr[row*k.ld+pad : row*k.ld+pad+n]
			row++
			s := shiftOf(ic, 0, 0, ic.h, kc)
			if s.d0 >= s.d1 {
				continue
			}
			if s.lo > 0 || s.hi < ic.ow {
				setEdges(src, ic.ow, s.lo, s.hi, negZero)
			}
			addTo(plane[s.d0+s.base:s.d1+s.base], src[s.d0:s.d1])
		}
	}
}

// maxPool2x2ReluBackwardF32Windows is maxPool2x2Backward followed by
// reluMask with the ReLU's input z, in one pass, window by window: each
// window's four inputs are cleared and its argmax (if any) gets the
// window's adjoint masked by z >= 0 there (the previous
// maxPool2x2ReluBackwardF32, kept for the A/B timing).
func maxPool2x2ReluBackwardF32Windows(mp *maxPool, dout, din []float32, args []int32, planes int, z []float32) {
	for p := 0; p < planes; p++ {
		d := din[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		zp := z[p*mp.h*mp.w : (p+1)*mp.h*mp.w]
		g := dout[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		arg := args[p*mp.oh*mp.ow : (p+1)*mp.oh*mp.ow]
		for ph := 0; ph < mp.oh; ph++ {
			i0, i1 := 2*ph*mp.w, (2*ph+1)*mp.w
			r0, r1 := d[i0:i0+mp.w], d[i1:i1+mp.w]
			gg, aa := g[ph*mp.ow:(ph+1)*mp.ow], arg[ph*mp.ow:(ph+1)*mp.ow]
			for pw, v := range gg {
				w := 2 * pw
				r0[w], r0[w+1], r1[w], r1[w+1] = 0, 0, 0, 0
				if a := aa[pw]; a >= 0 { // -1 only for a window of NaNs
					d[a] = math.Float32frombits(math.Float32bits(v) & reluKeep32(zp[a]))
				}
			}
		}
	}
}
