// Package report writes an evaluation (an evaluate.Report) as one
// self-contained HTML page: the metrics table, what the ensemble and the
// baseline average, the uncertainty tables (out-of-distribution detection,
// selective prediction, dataset shift, per class), the chains and their
// R-hat, each PT chain's ladder, and package plots' figures embedded as
// data URIs, with nothing fetched from outside the file (its
// Content-Security-Policy forbids it). ptsghmc eval --report writes it.
package report
