package refcheck

import (
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/health"
)

// TestIssue60UngradedNotOK is issue 60's failing case: sblrc-blr, SGNHT,
// minibatch 20, --precondition rmsprop at the default mass scale
// (widest), lr 3e-5, 1.6M steps (400k burn-in), run as the public API's
// default and train run it (driver.StepHealth.MixCoords off: the coordinates'
// mixing not graded). On seed 5 one eigen-direction's sd reads 25% wide
// and a marginal 26% (the issue's 24% and 26%); the dynamics are in their
// regime (the per-coordinate temperatures within 1%, gradient noise 0%:
// the mass makes the coordinates heavy), but the chain has an ESS of
// about 15, so its sds are uncertain by about 19%. The verdict was "ok";
// it must not be: the check cannot tell its sds within 15%, and says so
// (warn, cause unchecked, naming the coordinate and its ESS).
func TestIssue60UngradedNotOK(t *testing.T) {
	if testing.Short() {
		t.Skip("1.6M steps (about 6 s)")
	}
	ref, err := LoadReference(DataDir, "sblrc-blr")
	if err != nil {
		t.Fatal(err)
	}
	c := Case{Posterior: "sblrc-blr", Kernel: "sgnht", Precond: adapt.PrecondRMSprop, Batch: 20, LR: 3e-5,
		Steps: 1600000, Seed: 5, UngradedMix: true}
	r, err := Run(c, DataDir, ref)
	if err != nil {
		t.Fatal(err)
	}
	status, fig := r.Health.Verdict()
	t.Logf("%s\n%v\n%v", r.Row(), fig.Coord, fig.Problems())
	if eig, marg, _ := r.WorstErrors(); eig < 0.15 || marg < 0.15 {
		t.Fatalf("the issue's case did not reproduce: worst eigen-direction sd error %.2f, marginal %.2f", eig, marg)
	}
	if fig.Mix.Graded {
		t.Fatal("the coordinates' mixing is graded: not the public API's default")
	}
	if status == health.HealthOK {
		t.Errorf("verdict ok on a chain whose sds are 25%% off and cannot be told within 15%% (%s)", r.HealthText())
	}
	if fig.Cause() != health.CauseUnchecked || !strings.Contains(strings.Join(fig.Problems(), "; "), "could not check coordinate") {
		t.Errorf("cause %q, problems %q: want what it could not check", fig.Cause(), fig.Problems())
	}
}
