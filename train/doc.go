// Package train wires datasets, nn, autodiff and sampler into checkpointed
// sampling runs of Bayesian models (an MLP by its widths, or a registered
// model of nn.Models such as the LeNet CNN), stores rung-1 weight samples,
// and evaluates posterior-predictive ensembles.
//
// # Runs
//
// A Config holds every setting of a run (one command-line flag each; JSON or
// YAML files; Validate names the first bad field). Config.Sampler is one of
// SamplerNames: PTSGHMC, parallel tempering of sgnht replicas, or a kernel
// of the registry sampler.Kernels run as one chain (sgnht, sghmc, sgld, or
// sgd, the optimiser baseline).
//
// A Run is one chain tied to its directory (config.json, the samples file,
// metrics.jsonl and an atomic, checksummed checkpoint; docs/run-directory.md).
// New (or NewFromData) creates it and Resume reopens it from its checkpoint;
// Train steps it to Config.Steps, keeping rung-1 samples, writing metrics
// lines and checkpoints, and on cancellation checkpoints and returns
// ErrInterrupted; Finish ends it early (a wall-clock budget); Close closes
// its files. Chains runs several independent chains of one config in
// parallel, or one chain of a job array (OpenChain). Every writer holds the
// lock of each directory it writes (package rundir) until Close: a second
// writer of a run or chain is refused, readers take no lock. The *With
// forms (NewChainsWith, ResumeChainsWith, OpenChainWith) take a Setup: the
// training data and a model registry of the caller's own (nil: nn.Models).
// A run validates its config and builds its model once; its rungs and
// chains share the model, each evaluator building its own graph from it.
// Config.CheckSettings refuses, or reports as ignored, the settings a user
// gave that the chosen sampler would not use.
//
// A run's state is plain data: the sampler's PTState, each rung's minibatch
// order (a datasets.Batches, from which PT draws the rung's minibatches:
// sampler.PTState.Orders) and the
// lengths of its samples and metrics files. A Checkpoint is that state
// written down, and a resumed run continues bit for bit as if never
// interrupted. Around the loop, each job is a function of that state: the
// cyclical step-size schedule and which steps keep samples, the metrics
// line (MetricsLine), the validation fit, the checkpoint's assembly, and
// the BLAS threads a run uses while it computes (one per call when rungs,
// chains or a graph model's shards run in parallel; the process's setting
// is restored after).
//
// # Evaluation and diagnostics
//
// Evaluate (EvaluateWith) scores the posterior-predictive Ensemble of one
// or more runs on test data (Metrics: accuracy, NLL, ECE, Brier; Report,
// with R-hat and ESS of the chains: SplitRHat, BulkESS); ExportNPZ writes
// samples for NumPy. A run's tempering figures (Tempering: swap
// acceptance, communication barrier, round trips, advice on the ladder)
// and its dynamics' health (HealthReport) say what to change.
//
// # Uncertainty
//
// EvaluateWith's options add the tests of predictive uncertainty
// (docs/uncertainty.md): out-of-distribution detection (OODSet,
// BuiltinOOD, a Config.Classes run's held-out classes; AUROC, AUPR of the
// UncertaintyScores), selective prediction (RiskCoverage), dataset shift
// (RotateImages, NoisyImages) and baselines pooled from several runs, whose
// wall-clock train records in TimingFile.
package train
