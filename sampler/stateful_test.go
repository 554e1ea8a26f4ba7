package sampler

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// countingKernel is SGLD that counts its steps in State.Extra and shrinks
// its step as 1/(1 + count): a kernel whose transition depends on its own
// state.
type countingKernel struct{ SGLD }

func (k countingKernel) Init(s *State, rng *rand.Rand) { k.SGLD.Init(s, rng); s.Extra = uint64(0) }

func (k countingKernel) Step(s *State, pot Potential, mb Minibatch, hp Hyper, rng *rand.Rand) error {
	temp := hp.Temp
	if temp == 0 {
		temp = 1
	}
	n := s.Extra.(uint64)
	s.Extra = n + 1
	return SGLD{StepSize: k.StepSize / float64(1+n), Tempering: k.Tempering}.Step(s, pot, Minibatch{}, At(temp), rng)
}

func (countingKernel) MarshalExtra(s *State) ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, s.Extra.(uint64)), nil
}

func (countingKernel) UnmarshalExtra(s *State, b []byte) error {
	if len(b) != 8 {
		return errors.New("want 8 bytes")
	}
	s.Extra = binary.LittleEndian.Uint64(b)
	return nil
}

// TestUnmarshalExtraRefuses checks that saved kernel state is refused by a
// kernel that keeps none, and a kernel's own refusal is passed on.
func TestUnmarshalExtraRefuses(t *testing.T) {
	cases := []struct {
		name string
		k    Kernel
		b    []byte
		want string // "" for no error
	}{
		{"stateless, none saved", SGNHT{}, nil, ""},
		{"stateless, state saved", SGNHT{}, []byte{1}, "keeps no state"},
		{"stateful, good", countingKernel{}, make([]byte, 8), ""},
		{"stateful, bad", countingKernel{}, []byte{1}, "want 8 bytes"},
	}
	for _, c := range cases {
		err := UnmarshalExtra(c.k, NewState([]float64{0}), c.b)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
