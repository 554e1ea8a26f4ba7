package plots

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

// Scaling writes a bench sweep's figure to path (bench.Sweep): steps per
// second against replicas (with replica-steps per second over 10), and
// against the batch size on a log scale.
func Scaling(path string, byReplicas, byBatch []bench.Result) error {
	if len(byReplicas) == 0 || len(byBatch) == 0 {
		return fmt.Errorf("plot %s: a scaling plot needs results by replicas and by batch (have %d and %d)", path, len(byReplicas), len(byBatch))
	}
	pr, pb := plot.New(), plot.New()
	pr.Title.Text = fmt.Sprintf("batch %d", byReplicas[0].Batch)
	pr.X.Label.Text, pr.Y.Label.Text = "replicas", "steps/s"
	pb.Title.Text = fmt.Sprintf("%d replicas", byBatch[0].Replicas)
	pb.X.Label.Text, pb.Y.Label.Text = "batch", "steps/s"
	var a, ar, b plotter.XYs
	for _, r := range byReplicas {
		a = append(a, plotter.XY{X: float64(r.Replicas), Y: r.StepsPerSec})
		ar = append(ar, plotter.XY{X: float64(r.Replicas), Y: r.StepsPerSec * float64(r.Replicas) / 10})
	}
	for _, r := range byBatch {
		b = append(b, plotter.XY{X: float64(r.Batch), Y: r.StepsPerSec})
	}
	if err := plotutil.AddLinePoints(pr, "PT steps/s", a, "replica-steps/s / 10", ar); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := plotutil.AddLinePoints(pb, "PT steps/s", b); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	pb.X.Scale = plot.LogScale{}
	pb.X.Tick.Marker = plot.LogTicks{}
	return SaveRow(path, pr, pb)
}
