// Package export writes the samples of runs for other tools: NPZ writes
// the rung-1 samples of one or more run directories (a run of several
// chains stands for all of them) as a NumPy .npz archive, one array per
// learnable of the runs' model with a leading sample axis, with the step
// and chain of each sample, and with test data the per-example
// log-likelihoods ArviZ's LOO and WAIC read (Step, Chain, ChainDirs,
// LogLik, LogLikStep). Zarr writes them as ArviZ's InferenceData in a
// Zarr v2 store. NPZWith and Zarr read only the samples in a step window
// (NPZOptions.Window, ZarrOptions.Window: rundir.Window, as eval
// --from-step and --to-step); every chain is read up to its last
// checkpoint (rundir.ScanChain). Summary says what was written.
package export
