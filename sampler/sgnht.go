package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SGNHT is the stochastic gradient Nose-Hoover thermostat (Ding et al. 2014)
// at temperature T, with unit mass:
//
//	p'    <- exp(-xi h) p - grad U~(theta) h/sqrt(T) + sqrt(2 (1 - exp(-A h))) N(0, I)
//	theta <- theta + p' h sqrt(T)
//	xi    <- xi + (|p + p'|^2/(4D) - 1) h / Q
//
// This is the noise-tempered form (TemperNoise, see Tempering): in the
// momentum m = sqrt(T) p it is BlackJAX's diffusion with the injected noise
// and the thermostat's target kinetic energy scaled by T and the gradient
// unscaled; State.P holds p = m/sqrt(T), so kinetic temperatures stay 1.
// TemperGradient uses the gradient grad U~/T with step h instead (the
// form PT-SGHMC runs recorded before the choice existed). The two agree
// at T = 1, bit for bit.
//
// (Ding et al. inject 2 A h and thermostat p'p'/D; see InjectedVariance and
// SGNHTUpdate for why the exact friction needs these forms.)
//
// The thermostat xi grows when the kinetic temperature p'p/D exceeds 1 and so
// absorbs gradient noise of unknown size; A is the injected diffusion and Q
// the thermostat's inertia.
//
// The default inertia (Inertia 0) is Q = 1/A^2 (1 when A = 0). Q has units
// of time squared and A of inverse time, so Q A^2 is the thermostat's one
// dimensionless number: linearised about its level xi* (>= A), the
// thermostat is a damped oscillator of frequency sqrt(2/Q) and damping
// xi*, so Q A^2 = 1 gives a damping ratio of at least 1/sqrt(2) (near the
// fastest settling without overshoot), a relaxation time of a few
// momentum relaxation times 1/xi*, and a thermostat that can fall by
// (A h)^2 in friction per step when it overshot. Ding et al.'s Q = 1 is this
// rule at A = 1; kept at Q = 1 when A = 100 it relaxes over Q xi*/h steps
// (660,000 at h = 2e-4) and the configuration runs cold all that while
// (docs/posterior-checks.md). The thermostat's stationary spread is
// sd(xi) = 1/sqrt(Q D), 1/sqrt(D) of A at the default.
//
// The friction is integrated exactly, exp(-xi h), rather than by Ding et
// al.'s Euler factor 1 - xi h. The two agree to first order in h, but the
// Euler factor falls below -1 once xi h > 2 and the momentum then grows
// without bound: a thermostat that overshoots on a one-dimensional target
// (xi about 10 at h = 0.2) diverged that way within a million steps.
type SGNHT struct {
	StepSize  float64 // h
	Diffusion float64 // A; the thermostat starts at xi = A
	Inertia   float64 // Q; 0 means 1/A^2 (1 when A = 0)
	// FrictionPerStep is alpha = A h, the friction per step the kernel
	// keeps when a transition's Hyper.StepSize moves its step to h': there
	// A = alpha/h' (Q stays Inertia). 0 means A StepSize; a kernel built
	// from a learning rate (SGNHTParams.Kernel) carries the run's alpha
	// exactly.
	FrictionPerStep float64
	// Tempering is how a temperature T != 1 enters the update: by the
	// noise (the zero value, TemperNoise) or by the gradient.
	Tempering Tempering
}

// SGNHTParams are the sgnht kernel's settings.
type SGNHTParams struct {
	// Friction is alpha, the momentum's decay per step: the diffusion is
	// A = alpha/h at the rate's step h.
	Friction float64 `json:"friction" doc:"momentum decay per step alpha (diffusion A = alpha/h)"`
	// Inertia is the thermostat's Q (0: 1/A^2, see SGNHT).
	Inertia float64 `json:"thermostat_inertia" doc:"SGNHT thermostat inertia Q: smaller adapts faster (0: 1/A^2, a thermostat that settles within a few momentum relaxation times)"`
}

// Validate checks alpha in (0, 1) and Q non-negative and finite.
func (p SGNHTParams) Validate() error {
	if err := validFriction(p.Friction); err != nil {
		return err
	}
	if !checkFinite(p.Inertia) {
		return fmt.Errorf("thermostat_inertia must be non-negative (0: 1/A^2)")
	}
	return nil
}

