package sampler

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// normalSource draws standard normal variates quickly for the kernels'
// injected noise, which for a network needs one draw per parameter per step
// (about 5 million a step for 10 replicas of 784-400-400-10). It is the
// ziggurat method of Marsaglia and Tsang (2000), 128 layers, on 32-bit
// halves of wyrand outputs, seeded from the replica's stream at each update,
// so results stay a function of the seed. BenchmarkNormals compares it with
// (*rand.Rand).NormFloat64.
type normalSource struct {
	state uint64
	spare uint32
	has   bool
}

// wyIncrement is wyrand's increment of its state per 64-bit output.
const wyIncrement = 0xa0761d6478bd642f

// vectorNormals lets fill draw the common case in vector registers where
// the CPU can (zigFastBlocks): the same variates, faster. Tests turn it off
// to compare.
var vectorNormals = true

// vectorUpdate lets the unit-mass SGNHT and SGHMC update run in vector
// registers where the CPU can (unitUpdateBlocks): the same bits, faster.
// Tests turn it off to compare.
var vectorUpdate = true

func newNormalSource(rng *rand.Rand) normalSource { return normalSource{state: rng.Uint64()} }

// uint32 returns 32 random bits.
func (n *normalSource) uint32() uint32 {
	if n.has {
		n.has = false
		return n.spare
	}
	n.state += wyIncrement
	hi, lo := bits.Mul64(n.state, n.state^0xe7037ed1a0b428db)
	v := hi ^ lo
	n.spare, n.has = uint32(v>>32), true
	return uint32(v)
}

// uniform returns a float64 in (0, 1).
func (n *normalSource) uniform() float64 { return (float64(n.uint32()) + 0.5) / (1 << 32) }

const zigR = 3.442619855899 // start of the right tail

var (
	zigK [128]uint32
	zigW [128]float64
	zigF [128]float64
	// Layer i's wedge (the points the fast test does not accept) spans
	// |x| in [zigA[i], zigB[i]], where the density falls from zigF[i-1] to
	// zigF[i]; zigS[i] is the slope of the chord between the two.
	zigA, zigB, zigS [128]float64
)

func init() {
	const m1 = 2147483648.0
	const vn = 9.91256303526217e-3
	dn, tn := zigR, zigR
	q := vn / math.Exp(-0.5*dn*dn)
	zigK[0] = uint32(dn / q * m1)
	zigK[1] = 0
	zigW[0] = q / m1
	zigW[127] = dn / m1
	zigF[0] = 1
	zigF[127] = math.Exp(-0.5 * dn * dn)
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(vn/dn+math.Exp(-0.5*dn*dn)))
		zigK[i+1] = uint32(dn / tn * m1)
		tn = dn
		zigF[i] = math.Exp(-0.5 * dn * dn)
		zigW[i] = dn / m1
	}
	for i := 1; i < 128; i++ {
		zigB[i] = zigW[i] * m1
		if i > 1 { // the top layer's wedge starts at 0, where f = zigF[0] = 1
			zigA[i] = zigW[i-1] * m1
		}
		zigS[i] = (zigF[i] - zigF[i-1]) / (zigB[i] - zigA[i])
	}
}

// zigSqueeze decides, for a point (x, y) of layer i's wedge with t = |x|,
// whether y < exp(-x^2/2), from lines that bound the density on the wedge,
// without computing the exponential; decided is false when the point lies
// too near the density for the lines to tell. Beyond x = 1 the density is
// convex: its chord over the wedge lies above it and its tangents at the
// wedge's ends below; within x = 1 it is concave and the roles swap. The
// margin (1e-9, against densities of at least zigF[127] = 0.0027) keeps
// the lines' rounding from deciding a point the exponential would decide
// otherwise, so the variates are exactly those of the exponential test
// (TestZigSqueeze). About four wedge points in five are decided here; the
// wedge is reached by 2.8% of draws, and its exponentials took a third of
// the noise's time.
func zigSqueeze(i int32, t, y float64) (accept, decided bool) {
	const margin = 1e-9
	a, b := zigA[i], zigB[i]
	fa, fb := zigF[i-1], zigF[i]
	chord := fa + zigS[i]*(t-a)
	ta, tb := fa*(1-a*(t-a)), fb*(1+b*(b-t)) // tangents at a and b
	switch {
	case a >= 1: // convex
		if y > chord+margin {
			return false, true
		}
		if y < max(ta, tb)-margin {
			return true, true
		}
	case b <= 1: // concave
		if y < chord-margin {
			return true, true
		}
		if y > min(ta, tb)+margin {
			return false, true
		}
	}
	return false, false
}

// norm returns a standard normal variate.
func (n *normalSource) norm() float64 { return n.normFrom(int32(n.uint32())) }

// zigFast returns the ziggurat's candidate for the 32 random bits j and
// whether it is accepted at once (about 98.8% of draws: the point lies in
// the rectangle of its layer).
func zigFast(j int32) (float64, bool) {
	i := j & 127
	aj := uint32(j)
	if j < 0 {
		aj = uint32(-j)
	}
	return float64(j) * zigW[i], aj < zigK[i]
}

// normFrom returns a standard normal variate whose first 32 random bits
// are j; further bits, when the ziggurat needs them, come from n.
func (n *normalSource) normFrom(j int32) float64 {
	for {
		x, ok := zigFast(j)
		if ok {
			return x
		}
		i := j & 127
		if i == 0 {
			// tail beyond zigR
			for {
				t := -math.Log(n.uniform()) / zigR
				y := -math.Log(n.uniform())
				if y+y >= t*t {
					if j > 0 {
						return zigR + t
					}
					return -zigR - t
				}
			}
		}
		y := zigF[i] + n.uniform()*(zigF[i-1]-zigF[i])
		if accept, decided := zigSqueeze(i, math.Abs(x), y); decided {
			if accept {
				return x
			}
		} else if y < math.Exp(-0.5*x*x) {
			return x
		}
		j = int32(n.uint32())
	}
}

// fill writes standard normal variates into dst: the same variates, in the
// same order, as len(dst) calls of norm, but about twice as fast. Each
// 64-bit output of the generator gives two candidates that the loop tests
// without the spare-half bookkeeping, so successive iterations overlap in
// the CPU; the rare rejection falls back to normFrom.
func (n *normalSource) fill(dst []float64) {
	for i := 0; i < len(dst); {
		if n.has { // a half left over by the last call or a rejection
			dst[i] = n.norm()
			i++
			continue
		}
		if k := n.zigFastBlocks(dst[i:]); k > 0 {
			// the draws whose candidates all pass the fast test, 8 at a
			// time in vector registers (zigfill_amd64.s); the draw that
			// stopped them is the loop's below
			i += k
			continue
		}
		n.state += wyIncrement
		hi, lo := bits.Mul64(n.state, n.state^0xe7037ed1a0b428db)
		v := hi ^ lo
		j0, j1 := int32(uint32(v)), int32(uint32(v>>32))
		x, ok := zigFast(j0)
		if !ok {
			n.spare, n.has = uint32(j1), true
			dst[i] = n.normFrom(j0)
			i++
			continue
		}
		dst[i] = x
		i++
		if i == len(dst) {
			n.spare, n.has = uint32(j1), true
			return
		}
		if x, ok = zigFast(j1); !ok {
			x = n.normFrom(j1)
		}
		dst[i] = x
		i++
	}
}
