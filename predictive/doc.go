// Package predictive puts a trained posterior to work on new images: Load
// reads the pooled samples of one or more run directories once (a run of
// several chains stands for its chains, pooled as eval pools them) and
// Posterior.Predict returns, for each image, the posterior-predictive
// ensemble's class probabilities (1/S) sum_s softmax(f(x; theta_s)), their
// entropy, the mutual information between the label and the weights (the
// epistemic part of the entropy), and whether to abstain.
//
// The probabilities are computed by package evaluate's Ensemble, the code
// eval scores the test set with, so Predict answers what eval and ptsghmc
// predict compute for the same images. The abstention rule is fixed once,
// from the mutual information's quantile on labelled images at a stated
// rate (Posterior.FixAbstention), and said in Posterior.Info.
//
// A Batcher merges concurrent Predict calls into one ensemble pass over
// the samples (ptsghmc serve uses one): the samples' weights are read once
// per pass whatever the number of images, so a pass of many images costs
// far less than as many passes of one.
package predictive
