#!/usr/bin/env bash
# bench_arithmetic.sh BIN [ROUNDS]: what the pinned arithmetic costs against
# the native BLAS kernels on this machine. Times `ptsghmc bench` for one
# SGNHT chain (R = 1) and train's default PT step (R = 4, exchange every
# 500) with --arithmetic pinned, and with --arithmetic native under the
# kernel OpenBLAS picks itself and each OPENBLAS_CORETYPE the CPU runs
# (Haswell; SkylakeX and Cooperlake with AVX-512), the settings alternating
# within each round; prints steps/s per round and the best.
set -euo pipefail
bin=${1:?usage: bench_arithmetic.sh BIN [ROUNDS]}
rounds=${2:-3}
core=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
settings=("pinned" "native")
cores=("")
if grep -qw avx2 /proc/cpuinfo; then cores+=("Haswell"); fi
if grep -qw avx512f /proc/cpuinfo; then cores+=("SkylakeX" "Cooperlake"); fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $core, $(nproc) CPUs; $rounds rounds, settings alternating; steps/s"
own=$("$bin" bench --arithmetic native --replicas 1 --exchange 0 --steps 1 2>/dev/null | sed -n 's/^arithmetic: native openblas [^ ]* \([^ ]*\) .*/\1/p')
echo "# OpenBLAS's own kernel here: $own"
workloads=("--replicas 1 --batch 128 --exchange 0 --steps 300" "--replicas 4 --batch 128 --exchange 500 --steps 500")
names=("one SGNHT chain (R=1)" "train's PT step (R=4, exchange 500)")
declare -A results
for ((r = 1; r <= rounds; r++)); do
	for w in 0 1; do
		for c in "${cores[@]}"; do
			for s in "${settings[@]}"; do
				if [[ $s == pinned && -n $c ]]; then continue; fi
				label="$s${c:+ $c}"
				[[ $s == native && -z $c ]] && label="native ($own, OpenBLAS's choice)"
				v=$(OPENBLAS_CORETYPE=$c "$bin" bench --arithmetic "$s" ${workloads[$w]} 2>/dev/null | awk '/steps\/s/ {print $2}')
				results["$w|$label"]+="$v "
			done
		done
	done
done
echo
echo "| workload | setting | steps/s per round | best |"
echo "|---|---|---|---:|"
for w in 0 1; do
	for key in "${!results[@]}"; do
		[[ $key == "$w|"* ]] || continue
		vals=${results[$key]}
		best=$(tr ' ' '\n' <<<"$vals" | sort -g | tail -1)
		echo "| ${names[$w]} | ${key#*|} | $vals | $best |"
	done | sort -t'|' -k3
done
