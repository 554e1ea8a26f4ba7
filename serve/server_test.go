package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/predictive"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// tinyPosterior trains a 16-8-3 run on synthetic images (milliseconds)
// and loads it, with held-out images of the same classes.
func tinyPosterior(t *testing.T) (*predictive.Posterior, *datasets.Dataset) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	all, err := datasets.SyntheticImages(400, 16, 3, rng)
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int, 400)
	for i := range idx {
		idx[i] = i
	}
	data, test := all.Subset(idx[:300]), all.Subset(idx[300:])
	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Validation = "16-8-3", 0
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch, cfg.LR = 300, 100, 20, 32, 0.5
	dir := filepath.Join(t.TempDir(), "run")
	run, err := train.NewChains(dir, cfg, true, runspec.DefaultSetup().WithTrain(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	post, err := predictive.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := post.FixAbstention(test, 0.1, "held-out images"); err != nil {
		t.Fatal(err)
	}
	return post, test
}

func newTestServer(t *testing.T, post *predictive.Posterior, opt Options) (*Server, *httptest.Server) {
	t.Helper()
	srv, err := New(post, opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return srv, ts
}

// post sends body to /v1/predict and decodes the answer.
func post(t *testing.T, url, contentType string, body []byte) (int, predictResponse, string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/predict", contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var pr predictResponse
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &pr); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
	}
	return resp.StatusCode, pr, string(b)
}

func jsonBody(t *testing.T, images [][]float32) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"images": images})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rows(d *datasets.Dataset) [][]float32 {
	var out [][]float32
	for i := 0; i < d.N; i++ {
		out = append(out, d.Row(i))
	}
	return out
}

// idxBody encodes images as an IDX file of unsigned bytes (4x4 images).
func idxBody(t *testing.T, d *datasets.Dataset, typ byte) []byte {
	t.Helper()
	a := &datasets.IDX{Type: typ, Dims: []int{d.N, 4, 4}}
	for _, v := range d.X {
		if typ == datasets.IDXUint8 {
			a.Data = append(a.Data, math.Round(float64(v)*255))
		} else {
			a.Data = append(a.Data, float64(v))
		}
	}
	var b bytes.Buffer
	if err := datasets.WriteIDX(&b, a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPredictAnswers: a JSON request of the held-out images answers the
// Posterior's predictions of them exactly (JSON carries float64 exactly),
// in order, with the samples and temperature; an IDX of unsigned bytes
// answers the predictions of the images scaled by 1/255, an IDX of
// float32 those of the images themselves.
func TestPredictAnswers(t *testing.T) {
	p, test := tinyPosterior(t)
	_, ts := newTestServer(t, p, Options{})
	want, err := p.PredictData(test)
	if err != nil {
		t.Fatal(err)
	}
	quant := &datasets.Dataset{N: test.N, D: test.D, Classes: test.Classes}
	for _, v := range test.X {
		quant.X = append(quant.X, float32(math.Round(float64(v)*255)/255))
	}
	wantQ, err := p.PredictData(quant)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, ct string
		body     []byte
		want     []predictive.Prediction
	}{
		{"JSON", "application/json", jsonBody(t, rows(test)), want},
		{"JSON with charset", "application/json; charset=utf-8", jsonBody(t, rows(test)), want},
		{"IDX of bytes", "application/octet-stream", idxBody(t, test, datasets.IDXUint8), wantQ},
		{"IDX of float32", "application/octet-stream", idxBody(t, test, datasets.IDXFloat32), want},
	} {
		code, got, raw := post(t, ts.URL, c.ct, c.body)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, code, raw)
		}
		if got.Samples != p.Samples() || got.Temperature != p.Temperature || len(got.Predictions) != test.N {
			t.Fatalf("%s: %d samples, T %v, %d predictions", c.name, got.Samples, got.Temperature, len(got.Predictions))
		}
		for i, g := range got.Predictions {
			w := c.want[i]
			if fmt.Sprint(g.Probabilities) != fmt.Sprint(w.Probabilities) || g.Class != w.Class || g.Entropy != w.Entropy ||
				g.MutualInformation != w.MutualInformation || g.MaxProb != w.MaxProb || g.Abstain != w.Abstain || g.Reason != w.Reason {
				t.Fatalf("%s: image %d: %+v, want %+v", c.name, i, g, w)
			}
		}
	}
}

