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

func newNormalSource(rng *rand.Rand) normalSource { return normalSource{state: rng.Uint64()} }

// uint32 returns 32 random bits.
func (n *normalSource) uint32() uint32 {
	if n.has {
		n.has = false
		return n.spare
	}
	n.state += 0xa0761d6478bd642f
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
		if zigF[i]+n.uniform()*(zigF[i-1]-zigF[i]) < math.Exp(-0.5*x*x) {
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
		n.state += 0xa0761d6478bd642f
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
