#!/usr/bin/env bash
# fuzz.sh TARGET PACKAGE FUZZTIME runs one Go fuzz target on one worker and
# fails when it finds a failing input (saved under PACKAGE/testdata/fuzz/TARGET,
# where it becomes a regression test).
#
# Go 1.26's fuzzing coordinator can fail a target at the -fuzztime deadline
# with "context deadline exceeded" and no input written: a race between the
# deadline and its workers' shutdown (go.dev/issue/75804, fixed in Go 1.27).
# Such a run found nothing, so it is run once more; a second failure, or any
# failure that wrote an input or said anything else, fails.
set -u
target=$1 pkg=$2 fuzztime=$3
go=${GO:-go}
dir="$pkg/testdata/fuzz/$target"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
inputs() { ls "$dir" 2>/dev/null | sort; }
before=$(inputs)
for attempt in 1 2; do
	"$go" test -run XXX -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s -parallel 1 "$pkg" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] && exit 0
	if [ "$(inputs)" != "$before" ]; then
		echo "fuzz: $target found a failing input: see $dir" >&2
		exit 1
	fi
	if ! grep -q 'context deadline exceeded' "$log"; then
		exit "$rc"
	fi
	if [ "$attempt" -eq 1 ]; then
		echo "fuzz: $target stopped at the -fuzztime deadline with no input written (Go 1.26's coordinator race, go.dev/issue/75804); running it again" >&2
	fi
done
echo "fuzz: $target failed twice at the -fuzztime deadline with no input written" >&2
exit 1
