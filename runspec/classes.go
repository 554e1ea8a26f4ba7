package runspec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// ParseClasses parses a list of class labels such as "0,2,3" (the train
// flag --classes); the empty string is nil (every class). Labels must be
// distinct and non-negative; their order is the order of the model's
// outputs.
func ParseClasses(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 0 {
			return nil, fmt.Errorf("classes %q: %q is not a class label (want labels like 0,2,3)", s, f)
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("classes %q: class %d given twice", s, c)
		}
		out = append(out, c)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("classes %q: want at least 2 classes", s)
	}
	return out, nil
}

// FormatClasses writes classes as ParseClasses reads them ("" for nil).
func FormatClasses(classes []int) string {
	s := make([]string, len(classes))
	for i, c := range classes {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// classesText names a run's classes for an error message.
func classesText(classes []int) string {
	if len(classes) == 0 {
		return "all classes"
	}
	return "classes " + FormatClasses(classes)
}

// SelectClasses splits a labelled data set by class: in holds the
// examples whose label is one of classes, relabelled by position in classes
// (classes[j] becomes j) with len(classes) classes; heldOut holds the rest,
// with their labels replaced by 0 (they are no class the model knows) and
// nil when there are none. A class absent from d's labels is an error.
func SelectClasses(d *datasets.Dataset, classes []int) (in, heldOut *datasets.Dataset, err error) {
	pos := map[int]int{}
	for j, c := range classes {
		if c >= d.Classes {
			return nil, nil, fmt.Errorf("classes %s: class %d, but the data has %d classes (0 to %d)", FormatClasses(classes), c, d.Classes, d.Classes-1)
		}
		pos[c] = j
	}
	var inIdx, outIdx []int
	for i, y := range d.Labels {
		if _, ok := pos[y]; ok {
			inIdx = append(inIdx, i)
		} else {
			outIdx = append(outIdx, i)
		}
	}
	if len(inIdx) == 0 {
		return nil, nil, fmt.Errorf("classes %s: no example of these classes in the data", FormatClasses(classes))
	}
	count := make([]int, len(classes))
	for _, i := range inIdx {
		count[pos[d.Labels[i]]]++
	}
	for j, n := range count {
		if n == 0 { // a model of an output no example trains
			return nil, nil, fmt.Errorf("classes %s: class %d has no example in the data (%d examples of the others)", FormatClasses(classes), classes[j], len(inIdx))
		}
	}
	in = d.Subset(inIdx)
	in.Classes = len(classes)
	for i, y := range in.Labels {
		in.Labels[i] = pos[y]
	}
	if len(outIdx) > 0 {
		heldOut = d.Subset(outIdx)
		heldOut.Classes = len(classes)
		clear(heldOut.Labels)
	}
	return in, heldOut, nil
}

// CheckSameClasses reports an error, naming both runs and their classes,
// when run dir was trained on other classes than run first.
func CheckSameClasses(first string, firstClasses []int, dir string, classes []int) error {
	if !slices.Equal(firstClasses, classes) {
		return fmt.Errorf("run %s was trained on %s, run %s on %s: their predictions are over different classes, refusing to pool or compare them", dir, classesText(classes), first, classesText(firstClasses))
	}
	return nil
}
