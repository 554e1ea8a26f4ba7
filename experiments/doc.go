// Package experiments runs the paper's synthetic experiments as a library:
// the multimodal mixture (RunMixture: one sampler from the lowest-weight
// mode, scored by its samples' mode weights) and the tempering sweep
// (SweepCase: PT with an adapted ladder against the same ladder with swaps
// off and against independent chains of equal gradient cost, on the
// mixture plus a d-dimensional Gaussian block). It computes; the ptsghmc
// command parses flags and prints the tables and plots.
package experiments
