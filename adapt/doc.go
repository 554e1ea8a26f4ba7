// Package adapt holds the burn-in's adaptations of each chain's kernel
// that are not parallel tempering's: the mass (diagonal, dense or
// low-rank) estimated over windows of the burn-in and then frozen (Mass,
// Preconditioner, MassScale, MassEstimate; DenseMassOf, LowRankMassOf,
// Subspace) and the per-coordinate noise correction set at
// its end (Noise, NoiseEstimate, InjectionScale). Each is plain settings
// with methods that a driver stepping the chains (driver.Driver: its Mass and NoiseCorrection phases) calls
// around each step: Validate, Start, Check (a restored state), Arm
// (before a step) and Update (after it). Their estimates are plain data
// that a checkpoint saves. Nothing adapts after burn-in but a noise
// correction that tracks the noise (Noise.Track), and that only in the
// injected noise.
package adapt
