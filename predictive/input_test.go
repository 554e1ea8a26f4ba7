package predictive

import (
	"strings"
	"testing"
)

// TestAbstentionRefusesBadLabels checks that FixAbstention returns an
// error naming the label and the classes, not a panic (evaluate.Score's
// index), for labelled images whose labels are not the model's outputs.
func TestAbstentionRefusesBadLabels(t *testing.T) {
	run, test := tinyRun(t, 1, "float32")
	post, err := Load(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		label int
		want  string
	}{
		{"label = classes", 3, "label 3 of example 7 outside [0, 3)"},
		{"negative label", -1, "label -1 of example 7 outside [0, 3)"},
	} {
		bad := *test
		bad.Labels = append([]int(nil), test.Labels...)
		bad.Labels[7] = tc.label
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic: %v", tc.name, r)
				}
			}()
			_, _, err := post.FixAbstention(&bad, 0.1, "bad images")
			if err == nil || !strings.Contains(err.Error(), "bad images") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v, want one naming the set and %q", tc.name, err, tc.want)
			}
		}()
	}
}