// TestBadInput sends every kind of bad request: each gets its 4xx status
// and a JSON error naming what was wrong, and the server answers a good
// request after them all.
func TestBadInput(t *testing.T) {
	p, test := tinyPosterior(t)
	_, ts := newTestServer(t, p, Options{Limits: Limits{MaxImages: 5}})
	good := rows(test)[:2]
	short := [][]float32{test.Row(0), test.Row(1)[:15]}
	idx := idxBody(t, test.Subset([]int{0, 1}), datasets.IDXUint8)
	wrongSize := append([]byte{0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 5}, make([]byte, 25)...)
	ints := []byte{0, 0, 0x0C, 2, 0, 0, 0, 1, 0, 0, 0, 16}
	ints = append(ints, make([]byte, 64)...)
	nanIDX := idxBody(t, test.Subset([]int{0}), datasets.IDXFloat32)
	copy(nanIDX[16+4*3:], []byte{0x7f, 0xc0, 0, 0}) // float32 NaN, big endian, at value 3
	for _, c := range []struct {
		name, method, path, ct string
		body                   string
		code                   int
		want                   string
	}{
		{"malformed JSON", "POST", "/v1/predict", "application/json", `{"images": [[0.1, 0.2}`, 400, "malformed JSON at byte"},
		{"NaN in JSON", "POST", "/v1/predict", "application/json", `{"images": [[NaN]]}`, 400, "NaN and infinities are not JSON numbers"},
		{"string value", "POST", "/v1/predict", "application/json", `{"images": [["0.5"]]}`, 400, "images holds a JSON string"},
		{"truncated JSON", "POST", "/v1/predict", "application/json", `{"images": [[0.5`, 400, "ends inside"},
		{"trailing data", "POST", "/v1/predict", "application/json", string(jsonBody(t, good)) + "{}", 400, "data after the request object"},
		{"unknown field", "POST", "/v1/predict", "application/json", `{"imgs": [[0.5]]}`, 400, "unknown field \"imgs\""},
		{"empty body", "POST", "/v1/predict", "application/json", ``, 400, "empty body"},
		{"no images field", "POST", "/v1/predict", "application/json", `{}`, 400, "no \"images\" field"},
		{"empty batch", "POST", "/v1/predict", "application/json", `{"images": []}`, 400, "empty batch"},
		{"wrong length", "POST", "/v1/predict", "application/json", string(jsonBody(t, short)), 400, "image 1 has 15 values, the model 16-8-3 takes 16"},
		{"value above 1", "POST", "/v1/predict", "application/json", `{"images": [[` + strings.Repeat("0.5,", 15) + `1.5]]}`, 400, "image 0, value 15: 1.5 is outside [0, 1]"},
		{"negative value", "POST", "/v1/predict", "application/json", `{"images": [[-0.25` + strings.Repeat(",0.5", 15) + `]]}`, 400, "image 0, value 0: -0.25 is outside [0, 1]"},
		{"too many images", "POST", "/v1/predict", "application/json", string(jsonBody(t, rows(test)[:6])), 413, "6 images: at most 5 a request"},
		{"body over the limit", "POST", "/v1/predict", "application/json", `{"images": [[` + strings.Repeat("0.5,", 1<<16) + `0.5]]}`, 413, "request body over the limit"},
		{"wrong content type", "POST", "/v1/predict", "text/csv", "0.5,0.5", 415, "Content-Type text/csv"},
		{"curl's default type", "POST", "/v1/predict", "application/x-www-form-urlencoded", string(jsonBody(t, good)), 415, "curl needs -H"},
		{"IDX of another size", "POST", "/v1/predict", "application/octet-stream", string(wrongSize), 400, "hold 25 values each, the model 16-8-3 takes 16"},
		{"IDX of ints", "POST", "/v1/predict", "application/octet-stream", string(ints), 400, "IDX elements of type 0x0c"},
		{"IDX truncated", "POST", "/v1/predict", "application/octet-stream", string(idx[:len(idx)-3]), 400, "malformed IDX image file: truncated data"},
		{"IDX with trailing bytes", "POST", "/v1/predict", "application/octet-stream", string(idx) + "xyz", 400, "trailing data after the 32 elements"},
		{"IDX gzip", "POST", "/v1/predict", "application/octet-stream", "\x1f\x8b\x08\x00", 400, "gzip-compressed"},
		{"IDX of one dimension", "POST", "/v1/predict", "application/octet-stream", string([]byte{0, 0, 8, 1, 0, 0, 0, 2, 1, 2}), 400, "expected images (count, rows[, cols])"},
		{"IDX of no images", "POST", "/v1/predict", "application/octet-stream", string([]byte{0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 4}), 400, "empty batch: the IDX of dimensions [0 4 4] declares 0 images"},
		{"IDX NaN", "POST", "/v1/predict", "application/octet-stream", string(nanIDX), 400, "image 0, value 3: NaN is outside [0, 1]"},
		{"GET predict", "GET", "/v1/predict", "", "", 405, "method GET: /v1/predict takes POST"},
		{"POST model", "POST", "/v1/model", "application/json", "{}", 405, "takes GET"},
		{"unknown path", "GET", "/v2/predict", "", "", 404, "no such path /v2/predict"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Error string `json:"error"`
			}
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &e); err != nil || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("answer %q (%s) is not a JSON error: %v", b, resp.Header.Get("Content-Type"), err)
			}
			if resp.StatusCode != c.code || !strings.Contains(e.Error, c.want) {
				t.Fatalf("%d %q, want %d and %q", resp.StatusCode, e.Error, c.code, c.want)
			}
		})
	}
	if code, got, raw := post(t, ts.URL, "application/json", jsonBody(t, good)); code != 200 || len(got.Predictions) != 2 {
		t.Fatalf("a good request after the bad ones: %d %s", code, raw)
	}
}

