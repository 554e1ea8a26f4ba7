package diagnose

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/health"
)

// TestHealthJSONKeysAreSnakeCase: eval --json's health, every nested
// figure included (the per-coordinate check's units, the SGLD watch's),
// is keyed in lower snake case like the rest of eval's JSON, with its
// statuses as words.
func TestHealthJSONKeysAreSnakeCase(t *testing.T) {
	fig := health.HealthFigures{Status: health.HealthWarn, Langevin: &health.LangevinFigures{Unsure: &health.LangevinUnit{}}}
	fig.Coord.Hot.Status = health.HealthFail
	rep := HealthReport{Rungs: []RungHealth{{Last: fig, WorstWindow: fig, Pooled: fig}}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	keys := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				keys++
				if !snake.MatchString(k) {
					t.Errorf("%s.%s: not a lower snake-case key", path, k)
				}
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		}
	}
	walk("health", v)
	if keys < 150 {
		t.Errorf("%d keys walked: the nested figures are missing", keys)
	}
	rung := v.(map[string]any)["rungs"].([]any)[0].(map[string]any)
	last := rung["last"].(map[string]any)
	if last["status"] != "warn" || last["coord"].(map[string]any)["hot"].(map[string]any)["status"] != "fail" {
		t.Errorf("statuses %v and %v: want the words warn and fail", last["status"], last["coord"].(map[string]any)["hot"].(map[string]any)["status"])
	}
	var back RungHealth
	if err := json.Unmarshal(must(json.Marshal(rep.Rungs[0])), &back); err != nil {
		t.Fatal(err)
	}
	if back.Last.Status != health.HealthWarn || back.Last.Coord.Hot.Status != health.HealthFail {
		t.Errorf("read back: statuses %v and %v", back.Last.Status, back.Last.Coord.Hot.Status)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestHealthReportUnjudged checks that a run none of whose windows ended
// after burn-in is not called ok: its verdict read the burn-in alone.
func TestHealthReportUnjudged(t *testing.T) {
	for _, tc := range []struct {
		after int
		want  string
	}{{0, "posterior check: not judged"}, {3, "posterior check: ok"}} {
		rep := HealthReport{Watched: true, Posterior: true, Rungs: []RungHealth{{Windows: 3, After: tc.after}}}
		if s := rep.String(); !strings.Contains(s, tc.want) {
			t.Errorf("%d windows after burn-in: %q, want %q", tc.after, s, tc.want)
		}
	}
}
