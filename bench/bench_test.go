package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestPT times a small PT run: three rungs exchanging every 2 steps make
// 10 exchange tests in 20 steps, and every phase's figure is positive.
func TestPT(t *testing.T) {
	s := Settings{Arch: "20-8-3", Replicas: 3, Batch: 8, Steps: 20, DType: "float32", Every: 2, Peak: 1}
	res, err := PT(s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Replicas != 3 || res.Steps != 20 || res.Exchanges != 10 || res.StepsPerSec <= 0 || res.GradientSec <= 0 ||
		res.GradGFLOPS <= 0 || res.UpdateBytes != 40*float64(20*8+8+8*3+3)*3 || res.CopyGBs <= 0 || res.PeakGFLOPS != 1 {
		t.Errorf("PT result %+v", res)
	}
	var b bytes.Buffer
	res.WriteText(&b)
	if !strings.Contains(b.String(), "PT-SGHMC 20-8-3, engine compiled, 3 replicas, batch 8, float32") || !strings.Contains(b.String(), "exchange tests           10") {
		t.Errorf("text:\n%s", b.String())
	}
	// the approximate test never grows its batch, a first batch beyond the
	// data set makes every test exact, and an unknown test is refused
	approx := s
	approx.ExchangeTest = "resghmc"
	if res, err := PT(approx); err != nil || res.Exchanges != 10 || res.ExchangesGrown != 0 || res.ExchangesExact != 0 {
		t.Errorf("resghmc exchanges: %+v, %v", res, err)
	}
	exact := s
	exact.XBatch = 1 << 20 // beyond the data set: every test exact
	if res, err := PT(exact); err != nil || res.Exchanges != 10 || res.ExchangesExact != 10 {
		t.Errorf("exact exchanges: %+v, %v", res, err)
	}
	approx.ExchangeTest = "coin"
	if _, err := PT(approx); err == nil || !strings.Contains(err.Error(), `exchange_test "coin"`) {
		t.Errorf("an unknown exchange test: %v", err)
	}
	one := s
	one.Replicas = 1
	if res, err := PT(one); err != nil || res.Replicas != 1 || res.Exchanges != 0 || res.ExchangeSec != 0 {
		t.Errorf("one chain: %+v, %v", res, err)
	}
	one.Engine = "plan"
	if res, err := PT(one); err != nil || res.Engine != "plan" || res.StepsPerSec <= 0 {
		t.Errorf("one chain, the hand-written plan: %+v, %v", res, err)
	}
	one.Engine = "graph"
	if _, err := PT(one); err == nil {
		t.Errorf("an MLP on engine graph: no error")
	}
}

// TestModel times two SGNHT steps of LeNet at batch 4 on two gradient
// shards, compiled and on the VM: its multiply-adds per example are
// conv1 2*627,200, conv2 3*10,035,200 and the dense layers 3*805,376 (the
// autodiff test checks the count against a hand count).
func TestModel(t *testing.T) {
	for _, engine := range []string{"compiled", "graph"} {
		res, err := Model(Settings{Model: "lenet", Engine: engine, Batch: 4, Steps: 2, Shards: 2, DType: "float32", Peak: 1})
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		if res.Model != "lenet" || res.Shards != 2 || res.StepMS <= 0 || res.MACs != 4*33776128 || res.PeakGFLOPS != 1 || res.FloorMS <= 0 {
			t.Errorf("%s: result %+v", engine, res)
		}
	}
	// under a null-space prior the graph adds the first kernel's map,
	// K' A forward and its adjoint, 2 * 32*25*25 multiply-adds (counted per
	// example, as the rest)
	res, err := Model(Settings{Model: "lenet", Engine: "compiled", Batch: 4, Steps: 2, Shards: 2, DType: "float32", Peak: 1, NullSpace: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.NullSpace != 10 || res.MACs != 4*(33776128+2*32*25*25) || res.StepMS <= 0 {
		t.Errorf("under a null-space prior: result %+v", res)
	}
	var b bytes.Buffer
	res.WriteText(&b)
	if !strings.Contains(b.String(), "null-space prior   scale 10") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestSettingsRefused checks that settings that cannot be timed are
// refused with what was expected.
func TestSettingsRefused(t *testing.T) {
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"no replicas", func() error { _, err := PT(Settings{Arch: "20-8-3", Batch: 8, Steps: 2}); return err }, "must be positive"},
		{"bad arch", func() error { _, err := PT(Settings{Arch: "20-x", Replicas: 1, Batch: 8, Steps: 2}); return err }, "20-x"},
		{"unknown model", func() error {
			_, err := Model(Settings{Model: "no-such-model", Engine: "compiled", Batch: 4, Steps: 1})
			return err
		}, "lenet"},
		{"bad engine", func() error {
			_, err := Model(Settings{Model: "lenet", Engine: "plan", Batch: 4, Steps: 1})
			return err
		}, "expected compiled or graph"},
		{"negative shards", func() error {
			_, err := Model(Settings{Model: "lenet", Engine: "compiled", Batch: 4, Steps: 1, Shards: -1})
			return err
		}, "non-negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.run(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestWriteSweepTable checks the sweep table: a header line, the markdown
// header and a row per result.
func TestWriteSweepTable(t *testing.T) {
	rs := []Result{{Replicas: 1, Batch: 128, StepsPerSec: 10}, {Replicas: 2, Batch: 128, StepsPerSec: 6}}
	bs := []Result{{Replicas: 10, Batch: 32, StepsPerSec: 3}}
	var b bytes.Buffer
	WriteSweepTable(&b, Settings{Arch: "784-400-400-10", DType: "float32", Every: 10, Steps: 50}, "pinned-v1", rs, bs)
	out := b.String()
	if !strings.HasPrefix(out, "PT-SGHMC 784-400-400-10, float32, arithmetic pinned-v1, exchange every 10 steps, 50 timed steps each\n") ||
		strings.Count(out, "\n| ") != 4 || !strings.Contains(out, "| 2 | 128 | 6.00 | 12.0 |") {
		t.Errorf("table:\n%s", out)
	}
}
