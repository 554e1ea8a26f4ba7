package runspec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/onnx"
)

// ModelName returns the name of the config's model: a registered model's
// name (nn.Models), or the MLP's widths when Model is empty.
func (c Config) ModelName() string {
	if c.Model != "" {
		return c.Model
	}
	return c.Arch
}

// ModelRegistry maps the names Config.Model may hold to the functions that
// build those models with a prior. nn.Models is the process's registry; a
// run built with a Setup of its own registry uses that one alone.
type ModelRegistry = map[string]func(nn.PriorConfig) (nn.Model, error)

// validateModel checks the model fields of the config against reg.
func (c Config) validateModel(reg ModelRegistry) error {
	if c.Model == "" {
		if _, err := nn.ParseArch(c.Arch); err != nil {
			return fmt.Errorf("arch: %w", err)
		}
		return nil
	}
	if _, ok := LookupModel(reg, c.Model); !ok {
		names := make([]string, 0, len(reg))
		for n := range reg {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("model %q is not registered: expected one of %s, a FILE.onnx, or no model and an MLP --arch", c.Model, strings.Join(names, ", "))
	}
	if _, ok := reg[c.Model]; !ok && strings.ContainsAny(c.Model, " \t\n\r") {
		return fmt.Errorf("model %q: the path of an ONNX file must not contain white space (the samples file's header records it): rename or link the file", c.Model)
	}
	return nil
}

// Where a new run's chains start (Config.Start).
const (
	StartPrior = "prior" // drawn at the model's initial scales (the default)
	StartModel = "model" // the weights the model comes with (an imported network's)
)

// LookupModel returns the builder of the model called name: reg's entry,
// or, for a name ending in .onnx that reg does not hold, the network of
// that ONNX file (package onnx), read when the builder is called.
func LookupModel(reg ModelRegistry, name string) (func(nn.PriorConfig) (nn.Model, error), bool) {
	if build, ok := reg[name]; ok {
		return build, true
	}
	if onnx.IsModelPath(name) {
		return func(p nn.PriorConfig) (nn.Model, error) { return onnx.Load(name, name, p) }, true
	}
	return nil, false
}

// NNModel returns the model the config describes, checked against data
// (ModelFits): the MLP of Arch (with Activation and the prior), or the
// model of the registry reg named Model with the config's prior (see
// BuildModel).
func (c Config) NNModel(reg ModelRegistry, data *datasets.Dataset) (nn.Model, error) {
	m, err := c.BuildModel(reg)
	if err != nil {
		return m, err
	}
	return m, c.ModelFits(m, data)
}

// ModelFits reports an error when model m, built from the config, does
// not fit data's features, classes and (a CNN) image shape, or cannot
// start where the config says.
func (c Config) ModelFits(m nn.Model, data *datasets.Dataset) error {
	features, classes := data.D, data.Classes
	if c.Start == StartModel && len(m.Weights) != m.NumParams() {
		return fmt.Errorf("start model: model %s comes with no weights to start from (--start model needs --model FILE.onnx)", m.Name)
	}
	if m.Conv != nil {
		if err := m.Conv.CheckImages(data.Image); err != nil {
			return fmt.Errorf("model %s: %w", m.Name, err)
		}
	}
	if m.Inputs != features {
		return fmt.Errorf("model %s takes %d inputs, data has %d features", m.Name, m.Inputs, features)
	}
	if len(c.Classes) > 0 && m.Outputs != classes && c.Model == "" {
		sizes, _ := nn.ParseArch(c.Arch)
		sizes[len(sizes)-1] = classes
		return fmt.Errorf("arch %s has %d outputs, but --classes %s trains %d classes: the last width must be %d (--arch %s)", c.Arch, m.Outputs, FormatClasses(c.Classes), classes, classes, nn.Spec{Sizes: sizes}.Arch())
	}
	if len(c.Classes) > 0 && m.Outputs != classes && onnx.IsModelPath(c.Model) {
		// an ONNX file fixes its output layer: nn.PriorConfig.Classes
		// resizes a registered model's, not a file's
		return fmt.Errorf("model %s has %d outputs, but --classes %s trains %d classes: --classes does not apply to an ONNX model, whose output layer the file fixes (export a network of %d outputs, or train on all classes)", m.Name, m.Outputs, FormatClasses(c.Classes), classes, classes)
	}
	if !m.OneHot || !m.Logits || m.Outputs != classes {
		return fmt.Errorf("model %s is not a classifier of the data's %d classes (%d outputs)", m.Name, classes, m.Outputs)
	}
	return nil
}

// BuildModel returns the model the config describes: the MLP of Arch, or
// the model of the registry reg named Model. When the config records
// parameter shapes (a run's config does) the model must have exactly
// those: a run is never resumed or evaluated with a model other than the
// one that made it.
func (c Config) BuildModel(reg ModelRegistry) (nn.Model, error) {
	var m nn.Model
	if err := c.validateModel(reg); err != nil {
		return m, err
	}
	if c.Model == "" {
		sizes, _ := nn.ParseArch(c.Arch)
		spec, err := c.Spec(sizes[0], sizes[len(sizes)-1])
		if err != nil {
			return m, err
		}
		if m, err = spec.Model(); err != nil {
			return m, err
		}
	} else {
		build, _ := LookupModel(reg, c.Model)
		if _, registered := reg[c.Model]; !registered && c.ModelSHA256 != "" {
			// the file first: a changed file is refused for what it is,
			// whatever it now holds
			d, err := onnx.FileDigest(c.Model)
			if err != nil {
				return m, err
			}
			if d != c.ModelSHA256 {
				return m, ChangedModelFile(c.Model, c.ModelSHA256, d)
			}
		}
		var err error
		if m, err = build(nn.PriorConfig{Precision: c.Prior, FanIn: c.PriorFanIn, DF: c.PriorDF, Classes: len(c.Classes)}); err != nil {
			return m, err
		}
		m.Name = c.Model
		if c.ModelSHA256 != "" && m.SHA256 != c.ModelSHA256 {
			return m, ChangedModelFile(c.Model, c.ModelSHA256, m.SHA256)
		}
		if c.NullSpaceSkip > 0 {
			if m, err = withSkip(m); err != nil {
				return m, err
			}
		}
	}
	if c.Shapes != "" && c.Shapes != m.Layout.String() {
		return m, fmt.Errorf("model %s: the run recorded parameters %s, but the model now has %s: refusing to mix samples of different models", c.ModelName(), c.Shapes, m.Layout)
	}
	return m, nil
}

// withSkip returns the ConvNet m rebuilt with its skip branch
// (nn.ConvNet.Skip, Config.NullSpaceSkip): the network a run with the
// branch writes and eval, predict, serve and export read, on raw images
// (the branch's prior maps it only while a run samples it:
// nullspace.Prior.SkipModel). Weights m comes with are kept, the
// branch's (the last learnable) zero.
func withSkip(m nn.Model) (nn.Model, error) {
	if m.Conv == nil {
		return m, fmt.Errorf("null_space_skip: model %s is not a ConvNet (--model lenet or cnn3): the skip branch joins a CNN's first dense layer", m.Name)
	}
	net := *m.Conv
	net.Skip = true
	mm, err := net.Model(m.Name)
	if err != nil {
		return m, err
	}
	mm.SHA256, mm.Description = m.SHA256, m.Description
	mm.Weights = m.Weights
	if m.Weights != nil && len(m.Weights) == m.NumParams() { // the branch is the last learnable: it starts at zero
		mm.Weights = append(append([]float64(nil), m.Weights...), make([]float64, mm.NumParams()-m.NumParams())...)
	}
	return mm, nil
}

// MLPKernelsPlan is Config.MLPKernels of an MLP run whose compiled graph
// computes its BLAS plan's arithmetic.
const MLPKernelsPlan = "plan"

// RunEngine returns the engine the run's evaluators use for model: graph
// (Gorgonia's VM) when the config says graph, and also for a graph model
// whose config says plan (a run made before the graph compiler, which ran
// on the VM and keeps it, so that it resumes and evaluates bit-exactly);
// compiled for compiled, but compiled-generic for an MLP recorded on it
// before the compiled MLP computed its plan's arithmetic (no MLPKernels:
// it keeps the generic kernels it ran on); plan for an MLP's plan (the
// compiled graph, unsharded, computing what the BLAS plan computed).
func (c Config) RunEngine(model nn.Model) autodiff.Engine {
	switch e := autodiff.Engine(c.Engine); {
	case e == autodiff.EnginePlan && model.MLP == nil:
		return autodiff.EngineGraph
	case e == "":
		return autodiff.EnginePlan
	case e == autodiff.EngineCompiled && model.MLP != nil && c.MLPKernels == "":
		return autodiff.EngineCompiledGeneric
	default:
		return e
	}
}

// ChangedModelFile is the error of a run whose model file (recorded with
// digest was) now has digest now.
func ChangedModelFile(path, was, now string) error {
	return fmt.Errorf("model %s: the run recorded the file's sha256 %s, the file now has sha256 %s: refusing to continue or evaluate the run with a changed network (restore the file, or train a new run)", path, was, now)
}
