// Package progress prints the progress of ptsghmc's long commands on
// standard error: train's steps (Train) and eval's samples (Eval), as a
// progress bar on a terminal and as plain lines otherwise (a log file, a
// cluster job's output).
package progress

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newBar returns a progress bar on w of total units named unit.
func newBar(w io.Writer, total int, unit string) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(30))
}

// setBar moves bar to done and describes it. The count is set first: the
// bar redraws at most every 200 ms, so of two calls made together only
// the first draws, and a count a step behind (the bar ending on the
// last-but-one sample) misleads more than a description a step behind.
func setBar(bar *progressbar.ProgressBar, done int, description string) {
	bar.Set(done)
	bar.Describe(description)
}
