package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// startServe runs ptsghmc serve with args in a child process and returns
// it with the address it listens on, read from its standard output (the
// rest of which goes to out).
func startServe(t *testing.T, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "PTSGHMC_HELPER_ARGS="+strings.Join(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	sc := bufio.NewScanner(pipe)
	addr := ""
	for addr == "" && sc.Scan() {
		out.Write([]byte(sc.Text() + "\n"))
		if rest, ok := strings.CutPrefix(sc.Text(), "serving on http://"); ok {
			addr, _, _ = strings.Cut(rest, " ")
		}
	}
	if addr == "" {
		cmd.Wait()
		t.Fatalf("serve did not start: %s%s", out, stderr.String())
	}
	go io.Copy(out, pipe)
	return cmd, addr, out
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeCommand trains a tiny run and serves it from a child process:
// the test images sent as IDX bytes are answered with predict's
// probabilities (to the CSV's 6 digits) and eval's accuracy and NLL
// (exactly: one pass of the same images as eval's batch); /v1/model states
// the abstention rule. Then clients keep sending requests while the server
// gets SIGTERM: every request is either answered in full (200) or refused
// at connect, none is cut off, and the server exits 0 by itself.
func TestServeCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("child process")
	}
	data := writeData(t)
	rd := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := run(t, "train", "--out", rd, "--data", data, "--arch", "16-8-10", "--validation", "0", "--lr", "1", "--batch", "32",
		"--steps", "150", "--burnin", "50", "--thin", "10", "--quiet"); code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	imagesFile := filepath.Join(data, datasets.TestImages+".gz")
	csvOut, stderr, code := run(t, "predict", "--run", rd, "--images", imagesFile)
	if code != 0 {
		t.Fatalf("predict: %s", stderr)
	}
	evalOut, stderr, code := run(t, "eval", "--run", rd, "--json")
	if code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	var rep evaluate.Report
	if err := json.Unmarshal([]byte(evalOut), &rep); err != nil {
		t.Fatal(err)
	}
	_, test, err := datasets.LoadMNIST(data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := datasets.ReadIDXFile(imagesFile)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	if err := datasets.WriteIDX(&body, img); err != nil {
		t.Fatal(err)
	}

	cmd, addr, out := startServe(t, "--run", rd, "--abstain-rate", "0.1")
	defer cmd.Process.Kill()
	resp, err := http.Post("http://"+addr+"/v1/predict", "application/octet-stream", &body)
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Predictions []struct {
			Probabilities     []float64 `json:"probabilities"`
			Class             int       `json:"class"`
			Entropy           float64   `json:"entropy"`
			MutualInformation float64   `json:"mutual_information"`
		} `json:"predictions"`
		Samples int `json:"samples"`
	}
	err = json.NewDecoder(resp.Body).Decode(&ans)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(ans.Predictions) != test.N || ans.Samples != rep.Ensemble.Samples {
		t.Fatalf("/v1/predict: %s, %v, %d predictions of %d samples (eval: %d)", resp.Status, err, len(ans.Predictions), ans.Samples, rep.Ensemble.Samples)
	}
	var probs []float64
	for i, line := range strings.Split(strings.TrimSpace(csvOut), "\n")[1:] {
		f := strings.Split(line, ",")
		p := ans.Predictions[i]
		vals := append(append([]float64(nil), p.Probabilities...), p.Entropy, p.MutualInformation)
		if f[1] != strconv.Itoa(p.Class) {
			t.Fatalf("image %d: class %d, predict's %s", i, p.Class, f[1])
		}
		for j, v := range vals {
			w, _ := strconv.ParseFloat(f[2+j], 64)
			if math.Abs(v-w) > 1e-5*math.Abs(w)+1e-12 {
				t.Fatalf("image %d, column %d: %v, predict's %v", i, 2+j, v, w)
			}
		}
		probs = append(probs, p.Probabilities...)
	}
	if m, err := evaluate.Score(probs, test.Labels, test.Classes); err != nil {
		t.Fatal(err)
	} else if m.Accuracy != rep.Ensemble.Accuracy || m.NLL != rep.Ensemble.NLL {
		t.Fatalf("served accuracy %v NLL %v, eval's %v %v", m.Accuracy, m.NLL, rep.Ensemble.Accuracy, rep.Ensemble.NLL)
	}
	var info struct {
		Abstention *struct {
			Rate   float64 `json:"rate"`
			Method string  `json:"method"`
		} `json:"abstention"`
	}
	r2, err := http.Get("http://" + addr + "/v1/model")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(r2.Body).Decode(&info)
	r2.Body.Close()
	if info.Abstention == nil || info.Abstention.Rate != 0.1 || !strings.Contains(info.Abstention.Method, "test images of "+data) {
		t.Fatalf("/v1/model abstention %+v", info.Abstention)
	}
	sigtermUnderLoad(t, cmd, addr, out, test)
}