// Kernel returns SGNHT at the rate's step h with diffusion alpha/h, which
// it keeps at alpha per step when Hyper.StepSize moves its step.
func (p SGNHTParams) Kernel(r Rate, t Tempering) Kernel {
	h, a := frictionAt(r, p.Friction)
	return SGNHT{StepSize: h, Diffusion: a, Inertia: p.Inertia, FrictionPerStep: p.Friction, Tempering: t}
}

// inertia returns Q, its default when Inertia is 0.
func (k SGNHT) inertia() float64 {
	switch {
	case k.Inertia != 0:
		return k.Inertia
	case k.Diffusion > 0:
		return 1 / (k.Diffusion * k.Diffusion)
	}
	return 1
}

// Dynamics returns h and A.
func (k SGNHT) Dynamics() (h, a float64) { return k.StepSize, k.Diffusion }

// At returns the kernel stepping at h: diffusion alpha/h, the same
// friction and injected noise per step (see FrictionPerStep).
func (k SGNHT) At(h float64) Kernel { return k.at(h) }

// at returns the kernel that steps at h (0: k itself).
func (k SGNHT) at(h float64) SGNHT {
	if h == 0 || h == k.StepSize {
		return k
	}
	alpha := k.frictionPerStep()
	return SGNHT{StepSize: h, Diffusion: alpha / h, Inertia: k.Inertia, FrictionPerStep: alpha, Tempering: k.Tempering}
}

// frictionPerStep returns alpha, A h when FrictionPerStep is 0.
func (k SGNHT) frictionPerStep() float64 {
	if k.FrictionPerStep != 0 {
		return k.FrictionPerStep
	}
	return k.Diffusion * k.StepSize
}

// Name returns "sgnht".
func (k SGNHT) Name() string { return "sgnht" }

// Init draws p ~ N(0, I) and sets xi = A.
func (k SGNHT) Init(s *State, rng *rand.Rand) {
	for i := range s.P {
		s.P[i] = rng.NormFloat64()
	}
	s.Xi = k.Diffusion
}

// Step performs one SGNHT update on the minibatch mb at the step size and
// temperature of hp.
func (k SGNHT) Step(s *State, pot Potential, mb Minibatch, hp Hyper, rng *rand.Rand) error {
	k = k.at(hp.StepSize)
	xi, kin, after, err := sgnhtStep(pot, s, mb, s.Xi, k.StepSize, k.Diffusion, k.Tempering.coefficients(hp.temp()), 1/k.inertia(), rng)
	if err != nil {
		return err
	}
	// the thermostat is not finite when the momentum is not (a diverged
	// step): checked before the cap
	s.Xi, s.Kinetic, s.kinAfter, s.hasKinAfter = xi, kin, after, true
	if err := finite(s.Xi); err != nil {
		return err
	}
	s.Xi = k.capXi(xi)
	return nil
}

// MaxFrictionPerStep is the most friction per step, xi h, the SGNHT
// thermostat may reach (or twice A h, when that is more). At xi h = 5 the
// momentum keeps exp(-5) = 0.7% of itself per step, so the dynamics are
// those of a larger xi in effect: a thermostat past it is not in
// equilibrium (the health check fails a budget above health.FailBudget, a
// friction of 2.3 per step). Without the cap, a thermostat that overshot
// (a descent from a far start, a burn-in window of strong gradient noise
// before the mass is estimated) to hundreds or thousands per step fell
// back by at most (A h)^2 per step at the default inertia, and kept the
// chain cold for 10^5 steps and more (issue 43: a friction of about 900
// per step at kinetic temperature 0.1 took 130,000-180,000 steps to drain;
// capped, a few hundred). A chain whose thermostat stays below the cap
// runs as before, bit for bit.
const MaxFrictionPerStep = 5

// capXi returns xi, held to at most max(MaxFrictionPerStep, 2 A h)/h.
func (k SGNHT) capXi(xi float64) float64 {
	if k.StepSize <= 0 {
		return xi
	}
	limit := math.Max(MaxFrictionPerStep, 2*k.Diffusion*k.StepSize) / k.StepSize
	return math.Min(xi, limit)
}

// ThermostatGain returns h^2/Q: the thermostat's change of friction per
// step, xi h, per step and unit of kinetic temperature above 1. After an
// overshoot, the friction per step falls by at most this much per step.
func (k SGNHT) ThermostatGain() float64 { return k.StepSize * k.StepSize / k.inertia() }

