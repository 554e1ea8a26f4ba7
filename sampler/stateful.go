package sampler

import "fmt"

// StatefulKernel is a Kernel whose transition depends on state of its own
// beyond State's fields (Theta, P, Xi, U, the mass and noise scales): an
// adaptive moment, a step counter. The kernel keeps that state in
// State.Extra, which it sets in Init and updates in Step, and says how to
// write it down, so that a checkpoint of a PT run (its States and Streams)
// resumes it bit for bit. The kernels of Kernels keep no such state.
//
// Like momenta and thermostats, Extra stays with its rung when an exchange
// swaps positions.
type StatefulKernel interface {
	Kernel
	// MarshalExtra returns s.Extra as bytes; UnmarshalExtra(s, b) must set
	// s.Extra to an equal value.
	MarshalExtra(s *State) ([]byte, error)
	// UnmarshalExtra sets s.Extra from bytes MarshalExtra returned, or
	// returns an error saying why b cannot be the kernel's state (nil b:
	// a checkpoint that holds none).
	UnmarshalExtra(s *State, b []byte) error
}

// MarshalExtra returns the kernel-owned state of s as bytes: k's
// MarshalExtra when k is a StatefulKernel, else nil (nothing to save).
func MarshalExtra(k Kernel, s *State) ([]byte, error) {
	sk, ok := k.(StatefulKernel)
	if !ok {
		return nil, nil
	}
	b, err := sk.MarshalExtra(s)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: save its state: %w", k.Name(), err)
	}
	return b, nil
}

// UnmarshalExtra restores the kernel-owned state of s from b, which
// MarshalExtra returned for the same kernel. A kernel that keeps no state
// accepts only empty b: bytes for it mean the state was saved by another
// kernel.
func UnmarshalExtra(k Kernel, s *State, b []byte) error {
	sk, ok := k.(StatefulKernel)
	if !ok {
		if len(b) > 0 {
			return fmt.Errorf("kernel %s keeps no state of its own, but %d bytes of kernel state were saved (by another kernel?)", k.Name(), len(b))
		}
		return nil
	}
	if err := sk.UnmarshalExtra(s, b); err != nil {
		return fmt.Errorf("kernel %s: restore its state: %w", k.Name(), err)
	}
	return nil
}
