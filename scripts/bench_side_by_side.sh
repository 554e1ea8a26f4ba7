#!/usr/bin/env bash
# bench_side_by_side.sh times ptsghmc bench and its PyTorch twin
# (scripts/pytorch_bench.py) on the three issue-14 workloads, alternating the
# programs, ROUNDS times each, and prints a markdown table with the ratio
# ptsghmc / PyTorch, best run against best run.
#
#   (i)   the benchmark step: 10 replicas, batch 128, exchange every 10 steps,
#         both programs running ptsghmc's corrected Barker test (its batch
#         grown until the test can decide)
#   (vi)  the same with the approximate test on one batch (--exchange-test
#         resghmc in both)
#   (vii) the same with every test exact (--xbatch 10000: the whole data
#         set from the first look): equal exchange work in both programs,
#         whatever their tests would have grown to
#   (ii)  train --sampler ptsghmc's default step: 4 replicas, batch 128,
#         exchange every 500 steps (500 timed steps: one exchange round)
#   (iii) a single chain, no exchange, batch 128: SGNHT in ptsghmc against
#         SGHMC in PyTorch
#   (v)   sampling as fast as optimising: one SGNHT chain against PyTorch's
#         AdamW step of the same network (forward, backward, optimiser)
#   (iv)  the LeNet CNN, one chain, batch 128: `ptsghmc bench --model lenet`
#         (the compiled graph, its default gradient shards) against
#         scripts/pytorch_lenet_bench.py
#
# torch.set_num_threads does not reach Debian's OpenBLAS (the system
# libblas.so.3 keeps its own pthreads: all cores unless OPENBLAS_NUM_THREADS
# says otherwise), so PyTorch runs in three settings and its best counts:
# --threads 1 with OPENBLAS_NUM_THREADS=1 (truly one thread), --threads 1 with
# OpenBLAS's default, and --threads 2.
#
# PyTorch allocates its tensors afresh each step; glibc's malloc returns the
# large ones to the kernel (mmap/munmap, and trimming the heap) and touches
# fresh pages again next step. Where page faults are expensive (a microVM:
# PyTorch's fwd+bwd on one thread went 23.6 -> 4.3 ms here) that dominates
# PyTorch's step, so every PyTorch run keeps its memory with
# MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 (PyTorch's
# CPU tuning guide suggests a caching allocator for the same reason);
# TORCH_MALLOC_TUNE=0 runs it with glibc's defaults. ptsghmc allocates its
# buffers once.
#
# PyTorch is not a dependency of ptsghmc: this script needs Debian's
# python3-torch and stops with a message when it is missing. Run it on a quiet
# machine (about 10 minutes on 2 cores). Environment: BIN (default
# bin/ptsghmc), PYTHON (default /usr/bin/python3), ROUNDS (default 2),
# TORCH_MALLOC_TUNE (default 1), LENET_STEPS (default 30: timed steps of
# workload iv; WORKLOADS=lenet runs that workload alone, WORKLOADS="v i" the
# MLP workloads named, without LeNet).
#
# usage: scripts/bench_side_by_side.sh   (or: make bench-torch)
set -euo pipefail

BIN=${BIN:-bin/ptsghmc}
PYTHON=${PYTHON:-/usr/bin/python3}
ROUNDS=${ROUNDS:-2}
LENET_STEPS=${LENET_STEPS:-30}
TORCH_MALLOC_TUNE=${TORCH_MALLOC_TUNE:-1}
malloc_env=()
if [ "$TORCH_MALLOC_TUNE" != 0 ]; then
	malloc_env=(MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824)
fi
here=$(cd "$(dirname "$0")" && pwd)
# TORCH_CORETYPE=Cooperlake (say) runs PyTorch's OpenBLAS on that kernel: on
# a CPU OpenBLAS 0.3.21 does not know it falls back to Prescott (SSE3).
[ -n "${TORCH_CORETYPE:-}" ] && malloc_env+=(OPENBLAS_CORETYPE="$TORCH_CORETYPE")
# The CPU time (user, system) of every timed program run, per program.
cpu_dir=$(mktemp -d)
trap 'rm -rf "$cpu_dir"' EXIT
timed() { local who=$1; shift; /usr/bin/time -a -o "$cpu_dir/$who" -f "%U %S" "$@"; }

