//go:build long

package tempering_test

// With -tags=long TestBadScaleHealth checks its verdicts on three draws of
// the bad-scale case.
func init() { badScaleHealthDraws = []uint64{1, 2, 3} }
