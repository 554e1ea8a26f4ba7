//go:build long

package driver

// With -tags=long TestBadScaleHealth checks its verdicts on three draws of
// the bad-scale case.
func init() { badScaleHealthDraws = []uint64{1, 2, 3} }