if ! "$PYTHON" -c 'import torch' >/dev/null 2>&1; then
	echo "bench_side_by_side.sh: PyTorch not found ('$PYTHON -c \"import torch\"' failed)." >&2
	echo "  This comparison needs Debian's python3-torch (apt-get install python3-torch); ptsghmc itself does not." >&2
	exit 1
fi
if [ ! -x "$BIN" ]; then
	echo "bench_side_by_side.sh: $BIN not found or not executable; run 'make build' first" >&2
	exit 1
fi
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
	echo "bench_side_by_side.sh: ROUNDS must be a positive integer (got '$ROUNDS')" >&2
	exit 1
fi

# name | ptsghmc bench flags | pytorch_bench.py flags
workloads=(
	"(i) benchmark: R=10, batch 128, exchange every 10|--replicas 10 --batch 128 --exchange 10 --steps 50|--replicas 10 --batch 128 --exchange 10 --steps 50"
	"(ii) train default: R=4, batch 128, exchange every 500|--replicas 4 --batch 128 --exchange 500 --steps 500|--replicas 4 --batch 128 --exchange 500 --steps 500"
	"(iii) single chain: R=1, batch 128, no exchange (SGNHT vs SGHMC)|--replicas 1 --batch 128 --exchange 0 --steps 200|--replicas 1 --batch 128 --exchange 0 --steps 200 --kernel sghmc"
	"(vi) R=10, exchange every 10, the approximate test on one batch (resghmc)|--replicas 10 --batch 128 --exchange 10 --steps 50 --exchange-test resghmc|--replicas 10 --batch 128 --exchange 10 --steps 50 --exchange-test resghmc"
	"(vii) R=10, exchange every 10, every test exact (--xbatch 10000)|--replicas 10 --batch 128 --exchange 10 --steps 50 --xbatch 10000|--replicas 10 --batch 128 --exchange 10 --steps 50 --xbatch 10000"
	"(v) sampling vs optimising: one SGNHT chain vs PyTorch's AdamW step|--replicas 1 --batch 128 --exchange 0 --steps 300|--replicas 1 --batch 128 --exchange 0 --steps 300 --kernel adamw"
)

