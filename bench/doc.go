// Package bench times the sampler's steps on MNIST-shaped noise images
// (datasets.NoiseImages, the PyTorch twins' data) against what the machine allows (package machine): full PT-SGHMC steps of
// an MLP (PT, and Sweep over replicas and batch sizes), each split into its
// gradient, update and exchange phases, and one SGNHT step of a registered
// model (Model). The sampler timed is the one a training run of the same
// settings steps (train.NewDriver), driven by the same loop
// (driver.Driver.RunUntil). ptsghmc bench parses the flags and prints the
// results; plots.Scaling draws a sweep.
//
// The timings depend on the machine and on what else runs on it: quote
// them with the machine's model name and the command that made them.
package bench
