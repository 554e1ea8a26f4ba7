// Package refcheck checks the samplers against reference posteriors that
// no one here computed: five posteriors of stan-dev/posteriordb with Stan's
// reference draws (issue 43), badly scaled or strongly correlated
// Gaussian linear regressions with an unknown noise sd. Each is built
// through the public API as a user would build it (a Regression is an
// nn.Model whose Gorgonia graph is the regression's log-likelihood), and
// the reference is summarised in testdata/posteriordb (README.md there
// names the source and licence).
package refcheck
