// Package dense is the arithmetic of an MLP (nn.Spec): its dense layers'
// products, bias, activations and their adjoints, and its likelihoods'
// per-example values and output adjoints. autodifftest.Plan and the compiled
// graph of an nn.Spec MLP (autodiff/compile) both compute with it, so the
// two engines compute the same values bit for bit (the same operations in
// the same order) and a run can move from one to the other.
//
// The likelihoods are computed in float64 from the element type's logits
// (log-sum-exp over float64 exponentials of T differences), and the output
// adjoint rounded to T once per coordinate; the activations' derivatives
// are taken from their outputs (a ReLU passes its adjoint where its output
// is not zero).
package dense

import (
	"github.com/ptsghmc/ptsghmc/autodiff/internal/convert"
	"math"

	"github.com/ptsghmc/ptsghmc/nn"
	"gonum.org/v1/gonum/blas"
)

// vectorPasses lets the float32 passes (the bias's addition and sums, the
// ReLU and its adjoint) run in vector registers where the CPU can
// (dense_amd64.s): the same bits as the Go loops. Tests turn it off to
// compare.
var vectorPasses = true

// Float is the element type of a layer's buffers.
type Float interface{ ~float32 | ~float64 }

// Gemm is a BLAS matrix product C = alpha op(A) op(B) + beta C on
// row-major operands (blas32's Sgemm or blas64's Dgemm).
type Gemm[T Float] func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// Forward computes one layer for n examples: out = in W + b (in n x nIn, W
// nIn x nOut, out n x nOut, row-major), then, with activate, the
// activation in place, row by row.
func Forward[T Float](gemm Gemm[T], act nn.Activation, activate bool, in, w, b, out []T, n, nIn, nOut int) {
	out = out[:n*nOut]
	gemm(blas.NoTrans, blas.NoTrans, n, nOut, nIn, 1, in[:n*nIn], nIn, w, nOut, 0, out, nOut)
	b = b[:nOut]
	relu := activate && act == nn.ReLU
	for r := 0; r < n; r++ {
		z := out[r*nOut : (r+1)*nOut]
		if relu && biasRelu(z, b) {
			continue
		}
		addTo(z, b)
		if activate {
			Activate(act, z)
		}
	}
}

// addTo adds src to dst element by element (dst[j] += src[j]).
func addTo[T Float](dst, src []T) {
	if d32, ok := any(dst).([]float32); ok && addTo32(d32, any(src).([]float32)) {
		return
	}
	src = src[:len(dst)]
	for j := range dst {
		dst[j] += src[j]
	}
}

// biasRelu adds b to z and applies the ReLU in one vector pass, when it
// can (float32 on a CPU with AVX-512); it reports whether it did.
func biasRelu[T Float](z, b []T) bool {
	z32, ok := any(z).([]float32)
	return ok && biasRelu32(z32, any(b).([]float32))
}

// Backward computes one layer's adjoints from its output's adjoint delta
// (n x nOut, already multiplied by the activation's derivative): the
// weights' gW = in^T delta, the biases' gb = the sum of delta's rows (from
// the first row to the last) and, when din is not nil, the input's
// din = delta W^T (not multiplied by the previous activation's derivative:
// ActivateGrad does that).
func Backward[T Float](gemm Gemm[T], in, w, delta, gw, gb, din []T, n, nIn, nOut int) {
	delta = delta[:n*nOut]
	gemm(blas.Trans, blas.NoTrans, nIn, nOut, n, 1, in[:n*nIn], nIn, delta, nOut, 0, gw, nOut)
	gb = gb[:nOut]
	clear(gb)
	for r := 0; r < n; r++ {
		addTo(gb, delta[r*nOut:(r+1)*nOut])
	}
	if din != nil {
		gemm(blas.NoTrans, blas.Trans, n, nIn, nOut, 1, delta, nOut, w, nOut, 0, din[:n*nIn], nIn)
	}
}

// Activate applies the activation to z in place.
func Activate[T Float](a nn.Activation, z []T) {
	switch a {
	case nn.ReLU:
		if z32, ok := any(z).([]float32); ok && relu32(z32) {
			return
		}
		for j, v := range z {
			z[j] = max(v, 0) // branch-free: half the signs are unpredictable
		}
	case nn.Tanh:
		for j, v := range z {
			z[j] = T(math.Tanh(float64(v)))
		}
	case nn.Sigmoid:
		for j, v := range z {
			z[j] = T(1 / (1 + math.Exp(-float64(v))))
		}
	}
}

// ActivateGrad multiplies delta by the activation's derivative, expressed
// through the activation's output a.
func ActivateGrad[T Float](act nn.Activation, a, delta []T) {
	switch act {
	case nn.ReLU:
		reluGrad(a, delta)
	case nn.Tanh:
		for j, v := range a {
			delta[j] *= 1 - v*v
		}
	case nn.Sigmoid:
		for j, v := range a {
			delta[j] *= v * (1 - v)
		}
	}
}

