package driver

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// countingKernel is SGLD that counts its steps in State.Extra and shrinks
// its step as 1/(1 + count): a kernel whose transition depends on its own
// state.
type countingKernel struct{ sampler.SGLD }

func (k countingKernel) Init(s *sampler.State, rng *rand.Rand) {
	k.SGLD.Init(s, rng)
	s.Extra = uint64(0)
}

func (k countingKernel) Step(s *sampler.State, pot sampler.Potential, mb sampler.Minibatch, hp sampler.Hyper, rng *rand.Rand) error {
	temp := hp.Temp
	if temp == 0 {
		temp = 1
	}
	n := s.Extra.(uint64)
	s.Extra = n + 1
	return sampler.SGLD{StepSize: k.StepSize / float64(1+n), Tempering: k.Tempering}.Step(s, pot, sampler.Minibatch{}, sampler.At(temp), rng)
}

func (countingKernel) MarshalExtra(s *sampler.State) ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, s.Extra.(uint64)), nil
}

func (countingKernel) UnmarshalExtra(s *sampler.State, b []byte) error {
	if len(b) != 8 {
		return errors.New("want 8 bytes")
	}
	s.Extra = binary.LittleEndian.Uint64(b)
	return nil
}

// TestStatefulKernelResume steps a PT run of a stateful kernel, takes its
// Snapshot halfway, restores it into a fresh state (PT.Restore) and
// checks the rest of the run is the same bit for bit as without the break;
// a restore that drops the kernel's state does not.
func TestStatefulKernelResume(t *testing.T) {
	pot := &sampler.Gaussian{Mean: []float64{1, -1}, Var: []float64{1, 0.5}, NoiseVar: 0.1}
	pots := []sampler.Potential{pot, pot}
	run := func(breakAt int, keepExtra bool) []float64 {
		pt := testDriver(testPT{Kernel: countingKernel{sampler.SGLD{StepSize: 0.05}}, Temps: []float64{1, 2}, Workers: 1})
		st, err := pt.Init([][]float64{{0, 0}}, 7)
		if err != nil {
			t.Fatal(err)
		}
		step := func() {
			if err := pt.Step(pots, nil, st); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < breakAt; i++ {
			step()
		}
		// the one mapping out and back in (a checkpoint saves the snapshot)
		snap, err := st.Snapshot(pt.Kernel)
		if err != nil {
			t.Fatal(err)
		}
		if !keepExtra {
			for j := range snap.Rungs {
				snap.Rungs[j].Extra = binary.LittleEndian.AppendUint64(nil, 0)
			}
		}
		if st, err = pt.Restore(snap, 2); err != nil {
			t.Fatal(err)
		}
		for i := breakAt; i < 20; i++ {
			step()
		}
		return append([]float64(nil), st.Rungs[0].Theta...)
	}
	want := run(0, true)
	if got := run(10, true); got[0] != want[0] || got[1] != want[1] {
		t.Errorf("resumed at step 10: theta %v, uninterrupted %v", got, want)
	}
	if got := run(10, false); got[0] == want[0] && got[1] == want[1] {
		t.Errorf("a restore that resets the kernel's count gives the same theta %v: the test cannot see the kernel's state", got)
	}
}
