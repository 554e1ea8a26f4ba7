package predictive

import (
	"fmt"
	"os"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// BenchmarkPassRun times one ensemble pass (Posterior.PredictFlat) of the
// run directory in $PTSGHMC_BENCH_RUN over batches of 1 to 256 of its
// test images ($PTSGHMC_BENCH_DATA, default Fashion-MNIST's), reporting
// the time per image: what merging concurrent requests into one pass saves.
// It skips without the variable:
//
//	PTSGHMC_BENCH_RUN=runs/default go test -run XXX -bench PassRun ./predictive/
func BenchmarkPassRun(b *testing.B) {
	run := os.Getenv("PTSGHMC_BENCH_RUN")
	if run == "" {
		b.Skip("set PTSGHMC_BENCH_RUN to a run directory")
	}
	dir := os.Getenv("PTSGHMC_BENCH_DATA")
	if dir == "" {
		dir = datasets.DefaultDir
	}
	post, err := Load(run)
	if err != nil {
		b.Fatal(err)
	}
	_, test, err := datasets.LoadMNIST(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 8, 32, 128, 256} {
		b.Run(fmt.Sprintf("images=%d", n), func(b *testing.B) {
			x := test.X[:n*test.D]
			for b.Loop() {
				if _, err := post.PredictFlat(x, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/pass")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*n), "ms/image")
			b.ReportMetric(float64(post.Samples()), "samples")
		})
	}
}