// reluGrad zeroes delta where the ReLU's output a is zero, without
// branches (a branch per unit mispredicts on half of them and took 3x as
// long). a is a ReLU output: +0, positive, or NaN (kept, as v <= 0 keeps it).
func reluGrad[T Float](a, delta []T) {
	switch a := any(a).(type) {
	case []float32:
		d := any(delta).([]float32)[:len(a)]
		if reluGrad32(a, d) {
			return
		}
		for j, v := range a {
			t := math.Float32bits(v) & 0x7fffffff
			keep := uint32(int32(t|-t) >> 31) // all ones when v != 0
			d[j] = math.Float32frombits(math.Float32bits(d[j]) & keep)
		}
	case []float64:
		d := any(delta).([]float64)[:len(a)]
		for j, v := range a {
			t := math.Float64bits(v) & 0x7fffffffffffffff
			keep := uint64(int64(t|-t) >> 63)
			d[j] = math.Float64frombits(math.Float64bits(d[j]) & keep)
		}
	}
}

// Categorical returns the categorical log-likelihood of class y under
// logits z, log softmax(z)_y, and the log-sum-exp it subtracts, in float64:
// the maximum m of z, the sum of exp(z_j - m) with z_j - m in T, lse = m +
// log of that sum.
func Categorical[T Float](z []T, y int) (ll, lse float64) {
	m := z[0]
	for _, v := range z {
		m = max(m, v)
	}
	var se float64
	for _, v := range z {
		se += math.Exp(float64(v - m))
	}
	lse = float64(m) + math.Log(se)
	return float64(z[y]) - lse, lse
}

// CategoricalGrad writes into dz the adjoint of the logits z of -s times
// Categorical's log-likelihood: s softmax(z) - s onehot(y), each
// probability exp(z_j - lse) rounded to T before it is scaled.
func CategoricalGrad[T Float](z, dz []T, y int, lse float64, s T) {
	dz = dz[:len(z)]
	for j, v := range z {
		dz[j] = s * T(math.Exp(float64(v)-lse))
	}
	dz[y] -= s
}

// Gaussian returns the Gaussian log-likelihood of the targets t under
// predictions z with precision inv = 1/sd^2, in float64: -inv/2 times the
// squared errors, accumulated one coordinate after another, plus logNorm.
func Gaussian[T, U Float](z []T, t []U, inv, logNorm float64) float64 {
	var ll float64
	for j, v := range z {
		e := float64(v) - float64(t[j])
		ll -= 0.5 * inv * e * e
	}
	return ll + logNorm
}

// GaussianGrad writes into dz the adjoint of the predictions z of -s times
// Gaussian's log-likelihood: s inv (z - t), rounded to T before it is
// scaled.
func GaussianGrad[T, U Float](z, dz []T, t []U, inv float64, s T) {
	dz = dz[:len(z)]
	for j, v := range z {
		e := float64(v) - float64(t[j])
		dz[j] = s * T(inv*e)
	}
}

// LoadTheta writes theta into an MLP's weights w (its layers' weights and
// biases in theta's layout) in T; with gaussPrior it returns the Gaussian
// prior's -log p(theta), summed layer by layer over each layer's weights
// and biases together (convert.SumSquares' four partial sums), each sum
// times precision(l)/2, as nn.Spec.NegLogPrior defines it.
func LoadTheta[T Float](layers []nn.Layer, precision func(int) float64, w []T, theta []float64, gaussPrior bool) float64 {
	if !gaussPrior {
		for i, v := range theta {
			w[i] = T(v)
		}
		return 0
	}
	prior := 0.0
	for l, ly := range layers {
		prior += 0.5 * precision(l) * convert.SumSquares(w[ly.W:ly.B+ly.Out], theta[ly.W:ly.B+ly.Out])
	}
	return prior
}

// WriteGrad writes an MLP's gradient into grad from the likelihood's
// gradient g (theta's layout, in T), with gaussPrior the Gaussian prior's
// added layer by layer (convert.AddPriorGrad at precision(l)).
func WriteGrad[T Float](layers []nn.Layer, precision func(int) float64, g []T, theta, grad []float64, gaussPrior bool) {
	if !gaussPrior {
		for i, v := range g {
			grad[i] = float64(v)
		}
		return
	}
	for l, ly := range layers {
		convert.AddPriorGrad(grad[ly.W:ly.B+ly.Out], g[ly.W:ly.B+ly.Out], theta[ly.W:ly.B+ly.Out], precision(l))
	}
}

// StreamGrad is WriteGrad with the Gaussian prior, handing the gradient to
// consume in consecutive chunks of at most convert.StreamChunk coordinates,
// layer by layer, written into buf (the same values, computed the same
// way) instead of into a gradient vector; consume may change theta's chunk
// and must keep no reference to the chunk.
func StreamGrad[T Float](layers []nn.Layer, precision func(int) float64, g []T, theta []float64, buf *[convert.StreamChunk]float64, consume func(lo int, g []float64)) {
	for l, ly := range layers {
		lam := precision(l)
		for lo := ly.W; lo < ly.B+ly.Out; lo += convert.StreamChunk {
			hi := min(lo+convert.StreamChunk, ly.B+ly.Out)
			out := buf[:hi-lo]
			convert.AddPriorGrad(out, g[lo:hi], theta[lo:hi], lam)
			consume(lo, out)
		}
	}
}