// TestModelHealthMetrics: /v1/model describes the posterior and its
// abstention rule; /healthz says ok; /metrics counts the requests, images
// and passes in the Prometheus text format.
func TestModelHealthMetrics(t *testing.T) {
	p, test := tinyPosterior(t)
	_, ts := newTestServer(t, p, Options{})
	var info predictive.Info
	getJSON(t, ts.URL+"/v1/model", &info)
	if info.Samples != p.Samples() || info.Model != "16-8-3" || len(info.Classes) != 3 || info.Abstention == nil ||
		info.Abstention.Rate != 0.1 || !strings.Contains(info.Abstention.Method, "0.9 quantile") {
		t.Fatalf("/v1/model: %+v", info)
	}
	var h map[string]any
	getJSON(t, ts.URL+"/healthz", &h)
	if h["status"] != "ok" {
		t.Fatalf("/healthz: %v", h)
	}
	post(t, ts.URL, "application/json", jsonBody(t, rows(test)[:3]))
	post(t, ts.URL, "application/json", []byte(`{}`))
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`ptsghmc_requests_total{path="/v1/predict",code="200"} 1`,
		`ptsghmc_requests_total{path="/v1/predict",code="400"} 1`,
		`ptsghmc_requests_total{path="/v1/model",code="200"} 1`,
		"ptsghmc_predicted_images_total 3\n",
		"ptsghmc_ensemble_passes_total 1\n",
		fmt.Sprintf("ptsghmc_posterior_samples %d\n", p.Samples()),
		"ptsghmc_queued_requests 0\n",
		"# TYPE ptsghmc_predict_request_seconds histogram",
		`ptsghmc_ensemble_pass_images_bucket{le="4"} 1`,
		`ptsghmc_ensemble_pass_images_bucket{le="2"} 0`,
		`ptsghmc_predict_request_seconds_bucket{le="+Inf"} 1`,
		"ptsghmc_predict_request_seconds_count 1\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, b)
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// holder holds ensemble passes: the first BeforePass call signals entered
// and waits for release.
type holder struct {
	entered, release chan struct{}
	once             sync.Once
}

func newHolder() *holder { return &holder{entered: make(chan struct{}), release: make(chan struct{})} }

func (h *holder) beforePass() {
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
}

// TestMergedPasses: requests that arrive while a pass runs share the next
// pass (two passes for nine requests), and each gets its own images'
// predictions.
func TestMergedPasses(t *testing.T) {
	p, test := tinyPosterior(t)
	h := newHolder()
	srv, ts := newTestServer(t, p, Options{BeforePass: h.beforePass})
	want, _ := p.PredictData(test)
	type answer struct {
		code int
		pr   predictResponse
		raw  string
	}
	answers := make([]answer, 9)
	var wg sync.WaitGroup
	send := func(i int) {
		defer wg.Done()
		code, pr, raw := post(t, ts.URL, "application/json", jsonBody(t, [][]float32{test.Row(i)}))
		answers[i] = answer{code, pr, raw}
	}
	wg.Add(1)
	go send(0)
	<-h.entered // the first pass is held; the others queue behind it
	for i := 1; i < 9; i++ {
		wg.Add(1)
		go send(i)
	}
	waitFor(t, func() bool { return srv.batcher.Waiting() == 8 }) // the eight queue behind the held pass
	close(h.release)
	wg.Wait()
	for i, a := range answers {
		if a.code != 200 || len(a.pr.Predictions) != 1 {
			t.Fatalf("request %d: %d %s", i, a.code, a.raw)
		}
		if g, w := a.pr.Predictions[0].Probabilities, want[i].Probabilities; !slices.Equal(g, w) || a.pr.Predictions[0].Class != want[i].Class {
			t.Fatalf("request %d: %v, want %v", i, g, w)
		}
	}
	if n := srv.metrics.passes.Load(); n != 2 {
		t.Fatalf("%d passes for 9 requests, 8 of them queued behind the first: want 2", n)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// TestShutdownInFlight: a request whose pass is in flight when Shutdown
// starts finishes with its answer, Shutdown waits for it, and the server
// takes no new connection after.
func TestShutdownInFlight(t *testing.T) {
	p, test := tinyPosterior(t)
	h := newHolder()
	srv, err := New(p, Options{BeforePass: h.beforePass})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer srv.Close()
	want, _ := p.PredictData(test)
	type answer struct {
		code int
		pr   predictResponse
		raw  string
	}
	got := make(chan answer, 1)
	go func() {
		code, pr, raw := post(t, ts.URL, "application/json", jsonBody(t, rows(test)[:4]))
		got <- answer{code, pr, raw}
	}()
	<-h.entered
	shut := make(chan error, 1)
	go func() { shut <- ts.Config.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(h.release)
	a := <-got
	if a.code != 200 || len(a.pr.Predictions) != 4 || a.pr.Predictions[3].Class != want[3].Class {
		t.Fatalf("the request in flight: %d %s", a.code, a.raw)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := http.Get(ts.URL + "/healthz"); err == nil {
		t.Fatal("a new request was taken after Shutdown")
	}
}

// TestWriteTimeout503: under an http.Server's write timeout, a request
// whose pass is held and one queued behind it are both answered with a
// JSON 503 before the connection's write deadline (net/http does not
// cancel a request's context at its write timeout: the handler's own
// deadline, AnswerWithin, does); the server answers again once the pass
// ends.
func TestWriteTimeout503(t *testing.T) {
	p, test := tinyPosterior(t)
	h := newHolder()
	const wt = time.Second
	srv, err := New(p, Options{BeforePass: h.beforePass, WriteTimeout: wt})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.WriteTimeout = wt
	ts.Start()
	released := false
	release := func() {
		if !released {
			released = true
			close(h.release)
		}
	}
	defer func() { release(); ts.Close(); srv.Close() }()
	type answer struct {
		code    int
		ct, raw string
		err     error
		took    time.Duration
	}
	client := &http.Client{Timeout: 5 * wt} // without the handler's deadline, the test ends here
	send := func(got chan<- answer) {
		start := time.Now()
		resp, err := client.Post(ts.URL+"/v1/predict", "application/json", bytes.NewReader(jsonBody(t, [][]float32{test.Row(0)})))
		if err != nil {
			got <- answer{err: err, took: time.Since(start)}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{code: resp.StatusCode, ct: resp.Header.Get("Content-Type"), raw: string(b), err: err, took: time.Since(start)}
	}
	running, queued := make(chan answer, 1), make(chan answer, 1)
	go send(running)
	<-h.entered // the first request's pass is held
	go send(queued)
	for name, ch := range map[string]chan answer{"in its pass": running, "queued": queued} {
		a := <-ch
		var e struct {
			Error string `json:"error"`
		}
		if a.err != nil {
			t.Errorf("the request %s: %v after %s; want a 503 before the write timeout %s", name, a.err, a.took, wt)
			continue
		}
		if jerr := json.Unmarshal([]byte(a.raw), &e); jerr != nil || a.ct != "application/json" || a.code != http.StatusServiceUnavailable ||
			!strings.Contains(e.Error, "no answer within 900ms") || a.took >= wt {
			t.Errorf("the request %s: %d %s %q after %s; want a JSON 503 saying \"no answer within 900ms\" before %s", name, a.code, a.ct, a.raw, a.took, wt)
		}
	}
	release()
	if code, got, raw := post(t, ts.URL, "application/json", jsonBody(t, rows(test)[:2])); code != 200 || len(got.Predictions) != 2 {
		t.Fatalf("a request after the held pass: %d %s", code, raw)
	}
}

// TestAnswerWithin: the deadline is the write timeout less a tenth (0.1
// to 2 s), at least half of it; none without a write timeout.
func TestAnswerWithin(t *testing.T) {
	for _, c := range []struct{ wt, want time.Duration }{
		{0, 0}, {-time.Second, 0},
		{2 * time.Minute, 118 * time.Second},
		{10 * time.Second, 9 * time.Second},
		{time.Second, 900 * time.Millisecond},
		{150 * time.Millisecond, 75 * time.Millisecond},
	} {
		if got := AnswerWithin(c.wt); got != c.want {
			t.Errorf("AnswerWithin(%s) = %s, want %s", c.wt, got, c.want)
		}
	}
}
