// Command ptsghmc trains Bayesian neural networks by parallel-tempered
// stochastic-gradient HMC and evaluates their posterior-predictive ensembles.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "ptsghmc: commands are coming")
	os.Exit(2)
}
