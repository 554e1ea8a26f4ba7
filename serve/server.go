package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ptsghmc/ptsghmc/predictive"
)

// Limits bound what one request may ask.
type Limits struct {
	// MaxImages is the most images one /v1/predict request may hold
	// (DefaultMaxImages when 0).
	MaxImages int
	// MaxBody is the most bytes a request body may have (0: room for
	// MaxImages images of the model's size as JSON, BodyBytes).
	MaxBody int64
	// BatchImages bounds the images of concurrent requests merged into one
	// ensemble pass (0: DefaultBatchImages; 1: one pass per request).
	BatchImages int
}

// DefaultMaxImages is Limits.MaxImages's default.
const DefaultMaxImages = 256

// DefaultBatchImages is Limits.BatchImages's default: passes of up to 512
// images (docs/serve.md: merging is what makes 32 concurrent clients
// affordable).
const DefaultBatchImages = 512

// BodyBytes is the default body limit for images of inputs values: 24
// bytes a value (a float's digits, a comma and spaces) and 64 KiB besides.
func BodyBytes(images, inputs int) int64 { return int64(images)*int64(inputs)*24 + 64<<10 }

// Server is the http.Handler of a posterior. Close it after the
// http.Server that uses it has shut down.
type Server struct {
	post    *predictive.Posterior
	limits  Limits
	batcher *predictive.Batcher
	metrics *metrics
	mux     *http.ServeMux
	info    []byte        // /v1/model's answer, fixed at New
	within  time.Duration // AnswerWithin(Options.WriteTimeout): a predict request's deadline (0: none)
}

// Options are New's settings besides the limits.
type Options struct {
	Limits
	// BeforePass, when not nil, is called before each ensemble pass
	// (predictive.BatcherOptions.BeforePass).
	BeforePass func()
	// WriteTimeout is the WriteTimeout of the http.Server that serves the
	// handler (0: none). net/http does not cancel a request's context when
	// it passes, so a /v1/predict request still queued or in its ensemble
	// pass at AnswerWithin(WriteTimeout) is answered 503 by the handler
	// itself, before the connection's write deadline cuts the answer off.
	WriteTimeout time.Duration
}

// AnswerWithin returns how long a /v1/predict request may wait for its
// pass under an http.Server's write timeout wt before it is answered 503:
// wt less a margin for writing the answer (a tenth of wt, from 100 ms to
// 2 s), and at least half of wt; 0 (no bound) when wt <= 0.
func AnswerWithin(wt time.Duration) time.Duration {
	if wt <= 0 {
		return 0
	}
	margin := min(max(wt/10, 100*time.Millisecond), 2*time.Second)
	return max(wt-margin, wt/2)
}

// New returns the handler of post's predictions. The posterior's
// abstention rule must be fixed before (it is part of /v1/model).
func New(post *predictive.Posterior, opt Options) (*Server, error) {
	l := opt.Limits
	if l.MaxImages == 0 {
		l.MaxImages = DefaultMaxImages
	}
	if l.MaxBody == 0 {
		l.MaxBody = BodyBytes(l.MaxImages, post.Model.Inputs)
	}
	if l.BatchImages == 0 {
		l.BatchImages = DefaultBatchImages
	}
	if l.MaxImages < 1 || l.MaxBody < 1 || l.BatchImages < 1 {
		return nil, fmt.Errorf("serve: limits %+v: every limit must be positive", l)
	}
	info, err := json.Marshal(post.Info())
	if err != nil {
		return nil, fmt.Errorf("serve: /v1/model: %w", err)
	}
	s := &Server{post: post, limits: l, metrics: newMetrics(), mux: http.NewServeMux(), info: info, within: AnswerWithin(opt.WriteTimeout)}
	s.batcher = predictive.NewBatcher(post, predictive.BatcherOptions{MaxImages: l.BatchImages, BeforePass: opt.BeforePass,
		OnPass: func(_, images int, d time.Duration, err error) {
			if err == nil {
				s.metrics.pass(images, d)
			}
		}})
	s.mux.HandleFunc("/v1/predict", s.only(http.MethodPost, s.predict))
	s.mux.HandleFunc("/v1/model", s.only(http.MethodGet, s.model))
	s.mux.HandleFunc("/healthz", s.only(http.MethodGet, s.healthz))
	s.mux.HandleFunc("/metrics", s.only(http.MethodGet, s.metricsText))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, fmt.Sprintf("no such path %s: the paths are POST /v1/predict, GET /v1/model, GET /healthz, GET /metrics", r.URL.Path))
	})
	return s, nil
}

