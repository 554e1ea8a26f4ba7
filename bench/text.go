package bench

import (
	"fmt"
	"io"
)

// WriteText writes r as ptsghmc bench prints it: steps per second, each
// phase's time per step, the gradient phase against the GEMM peak, the
// update against its memory bound, the exchange tests and the memory.
func (r Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "PT-SGHMC %s, engine %s, %d replicas, batch %d, %s, arithmetic %s, %d steps\n", r.Arch, r.Engine, r.Replicas, r.Batch, r.DType, r.BLAS, r.Steps)
	fmt.Fprintf(w, "  steps/s            %8.2f\n", r.StepsPerSec)
	fmt.Fprintf(w, "  per step: gradient %7.2f ms, update %7.2f ms, exchange %7.2f ms\n", r.GradientSec*1e3, r.UpdateSec*1e3, r.ExchangeSec*1e3)
	fmt.Fprintf(w, "  gradient phase     %8.1f GFLOP/s = %.0f%% of the measured float32 GEMM peak %.1f GFLOP/s\n", r.GradGFLOPS, 100*r.PeakShare, r.PeakGFLOPS)
	fmt.Fprintf(w, "  update phase       %8.2f ms = %.1fx its memory bound %.2f ms (%.1f MB per step at the measured copy bandwidth %.1f GB/s)\n",
		r.UpdateSec*1e3, r.UpdateSec/r.UpdateBoundSec, r.UpdateBoundSec*1e3, r.UpdateBytes/1e6, r.CopyGBs)
	fmt.Fprintf(w, "  exchange tests     %8d (%d grew their batch, %d exact on all data, %d decided early)\n", r.Exchanges, r.ExchangesGrown, r.ExchangesExact, r.ExchangesEarly)
	fmt.Fprintf(w, "  peak RSS           %8.0f MiB, %.1f allocations per step\n", r.PeakRSSMiB, r.AllocsPerStep)
}

// WriteText writes r as ptsghmc bench --model prints it: the step's time
// (wall and CPU), its multiply-adds against the GEMM peak's floor, and the
// memory.
func (r ModelResult) WriteText(w io.Writer) {
	fmt.Fprintf(w, "SGNHT step of %s (%d parameters), engine %s, %d gradient shards, batch %d, %s, arithmetic %s, %d steps\n",
		r.Model, r.Params, r.Engine, r.Shards, r.Batch, r.DType, r.BLAS, r.Steps)
	if r.NullSpace != 0 {
		fmt.Fprintf(w, "  null-space prior   scale %g (a ConvNet's first kernel K' A computed at every pass)\n", r.NullSpace)
	}
	fmt.Fprintf(w, "  ms a step          %8.1f (%.2f steps/s; gradient %.1f ms; process CPU %.1f ms a step)\n", r.StepMS, r.StepsPerSec, r.GradientMS, r.CPUMS)
	if r.MACs == 0 {
		fmt.Fprintf(w, "  multiply-adds      not counted (the graph compiler does not support this model)\n")
		fmt.Fprintf(w, "  float32 GEMM peak  %8.1f GFLOP/s measured now\n", r.PeakGFLOPS)
	} else {
		fmt.Fprintf(w, "  multiply-adds      %8.3g a step (%.3g GFLOP), %.1f GFLOP/s\n", float64(r.MACs), 2*float64(r.MACs)/1e9, r.GFLOPS)
		fmt.Fprintf(w, "  float32 GEMM peak  %8.1f GFLOP/s measured now: floor %.1f ms a step, this step %.2fx the floor\n", r.PeakGFLOPS, r.FloorMS, r.StepMS/r.FloorMS)
	}
	fmt.Fprintf(w, "  peak RSS           %8.0f MiB, %.1f allocations per step\n", r.PeakRSSMiB, r.AllocsStep)
}

// WriteSweepTable writes Sweep's results as a markdown table, a row per
// configuration, under a line naming the settings s and the arithmetic.
func WriteSweepTable(w io.Writer, s Settings, arithmetic string, byReplicas, byBatch []Result) {
	fmt.Fprintf(w, "PT-SGHMC %s, %s, arithmetic %s, exchange every %d steps, %d timed steps each\n\n", s.Arch, s.DType, arithmetic, s.Every, s.Steps)
	fmt.Fprintln(w, "| replicas | batch | steps/s | replica-steps/s | gradient ms | update ms | exchange ms | GFLOP/s | process peak RSS so far MiB |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range append(append([]Result(nil), byReplicas...), byBatch...) {
		fmt.Fprintf(w, "| %d | %d | %.2f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f |\n", r.Replicas, r.Batch, r.StepsPerSec,
			r.StepsPerSec*float64(r.Replicas), r.GradientSec*1e3, r.UpdateSec*1e3, r.ExchangeSec*1e3, r.GradGFLOPS, r.PeakRSSMiB)
	}
}
