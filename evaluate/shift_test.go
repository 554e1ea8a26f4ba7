package evaluate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// images returns n random side x side images with labels.
func images(n, side int, seed uint64) *datasets.Dataset {
	d, _ := datasets.SyntheticImages(n, side*side, 3, rand.New(rand.NewPCG(seed, 1)))
	return d
}

func TestRotateImages(t *testing.T) {
	for _, side := range []int{5, 6} { // odd and even: the centre on a pixel or between four
		d := images(4, side, uint64(side))
		r0 := mustRotate(t, d, side, 0)
		for i, v := range d.X {
			if r0.X[i] != v {
				t.Fatalf("side %d: rotation by 0 changed pixel %d: %v -> %v", side, i, v, r0.X[i])
			}
		}
		r90 := mustRotate(t, d, side, 90)
		r180 := mustRotate(t, d, side, 180)
		for i := 0; i < d.N; i++ {
			in, o90, o180 := d.Row(i), r90.Row(i), r180.Row(i)
			for r := 0; r < side; r++ {
				for c := 0; c < side; c++ {
					if want := in[(side-1-c)*side+r]; o90[r*side+c] != want {
						t.Fatalf("side %d image %d: rotation by 90 at (%d,%d) = %v, want input (%d,%d) = %v", side, i, r, c, o90[r*side+c], side-1-c, r, want)
					}
					if want := in[(side-1-r)*side+side-1-c]; o180[r*side+c] != want {
						t.Fatalf("side %d image %d: rotation by 180 at (%d,%d) = %v, want %v", side, i, r, c, o180[r*side+c], want)
					}
				}
			}
		}
		// 45 degrees: interpolated, inside [0, 1], the centre pixel kept (odd side)
		r45 := mustRotate(t, d, side, 45)
		for _, v := range r45.X {
			if v < 0 || v > 1 {
				t.Fatalf("rotation by 45: pixel %v outside [0, 1]", v)
			}
		}
		if side%2 == 1 {
			m := side / 2
			if r45.X[m*side+m] != d.X[m*side+m] {
				t.Errorf("rotation by 45 moved the centre pixel")
			}
		}
		for i := range d.Labels {
			if r45.Labels[i] != d.Labels[i] {
				t.Fatal("rotation changed a label")
			}
		}
	}
}

func TestShiftLevels(t *testing.T) {
	d := images(50, 4, 3)
	lv, err := shiftLevels([]string{ShiftRotate, ShiftNoise, ShiftRotate}, d, 1)
	if err != nil || len(lv) != len(RotateLevels)+len(NoiseLevels) {
		t.Fatalf("%d levels, %v", len(lv), err)
	}
	// noise: clipped to [0, 1], reproducible from the seed, its spread the level's
	again, _ := shiftLevels([]string{ShiftNoise}, d, 1)
	for j, l := range lv[len(RotateLevels):] {
		diff, n := 0.0, 0
		for i, v := range l.data.X {
			if v < 0 || v > 1 || v != again[j].data.X[i] {
				t.Fatalf("noise %g: pixel %v (again %v)", l.level, v, again[j].data.X[i])
			}
			if x := d.X[i]; x > 0.2 && x < 0.8 && v > 0 && v < 1 {
				diff += (float64(v) - float64(x)) * (float64(v) - float64(x))
				n++
			}
		}
		// unclipped pixels: sd near the level (truncation narrows it a little)
		if sd := math.Sqrt(diff / float64(n)); sd < 0.5*l.level || sd > 1.1*l.level {
			t.Errorf("noise %g: sd of the change %.3f", l.level, sd)
		}
	}
	if _, err := shiftLevels([]string{"blur"}, d, 1); err == nil {
		t.Error("unknown shift accepted")
	}
	if _, err := shiftLevels([]string{ShiftRotate}, &datasets.Dataset{N: 1, D: 12, X: make([]float32, 12), Classes: 2, Labels: []int{0}}, 1); err == nil {
		t.Error("rotation of non-square images accepted")
	}
}

