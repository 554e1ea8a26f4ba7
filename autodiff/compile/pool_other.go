//go:build !amd64 || noasm

package compile

// biasReluPoolVector runs nothing here: the Go loop pools every plane.
func biasReluPoolVector(mp *maxPool, z, bias, out []float32, args []int32) bool { return false }

// poolReluScatterVector scatters nothing here: the Go loop does every window.
func poolReluScatterVector(d, z, g []float32, arg []int32) int { return 0 }