// sigtermUnderLoad sends SIGTERM to the server while four clients send
// requests, one connection each, until their connect is refused. A
// request the server took (its handler ran) must have reached its client
// whole: the server's count of answered requests, printed as it stops, is
// the clients' count of full answers. Connections the kernel had queued
// but the server never accepted are reset when the listener closes: those
// requests were never in flight, and clients retry them.
func sigtermUnderLoad(t *testing.T, cmd *exec.Cmd, addr string, out *syncBuffer, test *datasets.Dataset) {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"images": [][]float32{test.Row(0), test.Row(1)}})
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	var mu sync.Mutex
	answered, refused, notTaken := 0, 0, 0
	var lost []string
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				resp, err := client.Post("http://"+addr+"/v1/predict", "application/json", bytes.NewReader(req))
				mu.Lock()
				switch {
				case errors.Is(err, syscall.ECONNREFUSED):
					refused++
					mu.Unlock()
					return
				case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF):
					notTaken++ // queued by the kernel, never accepted
				case err != nil:
					lost = append(lost, err.Error())
				default:
					b, rerr := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || rerr != nil || !bytes.Contains(b, []byte(`"predictions"`)) {
						lost = append(lost, fmt.Sprintf("%s %v %.80s", resp.Status, rerr, b))
					} else {
						answered++
					}
				}
				mu.Unlock()
			}
		}()
	}
	waitFor := func(cond func() bool) {
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("timed out")
			}
		}
	}
	waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return answered >= 40 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	err := cmd.Wait()
	t.Logf("%d answered, %d reset before the server took them, %d clients refused at connect after SIGTERM", answered, notTaken, refused)
	if len(lost) > 0 {
		t.Errorf("%d requests failed otherwise, e.g. %s", len(lost), lost[0])
	}
	if err != nil || !strings.Contains(out.String(), "signal received") {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, out)
	}
	// the first request (the test images) and the clients' answers
	if want := fmt.Sprintf("stopped: %d /v1/predict requests answered\n", answered+1); !strings.HasSuffix(out.String(), want) {
		t.Fatalf("the server's count is not the clients' (%q): a request in flight was lost\n%s", want, out)
	}
}

// TestServeRefuses: serve refuses at start a run a train still holds
// (naming the holder), a run with a corrupt checkpoint or sample record,
// and bad flags.
func TestServeRefuses(t *testing.T) {
	data := writeData(t)
	rd := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := run(t, "train", "--out", rd, "--data", data, "--arch", "16-8-10", "--validation", "0", "--steps", "100", "--burnin", "50", "--thin", "10", "--quiet"); code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	ck := copyDir(t, rd)
	b, _ := os.ReadFile(filepath.Join(ck, rundir.CheckpointFile))
	b[len(b)/2] ^= 0xff
	os.WriteFile(filepath.Join(ck, rundir.CheckpointFile), b, 0o644)
	sm := copyDir(t, rd)
	s, _ := os.ReadFile(filepath.Join(sm, rundir.SamplesFile))
	s[len(s)/2] ^= 0xff
	os.WriteFile(filepath.Join(sm, rundir.SamplesFile), s, 0o644)
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"corrupt checkpoint", []string{"--run", ck}, []string{ck, "is corrupt", "checksum"}},
		{"corrupt sample record", []string{"--run", sm}, []string{filepath.Join(sm, rundir.SamplesFile), "fails its checksum"}},
		{"abstain rate 1", []string{"--run", rd, "--abstain-rate", "1"}, []string{"--abstain-rate < 1"}},
		{"no run", []string{"--addr", "127.0.0.1:0"}, []string{"--run is required"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := run(t, append([]string{"serve"}, c.args...)...)
			if code == 0 {
				t.Fatal("served")
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q: %s", w, stderr)
				}
			}
		})
	}
	l, err := rundir.Acquire(rd)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, stderr, code := run(t, "serve", "--run", rd, "--addr", "127.0.0.1:0")
	if code == 0 || !strings.Contains(stderr, "still being written") || !strings.Contains(stderr, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("a run being written: code %d, %s", code, stderr)
	}
}

// TestServeHTTPServerTimeouts: the header timeout is 10 s, or a shorter
// --read-timeout; --read-timeout 0 (no limit on the whole request) keeps
// the 10 s header timeout.
func TestServeHTTPServerTimeouts(t *testing.T) {
	for _, c := range []struct{ read, header time.Duration }{
		{30 * time.Second, 10 * time.Second},
		{5 * time.Second, 5 * time.Second},
		{0, 10 * time.Second},
	} {
		hs := httpServer(http.NotFoundHandler(), serveFlags{readTimeout: c.read, writeTimeout: time.Minute})
		if hs.ReadTimeout != c.read || hs.ReadHeaderTimeout != c.header || hs.WriteTimeout != time.Minute {
			t.Errorf("--read-timeout %s: read %s, header %s, write %s; want %s, %s and 1m0s", c.read, hs.ReadTimeout, hs.ReadHeaderTimeout, hs.WriteTimeout, c.read, c.header)
		}
	}
}
