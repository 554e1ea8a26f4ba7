// Package machine measures what ptsghmc bench compares its timings
// against: the machine's float32 GEMM peak (GEMMPeak) and memory bandwidth
// (CopyBandwidth), the process's CPU time (CPUTime) and peak resident set
// (PeakRSS), and the floating-point work of an MLP's minibatch gradient
// (GradientFLOPs) that the GEMM peak bounds.
package machine
