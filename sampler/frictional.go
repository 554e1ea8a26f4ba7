package sampler

// Frictional is a kernel whose momentum update is
//
//	p <- exp(-xi h) p - h grad U~(theta)/T + sqrt(InjectedVariance(A, h)) N(0, I)
//
// (SGHMC, with xi = A = C, and SGNHT): a kernel whose dynamics package
// health can watch (health.Health), and whose step a noise-aware run can
// shrink.
type Frictional interface {
	Kernel
	// Dynamics returns the step size h and the injected diffusion A.
	Dynamics() (h, a float64)
	// At returns the kernel stepping at h, as Step steps given
	// Hyper.StepSize h: the same friction per step (A h, and so the
	// injected noise per step).
	At(h float64) Kernel
}
