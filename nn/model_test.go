package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestSpecLayoutAgrees checks that an MLP expressed through the model
// contract has Spec's flat layout, prior and initialisation exactly.
func TestSpecLayoutAgrees(t *testing.T) {
	for _, df := range []float64{0, 3} {
		s := Spec{Sizes: []int{5, 4, 3}, Activation: ReLU, Likelihood: Categorical, PriorPrecision: []float64{2, 0.5}, PriorDF: df}
		m, err := s.Model()
		if err != nil {
			t.Fatal(err)
		}
		if m.NumParams() != s.NumParams() || m.Inputs != 5 || m.Outputs != 3 || !m.OneHot || !m.Logits || m.MLP == nil {
			t.Fatalf("model %+v does not describe spec %v", m, s.Sizes)
		}
		if got, want := m.Layout.String(), "W0:5x4,b0:4,W1:4x3,b1:3"; got != want {
			t.Fatalf("layout %s, want %s", got, want)
		}
		a, b := make([]float64, s.NumParams()), make([]float64, s.NumParams())
		s.Init(a, rand.New(rand.NewPCG(1, 2)))
		m.Layout.Init(b, rand.New(rand.NewPCG(1, 2)))
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("Init differs at %d: spec %v, layout %v", i, a[i], b[i])
			}
			a[i] += 0.3
		}
		if u, v := s.NegLogPrior(a), m.Layout.NegLogPrior(a); math.Abs(u-v) > 1e-12*math.Abs(u) {
			t.Fatalf("df %g: NegLogPrior spec %v, layout %v", df, u, v)
		}
		g1, g2 := make([]float64, len(a)), make([]float64, len(a))
		s.AddNegLogPriorGrad(a, g1)
		m.Layout.AddNegLogPriorGrad(a, g2)
		for i := range g1 {
			if math.Abs(g1[i]-g2[i]) > 1e-12*(1+math.Abs(g1[i])) {
				t.Fatalf("df %g: prior gradient %d: spec %v, layout %v", df, i, g1[i], g2[i])
			}
		}
	}
}

// TestLeNet checks the registered LeNet's size and layout.
func TestLeNet(t *testing.T) {
	m, err := Models["lenet"](PriorConfig{Precision: 1, FanIn: true})
	if err != nil {
		t.Fatal(err)
	}
	// conv1 32*1*25+32, conv2 64*32*25+64, fc1 3136*256+256, fc2 256*10+10
	if want := 832 + 51264 + 803072 + 2570; m.NumParams() != want {
		t.Fatalf("lenet has %d parameters, want %d", m.NumParams(), want)
	}
	if m.Inputs != 784 || m.Outputs != 10 || m.MLP != nil || !m.Logits {
		t.Fatalf("lenet: inputs %d, outputs %d, MLP %v, logits %v", m.Inputs, m.Outputs, m.MLP, m.Logits)
	}
	want := "conv1.W:32x1x5x5,conv1.b:32,conv2.W:64x32x5x5,conv2.b:64,fc1.W:3136x256,fc1.b:256,fc2.W:256x10,fc2.b:10"
	if m.Layout.String() != want {
		t.Fatalf("layout %s\nwant %s", m.Layout, want)
	}
	if p := m.Layout[2].Prior.Precision; p != 32*25 {
		t.Fatalf("conv2.W prior precision %v, want fan-in 800", p)
	}
}

// TestCNN3 checks the registered CNN3's size and layout.
// TestCheckImages checks which image shapes a CNN takes: its own (with or
// without a single channel), flat or unknown ones (left to the pixel
// count), and no other, even of as many values.
func TestCheckImages(t *testing.T) {
	grey := LeNet(PriorConfig{Precision: 1})
	rgb := ConvNet{Height: 8, Width: 8, Channels: 3}
	for _, tc := range []struct {
		name   string
		net    ConvNet
		dims   []int
		errHas string // "" for none
	}{
		{"rows, cols", grey, []int{28, 28}, ""},
		{"one channel", grey, []int{1, 28, 28}, ""},
		{"flat", grey, []int{784}, ""},
		{"unknown", grey, nil, ""},
		{"as many pixels", grey, []int{14, 56}, "the data's images are 14x56, the network takes 28x28 images (784 values each)"},
		{"larger", grey, []int{32, 32}, "images are 32x32"},
		{"channels", rgb, []int{3, 8, 8}, ""},
		{"channels missing", rgb, []int{8, 8}, "images are 8x8, the network takes 3x8x8 (channels, rows, cols) images"},
		{"one channel last", grey, []int{28, 28, 1}, ""},
		{"channels last", rgb, []int{8, 8, 3}, "images are 8x8x3, the network takes 3x8x8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.net.CheckImages(tc.dims)
			if tc.errHas == "" && err != nil || tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Fatalf("CheckImages(%v): %v; want an error saying %q", tc.dims, err, tc.errHas)
			}
		})
	}
}

func TestCNN3(t *testing.T) {
	m, err := Models["cnn3"](PriorConfig{Precision: 1, FanIn: true})
	if err != nil {
		t.Fatal(err)
	}
	// conv 32*9+32, 64*32*9+64, 128*64*9+128; 28 -> 14 -> 7 -> 3, so fc1
	// 128*3*3*256+256; fc2 256*10+10
	if want := 320 + 18496 + 73856 + 295168 + 2570; m.NumParams() != want {
		t.Fatalf("cnn3 has %d parameters, want %d", m.NumParams(), want)
	}
	want := "conv1.W:32x1x3x3,conv1.b:32,conv2.W:64x32x3x3,conv2.b:64,conv3.W:128x64x3x3,conv3.b:128,fc1.W:1152x256,fc1.b:256,fc2.W:256x10,fc2.b:10"
	if m.Layout.String() != want || m.Inputs != 784 || m.Outputs != 10 {
		t.Fatalf("layout %s (inputs %d, outputs %d)\nwant %s", m.Layout, m.Inputs, m.Outputs, want)
	}
}

// TestGraphValidate checks that graphs breaking the contract are refused
// with a message naming what is wrong.
func TestGraphValidate(t *testing.T) {
	good := func() *Graph {
		g, err := NewGraph(Spec{Sizes: []int{3, 2}, Likelihood: Categorical, PriorPrecision: []float64{1}}, 4, tensor.Float64)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, want string
		edit       func(g *Graph)
	}{
		{"no loglik", "LogLik", func(g *Graph) { g.LogLik = nil }},
		{"priors", "priors", func(g *Graph) { g.Priors = g.Priors[:1] }},
		{"bad prior", "precision", func(g *Graph) { g.Priors[0].Precision = -1 }},
		{"duplicate", "two learnables", func(g *Graph) { g.Learnables[1] = g.Learnables[0] }},
		{"regression logits", "one-hot", func(g *Graph) { g.OneHot = false }},
		{"target shape", "target shape", func(g *Graph) {
			g.Target = G.NewVector(g.G, tensor.Float64, G.WithShape(4), G.WithName("t"))
		}},
		{"batch", "input shape", func(g *Graph) { g.Batch = 5 }},
	}
	for _, c := range cases {
		g := good()
		c.edit(g)
		err := g.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}
