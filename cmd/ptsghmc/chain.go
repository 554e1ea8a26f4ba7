package main

import (
	"fmt"
	"io"

	"github.com/ptsghmc/ptsghmc/cluster"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// exitRequeue is train's exit status after SIGINT or SIGTERM once every
// chain's checkpoint is written: 75, EX_TEMPFAIL of sysexits.h ("temporary
// failure; the user is invited to retry"). It differs from 0 (done), 1
// (failed, including a checkpoint that could not be written), 2 (bad
// usage) and 143 (killed by SIGTERM before the handler ran), so a batch
// script, Slurm's RequeueExit=75 or a Kubernetes podFailurePolicy can tell
// "rerun me, I will resume" from a failure. See docs/cluster.md.
const exitRequeue = cluster.ExitRequeue

// requeueError wraps train.ErrInterrupted: the run stopped on a signal with
// its checkpoint written; mainCode exits with exitRequeue.
type requeueError struct{ err error }

func (e requeueError) Error() string { return e.err.Error() }
func (e requeueError) Unwrap() error { return e.err }

// printChains prints the state of every chain eval found, when there is
// more than one or one is not finished, and a table header's blank line
// (rundir.ChainsReport).
func printChains(w io.Writer, chains []rundir.ChainStatus) {
	fmt.Fprint(w, rundir.ChainsReport(chains))
}
