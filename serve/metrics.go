package serve

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// metrics are the server's counters, written in the Prometheus text
// exposition format (version 0.0.4) by hand: a handful of counters and two
// histograms need no client library.
type metrics struct {
	mu       sync.Mutex
	requests map[[2]string]uint64 // {path, status code} -> count
	inFlight atomic.Int64

	images, abstained, passes atomic.Uint64
	latency                   histogram // seconds per /v1/predict request
	passTime                  histogram // seconds per ensemble pass
	passImages                histogram // images per ensemble pass
}

// histogram is a Prometheus histogram: cumulative counts per upper bound.
type histogram struct {
	mu     sync.Mutex
	bounds []float64
	counts []uint64 // per bound, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func newHistogram(bounds ...float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v: le is inclusive
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.n++
	h.mu.Unlock()
}

func newMetrics() *metrics {
	return &metrics{
		requests:   map[[2]string]uint64{},
		latency:    newHistogram(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
		passTime:   newHistogram(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
		passImages: newHistogram(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
	}
}

// request counts an answer; paths other than the server's count as
// "other" (a scan of random paths cannot grow the table).
func (m *metrics) request(path string, code int) {
	switch path {
	case "/v1/predict", "/v1/model", "/healthz", "/metrics":
	default:
		path = "other"
	}
	m.mu.Lock()
	m.requests[[2]string{path, strconv.Itoa(code)}]++
	m.mu.Unlock()
}

func (m *metrics) pass(images int, d time.Duration) {
	m.passes.Add(1)
	m.passTime.observe(d.Seconds())
	m.passImages.observe(float64(images))
}

// write writes every metric in the text format; samples is the posterior's
// number of samples (a gauge).
func (m *metrics) write(w io.Writer, samples, queued int) {
	fmt.Fprintf(w, "# HELP ptsghmc_requests_total HTTP requests answered, by path and status code.\n# TYPE ptsghmc_requests_total counter\n")
	m.mu.Lock()
	keys := make([][2]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if a[0] != b[0] {
			return strings.Compare(a[0], b[0])
		}
		return strings.Compare(a[1], b[1])
	})
	for _, k := range keys {
		fmt.Fprintf(w, "ptsghmc_requests_total{path=%q,code=%q} %d\n", k[0], k[1], m.requests[k])
	}
	m.mu.Unlock()
	counter := func(name, help string, v uint64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	gauge := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	counter("ptsghmc_predicted_images_total", "Images answered by /v1/predict.", m.images.Load())
	counter("ptsghmc_abstained_images_total", "Images answered with abstain true.", m.abstained.Load())
	counter("ptsghmc_ensemble_passes_total", "Ensemble passes over the posterior's samples.", m.passes.Load())
	gauge("ptsghmc_in_flight_requests", "Requests being answered.", m.inFlight.Load())
	gauge("ptsghmc_queued_requests", "Requests waiting for the next ensemble pass (queued behind the one in progress).", int64(queued))
	gauge("ptsghmc_posterior_samples", "Weight samples the ensemble averages.", int64(samples))
	m.latency.write(w, "ptsghmc_predict_request_seconds", "Time to answer a /v1/predict request, from its headers to its answer.")
	m.passTime.write(w, "ptsghmc_ensemble_pass_seconds", "Duration of one ensemble pass.")
	m.passImages.write(w, "ptsghmc_ensemble_pass_images", "Images predicted by one ensemble pass (concurrent requests merged).")
}

func (h *histogram) write(w io.Writer, name, help string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	cum := uint64(0)
	for i, b := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(w, "%s_bucket{le=%q} %d\n", name, strconv.FormatFloat(b, 'g', -1, 64), cum)
	}
	cum += h.counts[len(h.bounds)]
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %s\n%s_count %d\n", name, cum, name, strconv.FormatFloat(h.sum, 'g', -1, 64), name, h.n)
}