// InjectedVariance returns the momentum variance injected per step,
// 2 (1 - exp(-A h)): the noise that balances the exact friction exp(-A h)
// at unit configurational temperature (for the position's slow motion the
// friction per step is 1 - exp(-A h), and the fluctuation-dissipation
// balance is noise = 2 friction). Ding et al.'s Euler form 2 A h agrees to
// first order; with the exact friction it runs the configuration hot by
// A h / 2 in variance (SGHMC at 0.1 friction per step: sds 2.5% wide).
func InjectedVariance(a, h float64) float64 { return -2 * math.Expm1(-a*h) }

// SGNHTUpdate applies one SGNHT update in place to theta and p given the
// gradient at theta, and returns the new thermostat, adapted at rate invQ
// (1/Q), and the step's kinetic temperature. With invQ = 0 the thermostat is
// held fixed (xi is then SGHMC's friction).
//
// The thermostat holds at 1 the kinetic temperature of the mid-step
// momentum, |p_before + p_after|^2 / (4 D), rather than p_after'p_after/D:
// with the exact friction exp(-xi h) the mid-step momentum's temperature is
// the configuration's, for any friction, whereas p_after's exceeds it by
// the factor 2 / (1 + exp(-xi h)), so a thermostat on p_after ran the
// configuration cold by xi h / 2 in variance (sds 2.5% narrow at 0.1
// friction per step, 7% at 0.3).
//
// The temperature enters as in TemperGradient: the gradient is scaled by
// invT = 1/T and theta moves by h p'.
func SGNHTUpdate(theta, p, grad []float64, xi, h, a, invT, invQ float64, rng *rand.Rand) (newXi, kinetic float64) {
	newXi, kinetic, _ = sgnhtUpdate(theta, p, grad, xi, h, a, temperCoef{grad: invT, pos: 1}, invQ, rng)
	return newXi, kinetic
}

// normalChunk is how many Gaussian variates the updates draw at a time
// (normalSource.fill) before using them: small enough to stay in L1.
const normalChunk = 256

// sgnhtUpdate is SGNHTUpdate; it also returns p'p/D after the update (the
// kinetic temperature a driver records), summed in the same pass over p.
func sgnhtUpdate(theta, p, grad []float64, xi, h, a float64, tc temperCoef, invQ float64, rng *rand.Rand) (newXi, kinetic, after float64) {
	var u sgnhtStepper
	u.reset(xi, h, a, tc, rng)
	u.chunk(theta, p, grad)
	return u.finish(len(p), invQ)
}

// sgnhtStep evaluates the gradient at s.Theta and applies the SGNHT update
// with thermostat xi (streamed when pot can stream), recording U, the
// step's kick terms (State.Work) and, when asked, the squared gradient in s.
// With a diagonal mass (State.SetMass) the update is the preconditioned one
// of sgnhtStepper.chunk; with a dense or low-rank one (State.SetMassMatrix)
// sgnhtStepper.factored's, never streamed.
func sgnhtStep(pot Potential, s *State, mb Minibatch, xi, h, a float64, tc temperCoef, invQ float64, rng *rand.Rand) (newXi, kinetic, after float64, err error) {
	sp, stream := streamingAt(pot)
	stream = stream && !s.keepGrad
	if s.stepper == nil { // kept with the state: a stepper per step would be garbage
		s.stepper = new(sgnhtStepper)
		s.consume = s.stepper.consume
	}
	u := s.stepper
	if s.factor != nil {
		// a dense or low-rank mass needs the whole gradient before the kick
		if err := gradientAt(pot, s, mb, rng); err != nil {
			return 0, 0, 0, err
		}
		u.reset(xi, h, a, tc, rng)
		u.factored(s, s.factor)
		s.Work = StepWork{Before: u.wb, After: u.wa, Kick: u.wk, Valid: true}
		newXi, kinetic, after = u.finish(len(s.P), invQ)
		return newXi, kinetic, after, nil
	}
	if !stream {
		if err := gradientAt(pot, s, mb, rng); err != nil {
			return 0, 0, 0, err
		}
		u.reset(xi, h, a, tc, rng)
		u.r, u.gsq, u.off, u.nsc, u.nacc, u.kick = s.invSqrtMass, s.gradSq, 0, s.InjScale, s.noiseAcc, s.kickOut
		u.chunk(s.Theta, s.P, s.Grad)
		u.r, u.gsq, u.nsc, u.nacc, u.kick = nil, nil, nil, nil, nil
		s.Work = StepWork{Before: u.wb, After: u.wa, Kick: u.wk, Valid: true}
		newXi, kinetic, after = u.finish(len(s.P), invQ)
		return newXi, kinetic, after, nil
	}
	if err := checkDim(pot, s); err != nil {
		return 0, 0, 0, err
	}
	u.reset(xi, h, a, tc, rng)
	u.theta, u.p, u.next, u.bad = s.Theta, s.P, 0, nil
	u.r, u.gsq, u.nsc, u.nacc, u.kick = s.invSqrtMass, s.gradSq, s.InjScale, s.noiseAcc, s.kickOut
	if mb.Index != nil && useNoiseAhead() {
		// The potential draws nothing from rng when given its minibatch, so
		// the noise's seed, drawn at the first chunk otherwise, is the
		// stream's next value now: the worker draws the same variates.
		if s.ahead == nil {
			s.ahead = new(noiseJob)
		}
		u.ns, u.seeded = newNormalSource(rng), true
		s.ahead.start(len(s.P), u.ns)
		u.ahead = s.ahead
		defer func() { s.ahead.wait(); u.ahead = nil }()
	}
	s.U, err = sp.GradientStream(s.Theta, mb, rng, s.consume)
	u.theta, u.p, u.r, u.gsq, u.nsc, u.nacc, u.kick = nil, nil, nil, nil, nil, nil, nil
	switch {
	case err != nil:
		return 0, 0, 0, err
	case u.bad != nil:
		return 0, 0, 0, u.bad
	case u.next != len(s.P):
		return 0, 0, 0, fmt.Errorf("streamed gradient: covered [0, %d) of %d coordinates", u.next, len(s.P))
	}
	s.Work = StepWork{Before: u.wb, After: u.wa, Kick: u.wk, Valid: true}
	newXi, kinetic, after = u.finish(len(s.P), invQ)
	return newXi, kinetic, after, nil
}

