// Package convert holds the passes an evaluator makes over the flat
// parameter vector between float64 (the sampler's) and its own element type,
// and the priors' part of U~: loading theta while summing the Gaussian
// prior's squares, writing the gradient with the Gaussian prior's added,
// and adding the priors in separate passes for an evaluator that computed
// the likelihood alone (WithPrior). autodiff's evaluators (the plan, the
// graph on the VM, the sharded evaluator) and the compiled graph
// (autodiff/compile) share them, so all compute the prior the same way.
package convert

import "github.com/ptsghmc/ptsghmc/nn"

// StreamChunk is how many coordinates of the gradient an evaluator's
// EvalStream hands over at a time: with the matching chunks of theta and
// p, within L1.
const StreamChunk = 256

// vectorPasses lets SumSquares and AddPriorGrad run their float32 passes in
// vector registers where the CPU can: the same bits. Tests turn it off to
// compare.
var vectorPasses = true

// Float is an evaluator's element type.
type Float interface{ ~float32 | ~float64 }

// SumSquares writes src into dst converted to T and returns the sum of
// the squares of src (the Gaussian prior's), in one pass. Four partial sums
// in a fixed order, and four-element windows the compiler can check once,
// let the loop run at the speed of its loads and stores rather than of one
// chain of dependent additions: 0.44 -> 0.19 ms for 478,410 parameters. The
// sum can differ from a single running sum (nn.Prior.NegLogDensity's) in
// its last bits.
func SumSquares[T Float](dst []T, src []float64) float64 {
	dst = dst[:len(src)]
	var s0, s1, s2, s3 float64
	i := 0
	if d32, ok := any(dst).([]float32); ok {
		// the leading multiple of 8 in vector registers where the CPU can:
		// the same conversions and partial sums (convert_amd64.s)
		sums := [4]float64{}
		i = sumSquares32Blocks(d32, src, &sums)
		s0, s1, s2, s3 = sums[0], sums[1], sums[2], sums[3]
	}
	for ; i+4 <= len(src); i += 4 {
		s, d := src[i:i+4:i+4], dst[i:i+4:i+4]
		d[0], d[1], d[2], d[3] = T(s[0]), T(s[1]), T(s[2]), T(s[3])
		s0 += s[0] * s[0]
		s1 += s[1] * s[1]
		s2 += s[2] * s[2]
		s3 += s[3] * s[3]
	}
	for ; i < len(src); i++ {
		dst[i] = T(src[i])
		s0 += src[i] * src[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Features writes the features src (a data set's float32 rows) into dst
// in T, the values T(v) gives: for float32 a copy of the bits (a memmove,
// where the element-by-element loop took 2% of a one-chain MLP step), for
// float64 the exact conversion.
func Features[T Float](dst []T, src []float32) {
	if d32, ok := any(dst).([]float32); ok {
		copy(d32[:len(src)], src)
		return
	}
	dst = dst[:len(src)]
	for j, v := range src {
		dst[j] = T(v)
	}
}

// AddPriorGrad writes the likelihood's gradient g plus the Gaussian prior's,
// lam theta, into out, in float64: the values nn.Prior.AddGrad would give
// after g was written into out.
func AddPriorGrad[T Float](out []float64, g []T, theta []float64, lam float64) {
	g, theta = g[:len(out)], theta[:len(out)]
	i := 0
	if g32, ok := any(g).([]float32); ok {
		i = addPriorGrad32Blocks(out, g32, theta, lam)
	}
	for ; i < len(g); i++ {
		out[i] = float64(g[i]) + lam*theta[i]
	}
}

// SumSq returns the sum of the squares of src in SumSquares' four partial
// sums (the same value SumSquares returns for src).
func SumSq(src []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(src); i += 4 {
		s := src[i : i+4 : i+4]
		s0 += s[0] * s[0]
		s1 += s[1] * s[1]
		s2 += s[2] * s[2]
		s3 += s[3] * s[3]
	}
	for ; i < len(src); i++ {
		s0 += src[i] * src[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// GaussianLayout reports whether every learnable of l has a Gaussian prior.
func GaussianLayout(l nn.Layout) bool {
	for _, p := range l {
		if p.Prior.DF != 0 {
			return false
		}
	}
	return true
}

// NegLogPrior returns the Gaussian priors' -log p(theta) of layout l,
// learnable by learnable as nn.Layout.NegLogPrior sums it, each
// learnable's squares in SumSq's four partial sums (so it can differ from
// nn.Layout.NegLogPrior in the last bits). Every prior must be Gaussian.
func NegLogPrior(l nn.Layout, theta []float64) float64 {
	u := 0.0
	for _, p := range l {
		u += 0.5 * p.Prior.Precision * SumSq(theta[p.Offset:p.Offset+p.Size()])
	}
	return u
}

// WithPrior returns U~ = -log p(theta) - scale*sumLL for a likelihood sum
// sumLL over a minibatch, with layout l's priors summed as
// nn.Layout.NegLogPrior does, and adds their gradient to grad when it is
// not nil: what an evaluator that computed the likelihood's part alone adds
// in separate passes.
func WithPrior(l nn.Layout, theta, grad []float64, scale, sumLL float64) float64 {
	if grad != nil {
		l.AddNegLogPriorGrad(theta, grad)
	}
	return l.NegLogPrior(theta) - scale*sumLL
}