// Limits returns the limits in force (defaults filled in).
func (s *Server) Limits() Limits { return s.limits }

// Answered returns how many requests of path (one of the server's paths)
// have been answered, whatever their status.
func (s *Server) Answered(path string) uint64 {
	s.metrics.mu.Lock()
	defer s.metrics.mu.Unlock()
	n := uint64(0)
	for k, v := range s.metrics.requests {
		if k[0] == path {
			n += v
		}
	}
	return n
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close stops the batcher: call it once the http.Server's Shutdown has
// returned (no request in flight).
func (s *Server) Close() { s.batcher.Close() }

// only refuses methods other than method (and HEAD with GET) with 405.
func (s *Server) only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", method)
			s.fail(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s: %s takes %s", r.Method, r.URL.Path, method))
			return
		}
		h(w, r)
	}
}

// predictResponse is /v1/predict's answer.
type predictResponse struct {
	Predictions []predictive.Prediction `json:"predictions"`
	Samples     int                     `json:"samples"`
	Temperature float64                 `json:"temperature"`
}

func (s *Server) predict(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.metrics.inFlight.Add(1)
	defer s.metrics.inFlight.Add(-1)
	// the connection's write deadline runs from the end of the request's
	// headers, about now; net/http does not cancel r.Context() when it
	// passes, so the request's own deadline comes a little before it
	ctx := r.Context()
	if s.within > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.within)
		defer cancel()
	}
	x, n, status, err := s.readImages(w, r)
	if err != nil {
		s.fail(w, r, status, err.Error())
		return
	}
	preds, err := s.batcher.Predict(ctx, x, n)
	var ie *predictive.InputError
	switch {
	case errors.As(err, &ie):
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		// the server's deadline: the passes are busy (the client still waits)
		w.Header().Set("Retry-After", "1")
		s.fail(w, r, http.StatusServiceUnavailable, fmt.Sprintf("no answer within %s (the server's write timeout less a margin): the ensemble passes are busy, retry later", s.within))
		return
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// the client went away (or the server's deadline passed): nobody reads an answer
		s.fail(w, r, http.StatusServiceUnavailable, "request cancelled before its answer: "+err.Error())
		return
	case errors.Is(err, predictive.ErrClosed):
		s.fail(w, r, http.StatusServiceUnavailable, "the server is shutting down")
		return
	case err != nil:
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	abstained := 0
	for _, p := range preds {
		if p.Abstain {
			abstained++
		}
	}
	s.metrics.images.Add(uint64(n))
	s.metrics.abstained.Add(uint64(abstained))
	s.reply(w, r, http.StatusOK, predictResponse{Predictions: preds, Samples: s.post.Samples(), Temperature: s.post.Temperature})
	s.metrics.latency.observe(time.Since(start).Seconds())
}

func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(s.info)
	s.metrics.request(r.URL.Path, http.StatusOK)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.reply(w, r, http.StatusOK, map[string]any{"status": "ok", "samples": s.post.Samples()})
}

func (s *Server) metricsText(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.metrics.request(r.URL.Path, http.StatusOK) // counted before it is written, so it counts itself
	s.metrics.write(w, s.post.Samples(), s.batcher.Waiting())
}

// reply writes v as JSON with status.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]string{"error": "encode the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
	s.metrics.request(r.URL.Path, status)
}

// fail answers {"error": msg} with status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.reply(w, r, status, map[string]string{"error": msg})
}