// sgnhtStepper applies an SGNHT update to consecutive chunks of theta and p
// as their gradient becomes available (all of it at once, or streamed by a
// StreamingPotential while each chunk is in cache), summing the kinetic
// energies in one order whatever the chunks; finish then moves the
// thermostat. Its noise is seeded from the stream on the first chunk (after
// the potential's own draws, as when the gradient comes first).
type sgnhtStepper struct {
	xi, h, noise   float64
	tc             temperCoef
	decay, kin, pp float64
	rng            *rand.Rand
	ns             normalSource
	seeded         bool
	buf            [normalChunk]float64

	// a streamed update's state and progress: the chunks consume has
	// applied cover [0, next); bad is its first malformed chunk
	theta, p []float64
	next     int
	bad      error

	// r is M^-1/2 (nil: unit mass) and gsq, when not nil, sums g^2, both
	// over the whole vector: chunk's slices start at coordinate off.
	r, gsq []float64
	off    int
	// the kick terms of StepWork, summed over the chunks
	wb, wa, wk float64
	// nsc, when not nil, scales the injected noise's sd per coordinate
	// (State.InjScale) and nacc, when not nil, sums each coordinate's
	// gradient-noise estimate (adapt.NoiseEstimate)
	nsc, nacc []float64
	// kick, when not nil, receives each coordinate's kick k_i (over the
	// whole vector, State.SaveKick): the update then runs general's scalar
	// loop, the same arithmetic
	kick []float64
	ones [normalChunk]float64
	// ahead, when not nil, holds the step's noise drawn on another
	// goroutine (noiseahead.go): chunk reads it instead of drawing
	ahead *noiseJob
}

// consume applies the update to the streamed chunk g of the gradient at
// [lo, lo+len(g)), which must follow the previous chunk.
func (u *sgnhtStepper) consume(lo int, g []float64) {
	if u.bad != nil {
		return
	}
	if lo != u.next || lo+len(g) > len(u.p) {
		u.bad = fmt.Errorf("streamed gradient: chunk [%d, %d) of %d coordinates after [0, %d)", lo, lo+len(g), len(u.p), u.next)
		return
	}
	u.off = lo
	u.chunk(u.theta[lo:lo+len(g)], u.p[lo:lo+len(g)], g)
	u.next = lo + len(g)
}

// reset starts an update from thermostat xi.
func (u *sgnhtStepper) reset(xi, h, a float64, tc temperCoef, rng *rand.Rand) {
	u.xi, u.h, u.tc, u.rng = xi, h, tc, rng
	u.noise, u.decay = math.Sqrt(InjectedVariance(a, h)), math.Exp(-xi*h)
	u.kin, u.pp, u.seeded = 0, 0, false
	u.wb, u.wa, u.wk = 0, 0, 0
}

