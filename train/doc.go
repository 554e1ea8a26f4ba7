// Package train opens or resumes a sampling run of a Bayesian model (an
// MLP by its widths, or a registered model such as the LeNet CNN) in its
// run directory and steps it, keeping rung-1 weight samples, metrics lines
// and checkpoints as it goes.
//
// A Run is one chain tied to its directory (the files of package rundir;
// docs/run-directory.md), built from a runspec.Config. New creates it and Resume reopens it from its checkpoint; Train steps it to
// Config.Steps through driver.Driver.RunUntil, keeping rung-1 samples, writing
// metrics lines and checkpoints, and on cancellation checkpoints and
// returns ErrInterrupted; Finish ends it early (a wall-clock budget); Close
// closes its files. Chains runs several independent chains of one config
// in parallel, or one chain of a job array (OpenChain). Every writer holds
// the lock of each directory it writes (package rundir) until Close: a
// second writer of a run or chain is refused, readers take no lock. Each
// of them takes a runspec.Setup (runspec.DefaultSetup, or the training data
// and registries of models, kernels and exchange rules of the caller's
// own, from which the run is resumed too). A run validates its config and
// builds its model once; its rungs and chains share the model, each
// evaluator building its own graph from it. ChooseReplicas picks the
// number of replicas of a PT run from pilot runs.
//
// A run's state is plain data: the sampler's PTState (with each rung's
// minibatch order, sampler.PTState.Orders) and the lengths of its samples
// and metrics files. A rundir.Checkpoint is that state written down, and a
// resumed run continues bit for bit as if never interrupted. Around the
// loop, each job is a function of that state: the kernel of a config and
// its cyclical step-size schedule, which steps keep samples, the metrics
// line (with tempering's window figures and each rung's health window), the
// validation fit (an autodiff.Predictor), the checkpoint's assembly and
// restoration, and the BLAS threads a run uses while it computes.
//
// Scoring a run's samples is package evaluate's job; the settings and the
// registries are package runspec's; the files' formats are package
// rundir's.
package train
