package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/predictive"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/serve"
)

// serveFlags are the settings of ptsghmc serve.
type serveFlags struct {
	runs                                multiFlag
	addr, data                          string
	steps                               windowFlags
	maxImages, batchImages              int
	maxBody                             int64
	abstainRate                         float64
	otherData                           bool
	readTimeout, writeTimeout, shutdown time.Duration
}

// register defines serve's flags on fs, into f.
func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.runs, "run", "run directory (repeat to pool runs; a run of several chains stands for its chains)")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one, printed at start)")
	f.steps.register(fs)
	fs.Float64Var(&f.abstainRate, "abstain-rate", 0.05, "fix the abstention threshold at load time as the (1 - rate) quantile of the mutual information on the test images, so that this fraction of them abstains (0: never abstain, no test images read)")
	fs.StringVar(&f.data, "data", "", "data directory of the test images the threshold is fixed on (default: the first run's)")
	fs.BoolVar(&f.otherData, "other-data", false, "fix the threshold on --data even when its training set is not the runs' (default: refuse)")
	fs.IntVar(&f.maxImages, "max-images", serve.DefaultMaxImages, "most images in one request (more: 413)")
	fs.Int64Var(&f.maxBody, "max-body", 0, "most bytes in one request body (more: 413; 0: room for --max-images images as JSON)")
	fs.IntVar(&f.batchImages, "batch-images", serve.DefaultBatchImages, "most images of concurrent requests merged into one ensemble pass (1: one pass per request)")
	fs.DurationVar(&f.readTimeout, "read-timeout", 30*time.Second, "longest time to read a request, body included (0: no limit; the headers still have at most 10 s)")
	fs.DurationVar(&f.writeTimeout, "write-timeout", 2*time.Minute, "longest time from the end of a request's headers to the end of its answer (queue and ensemble pass included): a request still waiting for its pass at this less a margin (a tenth, 0.1 to 2 s) is answered 503 (0: no limit)")
	fs.DurationVar(&f.shutdown, "shutdown-timeout", time.Minute, "on SIGTERM or SIGINT, how long requests in flight may take to finish")
}

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serveFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: ptsghmc serve --run RUNDIR [--run RUNDIR2 ...] [--addr 127.0.0.1:8080] [--from-step S] [--to-step S] [--thin K] [--abstain-rate 0.05] [--data DIR]

Loads the pooled samples once and answers, until SIGTERM or SIGINT (requests
in flight finish):
  POST /v1/predict  {"images": [[...784 values in [0, 1]...], ...]} or an IDX
                    image file (Content-Type: application/octet-stream):
                    probabilities, class, entropy, mutual_information,
                    max_prob, abstain and reason per image (docs/serve.md)
  GET  /v1/model    architecture, samples, temperature, classes, the
                    abstention threshold and how it was fixed
  GET  /healthz     {"status": "ok"}
  GET  /metrics     counters in the Prometheus text format
A run still being written by train, or with a corrupt checkpoint or sample
record, is refused at start.