# ptsghmc_rate and torch_rate print a run's steps/s, or fail with its output.
# torch_rate's first argument is the OpenBLAS thread count ("" for its default).
ptsghmc_rate() {
	local out r
	out=$(timed ptsghmc "$BIN" bench --arch 784-400-400-10 --dtype float32 "$@" 2>&1) || { echo "$out" >&2; return 1; }
	r=$(awk '$1 == "steps/s" { print $2 }' <<<"$out")
	[ -n "$r" ] || { echo "cannot parse steps/s from ptsghmc bench:" >&2; echo "$out" >&2; return 1; }
	count_exchanges ptsghmc "$out"
	echo "$r"
}
# count_exchanges WHO OUTPUT adds a run's exchange tests (tests, grown,
# exact, early: the first four numbers of its "exchange tests" line) to the
# current workload's totals for WHO.
count_exchanges() {
	local n
	n=$(grep -m1 'exchange tests' <<<"$2" | grep -o '[0-9][0-9]*' | head -4 | tr '\n' ' ')
	[ -n "$n" ] && [ "${n%% *}" != 0 ] && echo "$workload|$1|$n" >>"$cpu_dir/exchanges"
	return 0
}
torch_rate() {
	local blas=$1 out r
	shift
	if [ -n "$blas" ]; then
		out=$(timed pytorch env "${malloc_env[@]}" OPENBLAS_NUM_THREADS=$blas "$PYTHON" "$here/pytorch_bench.py" --arch 784-400-400-10 "$@" 2>&1) || { echo "$out" >&2; return 1; }
	else
		out=$(timed pytorch env -u OPENBLAS_NUM_THREADS "${malloc_env[@]}" "$PYTHON" "$here/pytorch_bench.py" --arch 784-400-400-10 "$@" 2>&1) || { echo "$out" >&2; return 1; }
	fi
	r=$(sed -n 's/.*: \([0-9.]*\) steps\/s$/\1/p' <<<"$out")
	[ -n "$r" ] || { echo "cannot parse steps/s from pytorch_bench.py:" >&2; echo "$out" >&2; return 1; }
	count_exchanges PyTorch "$out"
	echo "$r"
}
# lenet_rate and torch_lenet_rate are ptsghmc_rate and torch_rate for the
# LeNet workload (iv).
lenet_rate() {
	local out r
	out=$(timed ptsghmc "$BIN" bench --model lenet --dtype float32 --batch 128 --steps "$LENET_STEPS" --json 2>&1) || { echo "$out" >&2; return 1; }
	r=$(sed -n 's/.*"steps_per_sec": *\([0-9.e+-]*\).*/\1/p' <<<"$out")
	[ -n "$r" ] || { echo "cannot parse steps_per_sec from ptsghmc bench --model lenet:" >&2; echo "$out" >&2; return 1; }
	awk -v r="$r" 'BEGIN { printf "%.2f", r }'
}
torch_lenet_rate() {
	local blas=$1 out r
	shift
	if [ -n "$blas" ]; then
		out=$(timed pytorch env "${malloc_env[@]}" OPENBLAS_NUM_THREADS=$blas "$PYTHON" "$here/pytorch_lenet_bench.py" --batch 128 --steps "$LENET_STEPS" "$@" 2>&1) || { echo "$out" >&2; return 1; }
	else
		out=$(timed pytorch env -u OPENBLAS_NUM_THREADS "${malloc_env[@]}" "$PYTHON" "$here/pytorch_lenet_bench.py" --batch 128 --steps "$LENET_STEPS" "$@" 2>&1) || { echo "$out" >&2; return 1; }
	fi
	r=$(sed -n 's/.*: \([0-9.]*\) steps\/s$/\1/p' <<<"$out")
	[ -n "$r" ] || { echo "cannot parse steps/s from pytorch_lenet_bench.py:" >&2; echo "$out" >&2; return 1; }
	echo "$r"
}
best() { tr ' ' '\n' | awk 'NF && ($1 > m) { m = $1 } END { print m }'; }
list() { sed 's/^ //; s/ /, /g' <<<"$1"; }

blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs"
echo "# ptsghmc BLAS: $("$BIN" bench --arch 20-8-3 --replicas 1 --steps 1 --json 2>/dev/null | sed -n 's/.*"blas": *"\([^"]*\)".*/\1/p'); system libblas.so.3 (PyTorch): $blas"
echo "# PyTorch's environment: ${malloc_env[*]:-glibc defaults}; its OpenBLAS kernel: $(env "${malloc_env[@]}" "$PYTHON" -c 'import ctypes; f = ctypes.CDLL("libopenblas.so.0").openblas_get_corename; f.restype = ctypes.c_char_p; print(f().decode())' 2>/dev/null || echo unknown)"
echo "# $("$PYTHON" -c 'import torch; print("torch", torch.__version__)'); $ROUNDS rounds, programs alternating; figures in steps/s, float32, arch 784-400-400-10"
echo
echo "| workload | ptsghmc bench | PyTorch 1 thread, OpenBLAS 1 thread | PyTorch 1 thread, OpenBLAS default | PyTorch 2 threads | ptsghmc best / PyTorch best |"
echo "|---|---:|---:|---:|---:|---:|"
# WORKLOADS picks workloads by their roman numeral (lenet: iv alone)
run_lenet=1
if [ "${WORKLOADS:-all}" != all ]; then
	picked=()
	for w in "${workloads[@]}"; do
		tag=${w#(}
		tag=${tag%%)*}
		[[ " $WORKLOADS " == *" $tag "* ]] && picked+=("$w")
	done
	workloads=("${picked[@]}")
	[[ " $WORKLOADS " == *" lenet "* || " $WORKLOADS " == *" iv "* ]] || run_lenet=0
fi
# measure_row NAME PRATE TRATE PFLAGS TFLAGS prints a workload's row: ROUNDS
# rounds alternating ptsghmc (PRATE PFLAGS) and PyTorch's three settings
# (TRATE BLAS_THREADS TFLAGS --threads N), and the ratio of the bests.
measure_row() {
	local name=$1 prate=$2 trate=$3 pflags=$4 tflags=$5 p="" t0="" t1="" t2="" k pb tb ratio
	for ((k = 0; k < ROUNDS; k++)); do
		# shellcheck disable=SC2086
		p="$p $($prate $pflags)"
		# shellcheck disable=SC2086
		t0="$t0 $($trate 1 $tflags --threads 1)"
		# shellcheck disable=SC2086
		t1="$t1 $($trate "" $tflags --threads 1)"
		# shellcheck disable=SC2086
		t2="$t2 $($trate "" $tflags --threads 2)"
	done
	pb=$(best <<<"$p")
	tb=$(printf '%s %s %s' "$t0" "$t1" "$t2" | best)
	ratio=$(awk -v a="$pb" -v b="$tb" 'BEGIN { printf "%.2f", a / b }')
	echo "| $name | $(list "$p") | $(list "$t0") | $(list "$t1") | $(list "$t2") | ${ratio}x |"
}
for w in "${workloads[@]}"; do
	IFS='|' read -r name pflags tflags <<<"$w"
	workload=${name%%:*} # count_exchanges files the runs' exchange counts under it
	measure_row "$name" ptsghmc_rate torch_rate "$pflags" "$tflags"
done
[ "$run_lenet" = 1 ] && measure_row "(iv) LeNet CNN: R=1, batch 128, no exchange (SGNHT vs SGHMC)" lenet_rate torch_lenet_rate "" ""
echo
[ "$run_lenet" = 1 ] && echo "# (iv): $BIN bench --model lenet --dtype float32 --batch 128 --steps $LENET_STEPS; $PYTHON scripts/pytorch_lenet_bench.py --batch 128 --steps $LENET_STEPS --threads 1|2"
echo "# commands: $BIN bench --arch 784-400-400-10 --dtype float32 <flags>; [OPENBLAS_NUM_THREADS=1] $PYTHON scripts/pytorch_bench.py --arch 784-400-400-10 <flags> --threads 1|2"
for w in "${workloads[@]}"; do
	IFS='|' read -r name pflags tflags <<<"$w"
	echo "#   $name: ptsghmc $pflags | pytorch $tflags"
done
# Both programs run the same exchange test; its batch grows with the data
# each draws, so say how often it grew in each.
[ -s "$cpu_dir/exchanges" ] && awk -F'|' '{ split($3, n, " "); k = $1 "|" $2; if (!(k in t)) o[++m] = k; t[k] += n[1]; g[k] += n[2]; x[k] += n[3]; e[k] += n[4] }
	END { for (i = 1; i <= m; i++) { split(o[i], w, "|"); printf "# exchange tests of %s, all %s runs: %d, %d grew their batch, %d exact on all data, %d decided early\n", w[1], w[2], t[o[i]], g[o[i]], x[o[i]], e[o[i]] } }' "$cpu_dir/exchanges"
for who in ptsghmc pytorch; do
	[ -s "$cpu_dir/$who" ] || continue
	awk -v who="$who" '/^[0-9.]+ [0-9.]+$/ { u += $1; s += $2 } END { if (u + s > 0) printf "# CPU time of every %s run: user %.1f s, system %.1f s (%.0f%% system)\n", who, u, s, 100 * s / (u + s) }' "$cpu_dir/$who"
done
