// Package runspec is the one place where a run's settings, given as
// strings (flags, JSON or YAML), become values: the Config of a run, its
// validation, and the registries the names in it are looked up in.
//
// A Config holds every setting of a run (one command-line flag each;
// DefaultConfig; LoadConfigFile reads JSON or YAML; Validate names the
// first bad field). Config.Sampler is one of SamplerNames: PTSGHMC,
// parallel tempering of replicas of a minibatch kernel, or a kernel of the
// registry sampler.Kernels run as one chain (KernelOf, SamplerDoc).
// Config.CheckSettings refuses, or reports as ignored (NotApplied), the
// settings a user gave that the chosen sampler would not use.
//
// A Setup is what a run is built with besides its Config: the training
// data and the registries its names are looked up in (models, a
// ModelRegistry; kernels; exchange rules, ExchangeRule and
// DefaultExchanges). DefaultSetup gives the process's registries, and
// WithModel and WithTrain add to a copy; every function that looks a name
// up takes the Setup or the registry it needs, never a nil standing for
// the process's. Config.Validate checks a config against a Setup. The model
// a config names is built by Config.NNModel (checked against the data) or
// BuildModel (checked against the parameter shapes a run recorded);
// Config.RunEngine says which autodiff engine evaluates it.
//
// The data side of a config: LoadData and SplitData give a run's training
// and validation sets (Config.TrainSize, Validation, SplitSeed; classes of
// Config.Classes, ParseClasses, SelectClasses); DataFingerprint and
// Fingerprint record which data a run was trained on.
//
// runspec imports sampler, nn, autodiff and datasets and nothing of the
// packages that run, record or evaluate a run (train, rundir, evaluate).
package runspec
