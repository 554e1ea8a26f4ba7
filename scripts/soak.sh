#!/usr/bin/env bash
# soak.sh: SIGKILL a training run at random moments across many checkpoint
# writes, resume it each time, and compare its files byte for byte with an
# uninterrupted run of the same configuration.
#
# usage: scripts/soak.sh [BIN]        (make soak builds BIN first)
# environment: KILLS (target number of kills, default 30), STEPS (default
# 600), DATA (default Debian's Fashion-MNIST), MAXDELAY (max seconds between
# start and kill, default 1.5), SEED (of the kill times, default 1).
set -u
BIN=${1:-bin/ptsghmc}
KILLS=${KILLS:-30}
STEPS=${STEPS:-600}
DATA=${DATA:-/usr/share/datasets/fashion-mnist}
MAXDELAY=${MAXDELAY:-1.5}
RANDOM=${SEED:-1}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ptsghmc-soak.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

ARGS=(--data "$DATA" --train-size 2000 --validation 200 --arch 784-32-10 --sampler ptsghmc --replicas 3
      --exchange 5 --steps "$STEPS" --burnin 50 --thin 10 --batch 64 --log-every 10 --checkpoint-every 5 --quiet)

echo "soak: reference run ($STEPS steps, a checkpoint every 5) ..."
"$BIN" train --out "$WORK/ref" "${ARGS[@]}" >/dev/null 2>"$WORK/ref.log" || { cat "$WORK/ref.log"; exit 1; }

kills=0 restarts=0 finished=0
"$BIN" train --out "$WORK/run" "${ARGS[@]}" >/dev/null 2>>"$WORK/run.log" &
pid=$!
while :; do
	if [ "$kills" -lt "$KILLS" ]; then
		# a random delay in [0.05, MAXDELAY] s, then SIGKILL
		delay=$(awk -v r="$RANDOM" -v m="$MAXDELAY" 'BEGIN { printf "%.3f", 0.05 + (m - 0.05) * r / 32767 }')
		sleep "$delay"
		if kill -KILL "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null
			kills=$((kills + 1))
		else
			wait "$pid"; code=$?
			[ "$code" = 0 ] && { finished=1; break; }
			echo "soak: the run exited with status $code:"; tail -5 "$WORK/run.log"; exit 1
		fi
	else
		wait "$pid"; code=$?
		[ "$code" = 0 ] && { finished=1; break; }
		echo "soak: the run exited with status $code:"; tail -5 "$WORK/run.log"; exit 1
	fi
	if [ ! -e "$WORK/run/checkpoint" ]; then
		# killed before the first checkpoint: start again
		"$BIN" train --out "$WORK/run" --overwrite "${ARGS[@]}" >/dev/null 2>>"$WORK/run.log" &
	else
		"$BIN" train --resume "$WORK/run" --quiet >/dev/null 2>>"$WORK/run.log" &
	fi
	pid=$!
	restarts=$((restarts + 1))
done

verdict=IDENTICAL
for f in samples metrics.jsonl checkpoint; do
	if ! cmp -s "$WORK/ref/$f" "$WORK/run/$f"; then
		verdict=DIFFERENT
		echo "soak: $f differs: $(stat -c %s "$WORK/run/$f") bytes vs $(stat -c %s "$WORK/ref/$f") uninterrupted"
	fi
done
echo "soak: kills $kills, restarts $restarts, finished $finished; samples, metrics and final checkpoint vs the uninterrupted run: $verdict"
[ "$verdict" = IDENTICAL ]
