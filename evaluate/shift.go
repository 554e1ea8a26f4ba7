package evaluate

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Dataset shifts of the test set (Ovadia et al. 2019): how accuracy and
// calibration degrade as the test images move away from the training data.

// Names of the shift kinds (EvalOptions.Shifts, eval --shift).
const (
	ShiftRotate = "rotate" // rotation by RotateLevels degrees, bilinear, zero fill
	ShiftNoise  = "noise"  // additive Gaussian noise of standard deviation NoiseLevels, clipped to [0, 1]
)

// RotateLevels are the rotation angles of ShiftRotate, in degrees.
var RotateLevels = []float64{0, 15, 30, 45, 60, 75, 90, 105, 120, 135, 150, 165, 180}

// NoiseLevels are the noise standard deviations of ShiftNoise, on the
// [0, 1] pixel scale.
var NoiseLevels = []float64{0.1, 0.2, 0.3, 0.4, 0.5}

// ShiftResult is the figures of one predictor on the test set under one
// shift level.
type ShiftResult struct {
	Kind      string  `json:"kind"`  // ShiftRotate or ShiftNoise
	Level     float64 `json:"level"` // degrees, or the noise's standard deviation
	Predictor string  `json:"predictor"`
	Accuracy  float64 `json:"accuracy"`
	NLL       float64 `json:"nll"`
	ECE       float64 `json:"ece"`
	Brier     float64 `json:"brier"`
}

// shiftLevel is one shifted copy of the test set.
type shiftLevel struct {
	kind  string
	level float64
	data  *datasets.Dataset
}

func (s shiftLevel) name() string { return fmt.Sprintf("%s %g", s.kind, s.level) }

func shiftResult(s *shiftLevel, pred string, m Metrics) ShiftResult {
	return ShiftResult{Kind: s.kind, Level: s.level, Predictor: pred, Accuracy: m.Accuracy, NLL: m.NLL, ECE: m.ECE, Brier: m.Brier}
}

// shiftStream is the stream id of the noise shift (seeded by
// EvalOptions.Seed; one stream per level).
const shiftStream = 0x5f1f7

// shiftLevels returns the shifted copies of test the kinds ask for.
func shiftLevels(kinds []string, test *datasets.Dataset, seed uint64) ([]shiftLevel, error) {
	var out []shiftLevel
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k] {
			continue
		}
		seen[k] = true
		switch k {
		case ShiftRotate:
			side, err := ImageSide(test.D)
			if err != nil {
				return nil, fmt.Errorf("shift rotate: %w", err)
			}
			for _, deg := range RotateLevels {
				r, err := RotateImages(test, side, deg)
				if err != nil {
					return nil, fmt.Errorf("shift rotate: %w", err)
				}
				out = append(out, shiftLevel{k, deg, r})
			}
		case ShiftNoise:
			for i, sd := range NoiseLevels {
				out = append(out, shiftLevel{k, sd, NoisyImages(test, sd, sampler.NewStream(seed, shiftStream+uint64(i)).Rand)})
			}
		default:
			return nil, fmt.Errorf("shift %q: expected %s or %s", k, ShiftRotate, ShiftNoise)
		}
	}
	return out, nil
}

// ImageSide returns the side of square images of d pixels, or an error when
// d is not a square.
func ImageSide(d int) (int, error) {
	s := int(math.Round(math.Sqrt(float64(d))))
	if s*s != d {
		return 0, fmt.Errorf("images of %d pixels are not square", d)
	}
	return s, nil
}

// sinCosDeg returns sin and cos of deg degrees, exact at multiples of 90.
func sinCosDeg(deg float64) (sin, cos float64) {
	if q := math.Mod(deg, 360); q == math.Trunc(q) && int(q)%90 == 0 {
		switch (int(q) + 360) % 360 {
		case 0:
			return 0, 1
		case 90:
			return 1, 0
		case 180:
			return 0, -1
		case 270:
			return -1, 0
		}
	}
	return math.Sincos(deg * math.Pi / 180)
}

// RotateImages returns d's images (side x side, row-major, row 0 at the
// top) rotated clockwise as displayed by deg degrees about their centre, by bilinear
// interpolation with zero outside the image: output pixel (r, c) takes the
// input at (y, x) with dx = c - m, dy = r - m, m = (side-1)/2,
// x = cos dx + sin dy + m and y = -sin dx + cos dy + m. Labels
// are kept. Rotation by 0 returns the images unchanged, and by 90 the exact
// permutation out(r, c) = in(side-1-c, r). Images of other than side x side
// pixels, or d.X not of d.N of them, are an error.
func RotateImages(d *datasets.Dataset, side int, deg float64) (*datasets.Dataset, error) {
	if side <= 0 || d.D != side*side {
		return nil, fmt.Errorf("rotate: images of %d pixels, want %dx%d = %d", d.D, side, side, side*side)
	}
	if len(d.X) != d.N*d.D {
		return nil, fmt.Errorf("rotate: %d images of %d pixels need %d values, have %d", d.N, d.D, d.N*d.D, len(d.X))
	}
	out := blankLike(d)
	sin, cos := sinCosDeg(deg)
	m := float64(side-1) / 2
	at := func(img []float32, y, x int) float64 {
		if y < 0 || y >= side || x < 0 || x >= side {
			return 0
		}
		return float64(img[y*side+x])
	}
	for i := 0; i < d.N; i++ {
		src, dst := d.Row(i), out.Row(i)
		for r := 0; r < side; r++ {
			for c := 0; c < side; c++ {
				dx, dy := float64(c)-m, float64(r)-m
				x := cos*dx + sin*dy + m
				y := -sin*dx + cos*dy + m
				x0, y0 := math.Floor(x), math.Floor(y)
				fx, fy := x-x0, y-y0
				ix, iy := int(x0), int(y0)
				v := (1-fy)*((1-fx)*at(src, iy, ix)+fx*at(src, iy, ix+1)) + fy*((1-fx)*at(src, iy+1, ix)+fx*at(src, iy+1, ix+1))
				dst[r*side+c] = float32(v)
			}
		}
	}
	return out, nil
}

// NoisyImages returns d's images with independent Gaussian noise of
// standard deviation sd added to every pixel, clipped to [0, 1], drawn from
// rng. Labels are kept.
func NoisyImages(d *datasets.Dataset, sd float64, rng interface{ NormFloat64() float64 }) *datasets.Dataset {
	out := blankLike(d)
	for i, v := range d.X {
		out.X[i] = float32(math.Min(1, math.Max(0, float64(v)+sd*rng.NormFloat64())))
	}
	return out
}
