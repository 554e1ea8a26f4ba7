// Command serve-load is the bounded load test of ptsghmc serve (make
// serve-load): it starts the server on a run, on the loopback address only,
// sends requests from N concurrent clients for a warm-up and then for T
// seconds, prints the throughput, the latency percentiles, the errors and
// the server's resident memory before and after, and stops the server with
// SIGTERM. It stops by itself.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
)

type settings struct {
	bin, run, data, serveArgs string
	clients, images           int
	warmup, seconds           time.Duration
}

func main() {
	var s settings
	flag.StringVar(&s.bin, "bin", "bin/ptsghmc", "the ptsghmc binary")
	flag.StringVar(&s.run, "run", "runs/default", "run directory to serve")
	flag.StringVar(&s.data, "data", datasets.DefaultDir, "data directory whose test images the clients send")
	flag.StringVar(&s.serveArgs, "serve-args", "", "further flags of ptsghmc serve, space-separated (e.g. \"--batch-images 1\")")
	flag.IntVar(&s.clients, "clients", 32, "concurrent clients, each sending one request after another")
	flag.IntVar(&s.images, "images", 1, "images per request")
	flag.DurationVar(&s.warmup, "warmup", 10*time.Second, "load before the measurement (not counted)")
	flag.DurationVar(&s.seconds, "seconds", 60*time.Second, "length of the measurement")
	flag.Parse()
	if err := loadTest(s); err != nil {
		log.Fatalf("serve-load: %v", err)
	}
}

// server is the ptsghmc serve child process.
type server struct {
	cmd  *exec.Cmd
	addr string
	out  *bytes.Buffer
	done chan error
}

// startServer starts ptsghmc serve on 127.0.0.1 with a port the kernel
// picks and waits until it says where it listens.
func startServer(s settings) (*server, error) {
	extra := strings.Fields(s.serveArgs)
	for _, a := range extra {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name == "addr" {
			return nil, errors.New("--serve-args may not set --addr: the load test stays on 127.0.0.1")
		}
	}
	args := append([]string{"serve", "--run", s.run, "--addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(s.bin, args...)
	cmd.Stderr = os.Stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	srv := &server{cmd: cmd, out: &bytes.Buffer{}, done: make(chan error, 1)}
	sc := bufio.NewScanner(pipe)
	for srv.addr == "" && sc.Scan() {
		fmt.Printf("  server: %s\n", sc.Text())
		if rest, ok := strings.CutPrefix(sc.Text(), "serving on http://"); ok {
			srv.addr, _, _ = strings.Cut(rest, " ")
		}
	}
	if srv.addr == "" || !strings.HasPrefix(srv.addr, "127.0.0.1:") {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("%s %s did not start on 127.0.0.1", s.bin, strings.Join(args, " "))
	}
	go func() {
		io.Copy(srv.out, pipe)
		srv.done <- cmd.Wait()
	}()
	return srv, nil
}

// rssKiB reads a process's resident set size from /proc (Linux).
func rssKiB(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, errors.New("no VmRSS line")
}

// bodies returns request bodies of n test images each, cycling through
// the test images.
func bodies(dir string, n int) ([][]byte, error) {
	_, test, err := datasets.LoadMNIST(dir)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for start := 0; start+n <= test.N && len(out) < 500; start += n {
		imgs := make([][]float32, n)
		for i := range imgs {
			imgs[i] = test.Row(start + i)
		}
		b, err := json.Marshal(map[string]any{"images": imgs})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// stats are what the clients saw in one phase.
type stats struct {
	mu        sync.Mutex
	latencies []time.Duration
	errors    map[string]int
}

func (st *stats) record(d time.Duration, err string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != "" {
		st.errors[err]++
		return
	}
	st.latencies = append(st.latencies, d)
}

// drive runs the clients until ctx ends.
func drive(ctx context.Context, addr string, clients int, reqs [][]byte) *stats {
	st := &stats{errors: map[string]int{}}
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Minute}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; ctx.Err() == nil; i += clients {
				start := time.Now()
				resp, err := client.Post("http://"+addr+"/v1/predict", "application/json", bytes.NewReader(reqs[i%len(reqs)]))
				if err != nil {
					st.record(0, "transport: "+err.Error())
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					st.record(0, "read: "+err.Error())
				case resp.StatusCode != 200:
					st.record(0, fmt.Sprintf("%s: %.100s", resp.Status, b))
				case !bytes.HasPrefix(b, []byte(`{"predictions":[`)):
					st.record(0, "answer without predictions")
				default:
					st.record(time.Since(start), "")
				}
			}
		}()
	}
	wg.Wait()
	tr.CloseIdleConnections()
	return st
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}

// metric reads one counter of the server's /metrics.
func metric(addr, name string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("/metrics has no %s", name)
}

func loadTest(s settings) error {
	if s.clients < 1 || s.images < 1 || s.seconds <= 0 || s.warmup < 0 {
		return fmt.Errorf("want --clients, --images >= 1, --seconds > 0, --warmup >= 0")
	}
	reqs, err := bodies(s.data, s.images)
	if err != nil {
		return err
	}
	t0 := time.Now()
	srv, err := startServer(s)
	if err != nil {
		return err
	}
	defer srv.cmd.Process.Kill() // on the error paths; SIGTERM below otherwise
	pid := srv.cmd.Process.Pid
	fmt.Printf("server pid %d on %s, started in %s\n", pid, srv.addr, time.Since(t0).Round(time.Millisecond))
	rss0, err := rssKiB(pid)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.warmup)
	warm := drive(ctx, srv.addr, s.clients, reqs)
	cancel()
	rss1, _ := rssKiB(pid)
	passes0, _ := metric(srv.addr, "ptsghmc_ensemble_passes_total")
	images0, _ := metric(srv.addr, "ptsghmc_predicted_images_total")
	ctx, cancel = context.WithTimeout(context.Background(), s.seconds)
	start := time.Now()
	st := drive(ctx, srv.addr, s.clients, reqs)
	elapsed := time.Since(start)
	cancel()
	rss2, _ := rssKiB(pid)
	passes1, _ := metric(srv.addr, "ptsghmc_ensemble_passes_total")
	images1, _ := metric(srv.addr, "ptsghmc_predicted_images_total")
	report(s, warm, st, elapsed, passes1-passes0, images1-images0, [3]int{rss0, rss1, rss2})
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-srv.done:
		fmt.Printf("server after SIGTERM: %s", indent(srv.out.String()))
		if err != nil {
			return fmt.Errorf("server exit: %w", err)
		}
	case <-time.After(2 * time.Minute):
		return errors.New("server still running 2 minutes after SIGTERM")
	}
	if n := errorCount(st) + errorCount(warm); n > 0 {
		return fmt.Errorf("%d requests failed", n)
	}
	return nil
}