// chunk updates theta and p, of equal length, given their gradient g.
// With unit mass (r nil) it is SGNHTUpdate's update; with a mass M =
// diag(m), r = m^-1/2 and p the momentum in units of its sd (State.P), it
// is the preconditioned update
//
//	p'    <- exp(-xi h) p - h r grad U~ c_g + sqrt(InjectedVariance(A, h)) N(0, I)
//	theta <- theta + h r p' c_p
//
// (c_g, c_p the temperature's factors, 1 at T = 1), SGNHT in the
// coordinates phi = M^1/2 theta, where the curvature in coordinate i is
// m_i^-1 times U's. It also sums the kick terms of StepWork and, when gsq
// is set, g^2.
func (u *sgnhtStepper) chunk(theta, p, g []float64) {
	if !u.seeded {
		u.ns, u.seeded = newNormalSource(u.rng), true
	}
	// At T = 1 both factors are 1 and these are h and h exactly.
	h, hInvT, noise, decay := u.h*u.tc.pos, u.h*u.tc.grad, u.noise, u.decay
	kin, pp := u.kin, u.pp
	wb, wa, wk := u.wb, u.wa, u.wk
	for lo := 0; lo < len(p); lo += normalChunk {
		hi := min(lo+normalChunk, len(p))
		var z []float64
		if u.ahead != nil {
			z = u.ahead.upTo(u.off+lo, u.off+hi)
		} else {
			z = u.buf[:hi-lo]
			u.ns.fill(z)
		}
		pc, tc, gc := p[lo:hi], theta[lo:hi], g[lo:hi]
		if u.r == nil && u.nsc == nil && u.nacc == nil && u.kick == nil {
			// the leading multiple of 8 in vector registers where the CPU
			// can, the same arithmetic in the same order (update_amd64.s)
			sums := [5]float64{kin, pp, wb, wa, wk}
			c := [4]float64{h, hInvT, noise, decay}
			v := unitUpdateBlocks(tc, pc, gc, z, &c, &sums)
			kin, pp, wb, wa, wk = sums[0], sums[1], sums[2], sums[3], sums[4]
			pc, tc, gc, z := pc[v:], tc[v:], gc[v:], z[v:]
			for i, zi := range z {
				pb, k := pc[i], hInvT*gc[i]
				pi := decay*pc[i] - hInvT*gc[i] + noise*zi
				mid := 0.5 * (pc[i] + pi)
				pc[i] = pi
				tc[i] += h * pi
				kin += mid * mid
				pp += pi * pi
				wb += pb * k
				wa += pi * k
				wk += k * k
			}
		} else {
			sums := [5]float64{kin, pp, wb, wa, wk}
			u.general(tc, pc, gc, z, lo, hi, &sums)
			kin, pp, wb, wa, wk = sums[0], sums[1], sums[2], sums[3], sums[4]
		}
		if u.gsq != nil {
			gs := u.gsq[u.off+lo : u.off+hi]
			for i, v := range gc {
				gs[i] += v * v
			}
		}
	}
	u.kin, u.pp = kin, pp
	u.wb, u.wa, u.wk = wb, wa, wk
}

