// Package evaluate scores what a run's samples predict: the
// posterior-predictive ensemble of one or more run directories on test
// data, and the tests of its uncertainty (package export writes the
// samples for other tools).
//
// Evaluate (EvaluateWith) reads the runs' samples (package rundir; a run
// of several chains pools those with samples at their last checkpoint) and
// scores their Ensemble (Metrics: accuracy, NLL, ECE, Brier; Reliability;
// per class, ClassResult) in a Report, with the chains' R-hat and ESS and
// each run's tempering and health figures (package diagnose). RunModel
// rebuilds a run's model from its directory; an Ensemble adds up the
// predictive distributions of samples, evaluated by an autodiff.Predictor
// on the engine the run used (autodiff.NewLogitEvaluator).
//
// EvalOptions add the tests of predictive uncertainty
// (docs/uncertainty.md): out-of-distribution detection (OODSet,
// BuiltinOOD, a runspec.Config.Classes run's held-out classes; AUROC, AUPR
// of the UncertaintyScores), selective prediction (RiskCoverage), dataset
// shift (RotateImages, NoisyImages; ShiftResult) and baselines pooled from
// several runs (PredictorInfo, from the runs' timing files).
package evaluate
