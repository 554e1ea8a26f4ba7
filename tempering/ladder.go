package tempering

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// GeometricLadder returns r temperatures from 1 to tmax in geometric
// progression: T_j = tmax^((j-1)/(r-1)).
func GeometricLadder(r int, tmax float64) ([]float64, error) {
	if err := checkLadderArgs(r, tmax); err != nil {
		return nil, err
	}
	t := make([]float64, r)
	for j := range t {
		if r == 1 {
			t[j] = 1
			continue
		}
		t[j] = math.Pow(tmax, float64(j)/float64(r-1))
	}
	return t, nil
}

// LinearLadder returns r temperatures from 1 to tmax evenly spaced.
func LinearLadder(r int, tmax float64) ([]float64, error) {
	if err := checkLadderArgs(r, tmax); err != nil {
		return nil, err
	}
	t := make([]float64, r)
	for j := range t {
		if r == 1 {
			t[j] = 1
			continue
		}
		t[j] = 1 + (tmax-1)*float64(j)/float64(r-1)
	}
	return t, nil
}

func checkLadderArgs(r int, tmax float64) error {
	if r < 1 {
		return fmt.Errorf("ladder: %d rungs, need at least 1", r)
	}
	if r > 1 && !(tmax > 1) || math.IsInf(tmax, 0) {
		return fmt.Errorf("ladder: top temperature %v must be finite and above 1", tmax)
	}
	return nil
}

// CheckLadder reports whether t is a valid ladder: T_1 = 1 and strictly
// increasing finite temperatures.
func CheckLadder(t []float64) error {
	if len(t) == 0 {
		return fmt.Errorf("ladder: no temperatures")
	}
	if t[0] != 1 {
		return fmt.Errorf("ladder: first temperature %v, must be 1", t[0])
	}
	for j := 1; j < len(t); j++ {
		if !(t[j] > t[j-1]) || math.IsInf(t[j], 0) {
			return fmt.Errorf("ladder: temperatures %v must increase strictly and be finite", t)
		}
	}
	return nil
}

// Ladder builds a ladder by kind: "geometric", "linear", or an explicit
// comma-separated list such as "1,1.5,3".
func Ladder(kind string, r int, tmax float64) ([]float64, error) {
	switch kind {
	case "geometric", "":
		return GeometricLadder(r, tmax)
	case "linear":
		return LinearLadder(r, tmax)
	}
	var t []float64
	for i, f := range strings.Split(kind, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64) // the whole entry: "1.5x" is not 1.5
		if err != nil {
			return nil, fmt.Errorf("ladder %q: expected geometric, linear or a list of temperatures like 1,2,4: entry %d, %q, is not a number", kind, i+1, f)
		}
		t = append(t, v)
	}
	if err := CheckLadder(t); err != nil {
		return nil, err
	}
	return t, nil
}
