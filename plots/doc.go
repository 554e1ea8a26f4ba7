// Package plots draws the PNG figures of ptsghmc's commands with gonum's
// plot package: an evaluation's figures (Evaluation, WriteEvaluation: the
// reliability diagram, the ensemble's accuracy and NLL against its samples,
// the runs' traces, the chains' held-out log-likelihood, risk-coverage,
// dataset shift and tempering; package report embeds them in its HTML
// page), the mixture experiment's samples against the true density
// (Mixture), the tempering sweep's errors and barrier against the
// dimension (Sweep) and a bench sweep's steps per second (Scaling).
//
// A figure is a row of panels in one PNG (RowPNG, SaveRow); AddLine gives
// each line of a panel its own colour and dash pattern. Drawing is
// deterministic: the same data give the same bytes.
package plots
