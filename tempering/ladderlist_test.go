package tempering

import (
	"reflect"
	"strings"
	"testing"
)

// TestLadderList parses listed ladders: an entry with anything after its
// number is refused, naming it (it was read as its leading number).
func TestLadderList(t *testing.T) {
	for _, c := range []struct {
		list string
		want []float64
		err  string
	}{
		{"1,1.5,3", []float64{1, 1.5, 3}, ""},
		{" 1, 2.5e0 ,4", []float64{1, 2.5, 4}, ""},
		{"1,1.5x,3", nil, `entry 2, "1.5x", is not a number`},
		{"1,2,3,4junk", nil, `entry 4, "4junk", is not a number`},
		{"1,,3", nil, `entry 2, "", is not a number`},
		{"1 2,3", nil, `entry 1, "1 2", is not a number`},
		{"1,NaN", nil, "must increase strictly"},
	} {
		got, err := Ladder(c.list, 3, 2)
		if c.err == "" {
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("ladder %q: %v, %v; want %v", c.list, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ladder %q: %v, %v; want an error with %q", c.list, got, err, c.err)
		}
	}
}