func errorCount(st *stats) int {
	n := 0
	for _, c := range st.errors {
		n += c
	}
	return n
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

// report prints the measurement.
func report(s settings, warm, st *stats, elapsed time.Duration, passes, images float64, rss [3]int) {
	lat := slices.Clone(st.latencies)
	slices.Sort(lat)
	n := len(lat)
	fmt.Printf("\n%d clients, %d image(s) a request, %s warm-up (%d requests) then %s measured, server flags %q\n",
		s.clients, s.images, s.warmup, len(warm.latencies), elapsed.Round(time.Millisecond), s.serveArgs)
	fmt.Printf("throughput   %.1f requests/s, %.1f images/s (%d requests answered)\n", float64(n)/elapsed.Seconds(), images/elapsed.Seconds(), n)
	fmt.Printf("latency      p50 %s, p90 %s, p99 %s, max %s\n", percentile(lat, 0.5).Round(time.Millisecond),
		percentile(lat, 0.9).Round(time.Millisecond), percentile(lat, 0.99).Round(time.Millisecond), percentile(lat, 1).Round(time.Millisecond))
	if passes > 0 {
		fmt.Printf("passes       %.0f ensemble passes, %.1f images a pass\n", passes, images/passes)
	}
	fmt.Printf("errors       %d measured, %d in warm-up\n", errorCount(st), errorCount(warm))
	for e, c := range st.errors {
		fmt.Printf("  %d x %s\n", c, e)
	}
	fmt.Printf("server RSS   %.1f MiB loaded and idle, %.1f MiB after warm-up, %.1f MiB after the measurement (%+.1f%% from warm-up)\n",
		float64(rss[0])/1024, float64(rss[1])/1024, float64(rss[2])/1024, 100*(float64(rss[2])/float64(rss[1])-1))
}
