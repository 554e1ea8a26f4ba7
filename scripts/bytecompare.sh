#!/bin/sh
# bytecompare.sh: byte-compare a refactor's runs with a reference binary's.
#
#   scripts/bytecompare.sh ref REFBIN OUTDIR   # the reference runs (once)
#   scripts/bytecompare.sh new NEWBIN OUTDIR   # the same runs, then compare
#
# Five short runs: (a) a tempered SGNHT with the noise correction, (b) a
# 3-replica PT with rmsprop preconditioning, (d) a 4-replica PT with an
# adaptive ladder, a cyclical step and a noise target, (e) an SGNHT chain
# with an SGD warm-up on its own batch size and a cyclical step,
# (c) run (a)'s settings stopped
# at 2000 steps by the reference and resumed to 3000 by the binary under
# test (compared with the reference's own resume, ref-cr, and with the
# uninterrupted run (a): config.json may differ from (a)'s). samples, metrics.jsonl and config.json must be identical bytes and
# the checkpoints equal when decoded (scripts/ckpt_equal.go).
set -eu
mode=$1 bin=$2 out=$3
A="--steps 3000 --burnin 1000 --thin 100 --temperature 0.1 --noise-correction --arch 784-32-10 --seed 3"
B="--sampler ptsghmc --replicas 3 --precondition rmsprop --steps 3000 --burnin 1000 --arch 784-32-10"
D="--sampler ptsghmc --replicas 4 --ladder adaptive --swap-target 0.3 --exchange 10 --cycle 500 --noise-target 0.3 --steps 3000 --burnin 1500 --arch 784-32-10 --seed 5"
E="--cycle 500 --sgd-warmup 200 --warmup-batch 64 --steps 2000 --burnin 1000 --thin 50 --arch 784-32-10 --seed 7"
C="--burnin 1000 --thin 100 --temperature 0.1 --noise-correction --arch 784-32-10 --seed 3"
# A binary whose noise correction raises masses and tracks the noise by
# default (issue 60) runs (a) and (c) with both off, the correction a
# binary from before them runs (and a run it resumes keeps).
if "$bin" train --help 2>&1 | grep -q -- '-noise-ceiling'; then
	A="$A --noise-ceiling 0 --noise-track=false"
	C="$C --noise-ceiling 0 --noise-track=false"
fi
mkdir -p "$out"
case $mode in
ref)
	rm -rf "$out/ref-a" "$out/ref-b" "$out/ref-c" "$out/ref-d" "$out/ref-e"
	nice -n 10 "$bin" train --out "$out/ref-a" $A >/dev/null 2>&1
	nice -n 10 "$bin" train --out "$out/ref-b" $B >/dev/null 2>&1
	nice -n 10 "$bin" train --out "$out/ref-d" $D >/dev/null 2>&1
	nice -n 10 "$bin" train --out "$out/ref-e" $E >/dev/null 2>&1
	nice -n 10 "$bin" train --out "$out/ref-c" $C --steps 2000 >/dev/null 2>&1
	rm -rf "$out/ref-cr"
	cp -r "$out/ref-c" "$out/ref-cr"
	nice -n 10 "$bin" train --resume "$out/ref-cr" --steps 3000 >/dev/null 2>&1
	;;
new)
	rm -rf "$out/new-a" "$out/new-b" "$out/new-c" "$out/new-d" "$out/new-e"
	nice -n 10 "$bin" train --out "$out/new-a" $A >/dev/null 2>&1
	nice -n 10 "$bin" train --out "$out/new-b" $B >/dev/null 2>&1
	nice -n 10 "$bin" train --out "$out/new-d" $D >/dev/null 2>&1
	nice -n 10 "$bin" train --out "$out/new-e" $E >/dev/null 2>&1
	cp -r "$out/ref-c" "$out/new-c"
	nice -n 10 "$bin" train --resume "$out/new-c" --steps 3000 >/dev/null 2>&1
	fail=0
	for p in a:a b:b d:d e:e c:cr c:a; do
		n=${p%%:*} r=${p##*:}
		for f in samples metrics.jsonl config.json; do
			[ -e "$out/ref-$r/$f" ] || continue
			if cmp -s "$out/ref-$r/$f" "$out/new-$n/$f"; then
				echo "same: new-$n/$f ref-$r/$f"
			else
				echo "DIFFER: new-$n/$f ref-$r/$f"; fail=1
			fi
		done
		cmp -s "$out/ref-$r/checkpoint" "$out/new-$n/checkpoint" && echo "same bytes: new-$n/checkpoint ref-$r/checkpoint"
		go run scripts/ckpt_equal.go "$out/ref-$r/checkpoint" "$out/new-$n/checkpoint" || fail=1
	done
	exit $fail
	;;
esac
