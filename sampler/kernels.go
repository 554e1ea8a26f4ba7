package sampler

// KernelParams are the settings a kernel of Kernels is built from. Each
// kernel reads the fields it has and ignores the others; a caller that
// offers several kernels sets them all.
type KernelParams struct {
	StepSize  float64 // h: SGNHT, SGHMC, SGD, HMC
	Diffusion float64 // A: SGNHT's injected diffusion, the friction C of SGHMC and SGD
	// FrictionPerStep is alpha = A h, kept by SGNHT, SGHMC and SGD when
	// Hyper.StepSize changes their step (0: Diffusion StepSize). Rate.Params
	// sets StepSize, Diffusion, FrictionPerStep and SGLDStep from a run's
	// learning rate.
	FrictionPerStep float64
	Inertia         float64 // Q: SGNHT's thermostat inertia (0: 1/A^2)
	SGLDStep        float64 // eps: SGLD's step size
	Leapfrog        int     // L: HMC's leapfrog steps
	// Tempering: how SGNHT, SGHMC and SGLD target exp(-U/T) at T != 1
	// (the zero value tempers the noise; see Tempering).
	Tempering Tempering
}

// KernelInfo is a kernel's entry in the registry Kernels.
type KernelInfo struct {
	Name string // the kernel's Name(): what a run's sampler setting says
	Doc  string // one line for help texts
	// Sampler is false for an optimiser, whose chain converges to a mode
	// of U instead of sampling exp(-U/T) (SGD): a run keeps its final
	// state alone.
	Sampler bool
	// Minibatch reports whether the kernel is meant for minibatch
	// gradients. HMC's Metropolis test assumes exact energies (on noisy
	// ones it is the biased baseline of the PT-SGHMC paper), so a training
	// run does not offer it.
	Minibatch bool
	// New returns the kernel with the given settings.
	New func(KernelParams) Kernel
}

// Kernels is the registry of the single-chain kernels a run can name, in
// the order help texts list them. Every list of kernel names (a config's
// validation, a command's flag help) derives from it.
//
// Parallel tempering is not a kernel but a driver: tempering.PT steps a ladder of
// replicas of one kernel. The sampler name "ptsghmc" that runs and commands
// accept (runspec.PTSGHMC) is PT over replicas of the sgnht kernel, PT-SGHMC
// as in Luo, Zhang and Liu (2018); it is not listed here.
var Kernels = []KernelInfo{
	{Name: "sgnht", Doc: "stochastic gradient Nose-Hoover thermostat (Ding et al. 2014)", Sampler: true, Minibatch: true,
		New: func(p KernelParams) Kernel {
			return SGNHT{StepSize: p.StepSize, Diffusion: p.Diffusion, Inertia: p.Inertia, FrictionPerStep: p.FrictionPerStep, Tempering: p.Tempering}
		}},
	{Name: "sghmc", Doc: "stochastic gradient HMC with a fixed friction (Chen et al. 2014)", Sampler: true, Minibatch: true,
		New: func(p KernelParams) Kernel {
			return SGHMC{StepSize: p.StepSize, Friction: p.Diffusion, FrictionPerStep: p.FrictionPerStep, Tempering: p.Tempering}
		}},
	{Name: "sgld", Doc: "stochastic gradient Langevin dynamics (Welling and Teh 2011)", Sampler: true, Minibatch: true,
		New: func(p KernelParams) Kernel { return SGLD{StepSize: p.SGLDStep, Tempering: p.Tempering} }},
	{Name: "hmc", Doc: "Hamiltonian Monte Carlo with a Metropolis test (Neal 2011)", Sampler: true, Minibatch: false,
		New: func(p KernelParams) Kernel { return HMC{StepSize: p.StepSize, Leapfrog: p.Leapfrog} }},
	{Name: "sgd", Doc: "momentum SGD, not a sampler: the non-Bayesian MAP baseline", Sampler: false, Minibatch: true,
		New: func(p KernelParams) Kernel {
			return SGD{StepSize: p.StepSize, Friction: p.Diffusion, FrictionPerStep: p.FrictionPerStep}
		}},
}

// LookupKernel returns the entry of Kernels named name.
func LookupKernel(name string) (KernelInfo, bool) {
	for _, k := range Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return KernelInfo{}, false
}