func TestBuiltinOOD(t *testing.T) {
	d := images(200, 4, 5)
	sets := BuiltinOOD(d, 9)
	if len(sets) != 3 || sets[0].Name != OODUniform || sets[1].Name != OODGaussian || sets[2].Name != OODInverted {
		t.Fatalf("sets %v", sets)
	}
	for i, v := range d.X {
		if sets[2].Data.X[i] != 1-v {
			t.Fatalf("inverted pixel %d: %v, want %v", i, sets[2].Data.X[i], 1-v)
		}
	}
	mean, sd := pixelMoments(d.X)
	gm, gsd := pixelMoments(sets[1].Data.X)
	// clipping to [0, 1] narrows the noise a little
	if math.Abs(gm-mean) > 0.05 || gsd > sd || gsd < 0.7*sd {
		t.Errorf("gaussian noise mean %.3f sd %.3f, data %.3f %.3f", gm, gsd, mean, sd)
	}
	um, _ := pixelMoments(sets[0].Data.X)
	if math.Abs(um-0.5) > 0.03 {
		t.Errorf("uniform noise mean %.3f", um)
	}
	// the same seed, the same sets
	if again := BuiltinOOD(d, 9); again[0].Data.X[17] != sets[0].Data.X[17] || again[1].Data.X[5] != sets[1].Data.X[5] {
		t.Error("BuiltinOOD is not reproducible from its seed")
	}
}

// TestOODPipeline feeds oodResults and selectiveResults predictions whose
// scores were chosen by hand.
func TestOODPipeline(t *testing.T) {
	// Two classes; the test set's rows and an OOD set's.
	test := []float64{0.9, 0.1, 0.6, 0.4, 0.8, 0.2} // 1-max: 0.1, 0.4, 0.2
	ood := []float64{0.5, 0.5, 0.7, 0.3}            // 1-max: 0.5, 0.3
	ens := predictorScores{Name: PredEnsemble, Probs: test, Test: scoresOf(test, []float64{0, 0, 0}, 2)}
	ens.Others = []UncertaintyScores{scoresOf(ood, []float64{0, 0}, 2)}
	single := predictorScores{Name: PredSingle, Probs: test, Test: scoresOf(test, nil, 2), Others: []UncertaintyScores{scoresOf(ood, nil, 2)}}
	res := oodResults([]string{"mine"}, []predictorScores{ens, single})
	if len(res) != 6 {
		t.Fatalf("%d rows", len(res))
	}
	// max_prob: OOD 0.5 beats all three, 0.3 beats 0.1 and 0.2: 5 of 6.
	// AP: t=0.5 (1/2 x 1), t=0.4 (no positive), t=0.3 (1/2 x 2/3): 5/6.
	// Entropy ranks the rows as 1-max does (two classes), so the same; and
	// the ensemble's mutual information is its entropy (zero mean entropy).
	for _, r := range res {
		switch {
		case r.Score != ScoreMutualInfo || r.Predictor == PredEnsemble:
			if math.Abs(*r.AUROC-5.0/6) > 1e-12 || math.Abs(*r.AUPR-5.0/6) > 1e-12 {
				t.Errorf("%s %s: AUROC %v AUPR %v, want 5/6 and 5/6", r.Predictor, r.Score, *r.AUROC, *r.AUPR)
			}
		case r.Score == ScoreMutualInfo && r.Predictor == PredSingle:
			if r.AUROC != nil || r.AUPR != nil {
				t.Errorf("single network's mutual information: %v %v, want null", r.AUROC, r.AUPR)
			}
		}
	}
	// labels 0, 1, 0: the second is wrong and the most uncertain by every score
	sel := selectiveResults([]int{0, 1, 0}, 2, []predictorScores{ens, single})
	for _, r := range sel {
		if r.Predictor == PredSingle && r.Score == ScoreMutualInfo {
			if r.AURC != nil {
				t.Errorf("single mutual information AURC %v, want null", *r.AURC)
			}
			continue
		}
		// risks 0, 0, 1/3 at coverages 1/3, 2/3, 1
		if math.Abs(*r.AURC-1.0/9) > 1e-12 || math.Abs(*r.AccAt90-2.0/3) > 1e-12 {
			t.Errorf("%s %s: AURC %v acc@90 %v, want 1/9 and 2/3", r.Predictor, r.Score, *r.AURC, *r.AccAt90)
		}
	}
}

func ExampleRotateImages() {
	// One 3x3 image with a bright top-left corner, rotated a quarter turn
	// (clockwise as displayed, row 0 at the top): the corner moves to the top right.
	d := &datasets.Dataset{N: 1, D: 9, Classes: 2, Labels: []int{0}, X: []float32{1, 0, 0, 0, 0, 0, 0, 0, 0}}
	r, err := RotateImages(d, 3, 90)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.X)
	// Output: [0 0 1 0 0 0 0 0 0]
}
