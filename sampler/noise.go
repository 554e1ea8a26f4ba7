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
func (n *normalSource) norm() float64 {
	for {
		j := int32(n.uint32())
		i := j & 127
		x := float64(j) * zigW[i]
		aj := uint32(j)
		if j < 0 {
			aj = uint32(-j)
		}
		if aj < zigK[i] {
			return x
		}
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
	}
}