// general is chunk's loop over coordinates [lo, hi) of the current chunk
// (tc, pc, gc, z its positions, momenta, gradient and normal draws, sums
// the kick and kinetic sums kin, pp, wb, wa, wk, read and written) with a
// mass, a per-coordinate injected noise or per-coordinate noise sums: the
// preconditioned update with the injected sd noise*InjScale_i, adding
// coordinate i's gradient-noise estimate, its heating beyond the
// injected noise less its integration error's part (see
// IntegrationError; the pairing of successive steps' kick terms is left to
// the sums over a window),
//
//	q_i'^2 - exp(-2 xi h) q_i^2 - inj_i - (q_i k_i - q_i' k_i - k_i^2),
//
// to nacc.
func (u *sgnhtStepper) general(tc, pc, gc, z []float64, lo, hi int, sums *[5]float64) {
	h, hInvT, noise, decay := u.h*u.tc.pos, u.h*u.tc.grad, u.noise, u.decay
	if u.ones[0] != 1 {
		for i := range u.ones {
			u.ones[i] = 1
		}
	}
	// Multiplying by one is exact: without a mass or a noise scale, their
	// ones leave the update's bits those of the unit-mass one.
	rc, sc := u.ones[:hi-lo], u.ones[:hi-lo]
	if u.r != nil {
		rc = u.r[u.off+lo : u.off+hi]
	}
	if u.nsc != nil {
		sc = u.nsc[u.off+lo : u.off+hi]
	}
	var na []float64
	if u.nacc != nil {
		na = u.nacc[u.off+lo : u.off+hi]
	}
	d2, inj := decay*decay, noise*noise
	// the leading multiple of 8 in vector registers where the CPU can
	// (update_amd64.s), the same arithmetic in the same order
	c := [6]float64{h, hInvT, noise, decay, d2, inj}
	var kc []float64
	v := 0
	if u.kick == nil {
		v = scaledUpdateBlocks(tc, pc, gc, z, rc, sc, na, &c, sums)
	} else {
		kc = u.kick[u.off+lo : u.off+hi]
	}
	tc, pc, gc, z, rc, sc = tc[v:], pc[v:], gc[v:], z[v:], rc[v:], sc[v:]
	if na != nil {
		na = na[v:]
	}
	kin, pp, wb, wa, wk := sums[0], sums[1], sums[2], sums[3], sums[4]
	for i, zi := range z {
		pb, k := pc[i], hInvT*gc[i]*rc[i]
		pi := decay*pb - k + noise*sc[i]*zi
		mid := 0.5 * (pb + pi)
		pc[i] = pi
		tc[i] += h * rc[i] * pi
		kin += mid * mid
		pp += pi * pi
		wb += pb * k
		wa += pi * k
		wk += k * k
		if na != nil {
			na[i] += pi*pi - d2*pb*pb - inj*sc[i]*sc[i] - pb*k + pi*k + k*k
		}
		if kc != nil {
			kc[i] = k
		}
	}
	*sums = [5]float64{kin, pp, wb, wa, wk}
}

// factored is chunk's update of the whole of s.Theta and s.P, given the
// gradient s.Grad, with the non-diagonal mass m (MassMatrix: M^-1 = C C',
// P the momentum's q = L^-1 p): SGNHT in the coordinates phi = L' theta,
//
//	q'    <- exp(-xi h) q - h C' grad U~ c_g + sqrt(InjectedVariance(A, h)) N(0, I)
//	theta <- theta + h C q' c_p
//
// (c_g, c_p the temperature's factors), that is p' = exp(-xi h) p - h
// grad U~ c_g + M^1/2 N(0, inj I) and theta' = theta + h M^-1 p' c_p. The
// momentum's update is general's with unit mass on the kick C' grad U~
// (so the kick terms of StepWork, the kinetic temperatures, the
// per-coordinate noise estimate of q's coordinates, the kick per
// coordinate State.SaveKick asks for and the injected sd scaled by
// State.InjScale are summed as a diagonal mass's are); only the
// position's move differs: h C q' c_p instead of h r q' c_p. The normal
// draws come from the stream as chunk's do, 256 at a time.
func (u *sgnhtStepper) factored(s *State, m MassMatrix) {
	if !u.seeded {
		u.ns, u.seeded = newNormalSource(u.rng), true
	}
	kick, vel := s.factorScratch()
	m.Kick(kick, s.Grad)
	// the kick per coordinate (State.SaveKick) is general's k_i, of q's
	// coordinates as the kinetic terms are
	u.r, u.off, u.nsc, u.nacc, u.kick = nil, 0, s.InjScale, s.noiseAcc, s.kickOut
	sums := [5]float64{u.kin, u.pp, u.wb, u.wa, u.wk}
	p := s.P
	for lo := 0; lo < len(p); lo += normalChunk {
		hi := min(lo+normalChunk, len(p))
		z := u.buf[:hi-lo]
		u.ns.fill(z)
		// general also moves a position by h q': vel takes that move, to
		// be overwritten by the velocity C q' below
		u.general(vel[lo:hi], p[lo:hi], kick[lo:hi], z, lo, hi, &sums)
	}
	u.nsc, u.nacc, u.kick = nil, nil, nil
	u.kin, u.pp, u.wb, u.wa, u.wk = sums[0], sums[1], sums[2], sums[3], sums[4]
	if s.gradSq != nil {
		for i, g := range s.Grad {
			s.gradSq[i] += g * g
		}
	}
	m.Velocity(vel, p)
	h := u.h * u.tc.pos
	for i, v := range vel {
		s.Theta[i] += h * v
	}
}

// finish returns the thermostat after an update of d coordinates, adapted
// at rate invQ, the kinetic temperature of the mid-step momentum and p'p/D.
func (u *sgnhtStepper) finish(d int, invQ float64) (newXi, kinetic, after float64) {
	kinetic = u.kin / float64(d)
	return u.xi + invQ*u.h*(kinetic-1), kinetic, u.pp / float64(d)
}