flags:`)
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(f.runs) == 0 {
		fmt.Fprintln(stderr, "serve: --run is required")
		fs.Usage()
		return errUsage
	}
	win, err := f.steps.window("serve")
	if err != nil {
		return err
	}
	if !(f.abstainRate >= 0 && f.abstainRate < 1) || f.maxImages < 1 || f.maxBody < 0 || f.batchImages < 1 {
		return fmt.Errorf("serve: want 0 <= --abstain-rate < 1, --max-images and --batch-images >= 1, --max-body >= 0 (got %g, %d, %d, %d)", f.abstainRate, f.maxImages, f.batchImages, f.maxBody)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"read-timeout", f.readTimeout}, {"write-timeout", f.writeTimeout}, {"shutdown-timeout", f.shutdown}} {
		if d.v < 0 {
			return fmt.Errorf("serve: --%s %s: expected a duration of 0 or more", d.flag, d.v)
		}
	}
	start := time.Now()
	post, err := predictive.LoadWith(runspec.DefaultSetup(), predictive.Options{Window: win}, f.runs...)
	if err != nil {
		return err
	}
	if f.abstainRate > 0 {
		if err := fixAbstention(post, f); err != nil {
			return err
		}
	}
	// The data read to fix the threshold (the training images too, for
	// their fingerprint) is garbage now: give it back to the system, so
	// the resident memory is the samples' and the evaluator's.
	debug.FreeOSMemory()
	holdMemory()
	srv, err := serve.New(post, serve.Options{Limits: serve.Limits{MaxImages: f.maxImages, MaxBody: f.maxBody, BatchImages: f.batchImages},
		WriteTimeout: f.writeTimeout})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(stdout, "loaded %d samples of %s (T = %g) in %s\n", post.Samples(), post.Model.Name, post.Temperature, time.Since(start).Round(time.Millisecond))
	if a := post.Info().Abstention; a != nil {
		fmt.Fprintf(stdout, "%s; test accuracy %.4f, NLL %.4f; accuracy on the rest %.4f\n", a.Method, a.Accuracy, a.NLL, a.AccuracyKept)
	}
	fmt.Fprintf(stdout, "serving on http://%s (POST /v1/predict, GET /v1/model, /healthz, /metrics); SIGTERM or SIGINT stops\n", ln.Addr())
	return serveUntilSignal(ln, srv, f, stdout)
}

// fixAbstention fixes post's abstention rule on the test images of the
// data directory (the first run's unless --data), checked to belong with
// the runs' training set.
func fixAbstention(post *predictive.Posterior, f serveFlags) error {
	dir := f.data
	if dir == "" {
		dir = post.Config.Data
	}
	full, test, err := datasets.LoadMNIST(dir)
	if err != nil {
		return fmt.Errorf("serve --abstain-rate %g needs the test images: %w (--data DIR, or --abstain-rate 0)", f.abstainRate, err)
	}
	if !f.otherData {
		for _, d := range f.runs {
			if err := rundir.CheckRunData(d, dir, full); err != nil {
				return fmt.Errorf("%w (--other-data fixes the threshold on it anyway)", err)
			}
		}
	}
	if len(post.Config.Classes) > 0 {
		if test, _, err = runspec.SelectClasses(test, post.Config.Classes); err != nil {
			return fmt.Errorf("serve --data %s: %w", dir, err)
		}
	}
	_, _, err = post.FixAbstention(test, f.abstainRate, "the test images of "+dir)
	return err
}

// headerTimeout is the longest time to read a request's headers: at most
// --read-timeout, when it is set.
const headerTimeout = 10 * time.Second

// httpServer returns the http.Server of h under serve's flags. Its header
// timeout is headerTimeout, or --read-timeout when shorter and not 0 (0
// there is no limit on the whole request, which does not lift the header
// timeout: net/http would take ReadHeaderTimeout 0 as ReadTimeout's).
func httpServer(h http.Handler, f serveFlags) *http.Server {
	header := headerTimeout
	if f.readTimeout > 0 {
		header = min(f.readTimeout, header)
	}
	return &http.Server{Handler: h, ReadTimeout: f.readTimeout, ReadHeaderTimeout: header,
		WriteTimeout: f.writeTimeout, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}

// serveUntilSignal serves on ln until SIGTERM or SIGINT, then shuts down:
// no new connections, requests in flight finish (up to --shutdown-timeout).
func serveUntilSignal(ln net.Listener, srv *serve.Server, f serveFlags, stdout io.Writer) error {
	hs := httpServer(srv, f)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stop() // a second signal kills
	fmt.Fprintf(stdout, "signal received: finishing the requests in flight (up to %s)\n", f.shutdown)
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdown)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
		return fmt.Errorf("serve: requests still in flight after --shutdown-timeout %s were cut off", f.shutdown)
	}
	if err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(stdout, "stopped: %d /v1/predict requests answered\n", srv.Answered("/v1/predict"))
	return nil
}

// holdMemory keeps the server's memory near what it holds once loaded. The
// samples are most of the Go heap, so the collector's default target (twice
// the live heap) would let request garbage grow the process by up to the
// samples' size before it collects: a soft limit of what the runtime holds
// now plus a margin (5%, at least 64 MiB) makes it collect sooner instead.
// A limit set by GOMEMLIMIT is kept.
func holdMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	held := int64(m.Sys - m.HeapReleased)
	debug.SetMemoryLimit(held + max(held/20, 64<<20))
}
