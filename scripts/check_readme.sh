#!/bin/sh
# check_readme.sh README.md MAKE-RUN-OUTPUT
#
# Compares the `make run` figures quoted in README.md with those `make run`
# printed (its output saved in MAKE-RUN-OUTPUT). The README quotes them in
# one table, the lines after the marker line
#   <!-- make-run-figures: checked by `make check-readme` -->
# with rows "| ensemble (posterior) | samples | accuracy | NLL | ECE | Brier |"
# and "| single sample | ... |"; `ptsghmc eval` prints the same rows as
#   ensemble (posterior)   200  0.8954  0.2941  0.0221  0.1526
# Exits 1, showing both, when they differ. The README names the arithmetic its
# figures were computed with on the marker line (arithmetic=ID); when make run
# computed with another (train --arithmetic native), the figures cannot
# match, and the check says so in one line instead of comparing them.
set -eu
readme=$1
log=$2
[ -s "$log" ] || { echo "check_readme: $log is empty or missing: no make run output to compare" >&2; exit 1; }

quoted=$(awk '
	/<!-- make-run-figures/ { on = 1; next }
	on && /^[[:space:]]*$/ && seen { exit }
	on && /^\|/ {
		seen = 1
		n = split($0, f, "|")
		name = f[2]; gsub(/^[ \t`*]+|[ \t`*]+$/, "", name)
		if (name != "ensemble (posterior)" && name != "single sample") next
		row = name
		for (i = 3; i < n; i++) { v = f[i]; gsub(/[ \t*]/, "", v); row = row " " v }
		print row
	}' "$readme")
printed=$(awk '
	/^(ensemble \(posterior\)|single sample) +[0-9]/ {
		name = ($1 == "ensemble") ? "ensemble (posterior)" : "single sample"
		print name, $3, $4, $5, $6, $7 # both names are two words
	}' "$log")

want_arith=$(sed -n 's/.*<!-- make-run-figures.*arithmetic=\([^ ]*\).*/\1/p' "$readme" | head -1)
got_arith=$(sed -n 's/^ptsghmc train: arithmetic \(native [^(]*[^ (]\|[^ ]*\).*/\1/p' "$log" | head -1)
if [ -n "$want_arith" ] && [ "$got_arith" != "$want_arith" ]; then
	echo "check_readme: make run computed with arithmetic '${got_arith:-unknown}', the README's figures with '$want_arith': other arithmetic rounds otherwise, so they cannot match (run make run without --arithmetic native; docs/reproducibility.md)" >&2
	exit 1
fi
[ -n "$quoted" ] || { echo "check_readme: no make-run-figures table in $readme" >&2; exit 1; }
[ -n "$printed" ] || { echo "check_readme: no ensemble figures in $log (did make run finish?)" >&2; exit 1; }
if [ "$quoted" = "$printed" ]; then
	echo "check_readme: README's make run figures match what make run printed:"
	echo "$printed" | sed 's/^/  /'
	grep '^make run exit' "$log" || true
	exit 0
fi
echo "check_readme: README.md quotes (samples accuracy nll ece brier):" >&2
echo "$quoted" | sed 's/^/  /' >&2
echo "but make run printed ($log):" >&2
echo "$printed" | sed 's/^/  /' >&2
echo "update the table after the make-run-figures marker in $readme" >&2
exit 1
