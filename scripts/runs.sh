# runs.sh: the experiment scripts' resumable rows, sourced by ensemble_sweep.sh,
# ensemble_confirm.sh, ensemble_sweep_precond.sh, ensemble_hold.sh, uncertainty_figures.sh,
# cnn_select.sh, cnn_verdict.sh, cnn_ood_select.sh, cnn_ood_verdict.sh, ood_select.sh, ood_select2.sh, calibration_select.sh, calibration_ood.sh and budget_curve.sh. The caller sets out (the directory of the rows) before
# sourcing it; sourcing makes that directory and sets bin (the ptsghmc binary: BIN,
# default bin/ptsghmc) and data (the data set: DATA, default Debian's Fashion-MNIST).
: "${out:?runs.sh: set out, the directory of the rows, before sourcing}"
bin=${BIN:-bin/ptsghmc}
data=${DATA:-/usr/share/datasets/fashion-mnist}
mkdir -p "$out"

# train_row NAME ARGS...: trains $out/NAME with `train --out $out/NAME --overwrite
# ARGS`, or, when an earlier call was interrupted, resumes it from its checkpoint
# (bit-exact), unless it is finished. A finished row has $out/NAME/.done, holding
# the seconds of the call that finished it; the output goes to $out/NAME.train.txt.
train_row() {
	local name=$1; shift
	local dir="$out/$name" t0
	[ -f "$dir/.done" ] && return 0
	t0=$(date +%s)
	if [ -f "$dir/config.json" ]; then
		"$bin" train --resume "$dir" --quiet >> "$dir.train.txt" 2>&1
	else
		"$bin" train --out "$dir" --overwrite "$@" > "$dir.train.txt" 2>&1
	fi
	echo "$(( $(date +%s) - t0 ))" > "$dir/.done"
}

# extend_row NAME FROM STEPS: $out/NAME is the finished row $out/FROM trained on to
# STEPS steps: FROM's directory copied and resumed with `train --resume --steps
# STEPS`, which at a constant step size gives the STEPS-step run's samples byte for
# byte (cmd/ptsghmc's TestResumeToMoreStepsIsTheLongerRun); FROM is left as it was.
# An interrupted extension resumes; $out/NAME/.done as train_row's.
extend_row() {
	local name=$1 from=$2 steps=$3
	local dir="$out/$name" t0
	[ -f "$dir/.done" ] && return 0
	[ -f "$out/$from/.done" ] || { echo "extend_row: $out/$from is not a finished row" >&2; return 1; }
	if [ ! -d "$dir" ]; then
		rm -rf "$dir.tmp" && cp -a "$out/$from" "$dir.tmp" && rm -f "$dir.tmp/.done" && mv "$dir.tmp" "$dir"
	fi
	t0=$(date +%s)
	"$bin" train --resume "$dir" --steps "$steps" --quiet >> "$dir.train.txt" 2>&1
	echo "$(( $(date +%s) - t0 ))" > "$dir/.done"
}

# eval_json FILE ARGS...: `eval ARGS --json` into FILE unless FILE exists,
# written to FILE.tmp and renamed when eval succeeds, so that an interrupted
# eval leaves no file that a rerun would take for a finished one.
eval_json() {
	local file=$1; shift
	[ -f "$file" ] && return 0
	"$bin" eval "$@" --json > "$file.tmp" && mv "$file.tmp" "$file"
}

# run_flags DIR ROW...: sets the array runs to `--run DIR/ROW` for each ROW, the
# pooled rows an eval reads.
run_flags() {
	local dir=$1 r; shift
	runs=()
	for r in "$@"; do runs+=(--run "$dir/$r"); done
}

# eval_rows NAME SPLIT ROW...: `eval --json` of the pooled rows on SPLIT (test or
# validation) into $out/NAME.test.json or $out/NAME.val.json, unless it exists.
eval_rows() {
	local name=$1 split=$2; shift 2
	local runs file="$out/$name.test.json"
	[ "$split" = validation ] && file="$out/$name.val.json"
	run_flags "$out" "$@"
	eval_json "$file" "${runs[@]}" --split "$split"
}

# sgd_members NAME K STEPS: trains (with the caller's train function) K sgd
# networks NAME-1..NAME-K of STEPS steps, each its own cosine decay of the step
# to zero (--cycle STEPS), seeds 10 seed + i; their names go to the array members.
sgd_members() {
	local name=$1 k=$2 steps=$3 i
	members=()
	for i in $(seq 1 "$k"); do
		train "$name-$i" --seed $((10 * seed + i)) --sampler sgd --steps "$steps" --cycle "$steps"
		members+=("$name-$i")
	done
}

# ood_train NAME ARGS...: train_row of issue 57's OOD selections (ood_select.sh,
# ood_select2.sh): the 5,000-image validation split of --split-seed $seed, quiet,
# a checkpoint every 5,000 steps.
ood_train() {
	local name=$1; shift
	train_row "$name" --data "$data" --validation 5000 --split-seed "$seed" --quiet --checkpoint-every 5000 "$@"
}

# ood_score NAME ROW...: the OOD selections' two evals of the pooled ROWs:
# $out/NAME.val.json on the validation split with MNIST's training digits
# ($mnist: the IDX folder, scripts/mnist_dir.sh) and the built-in sets (what
# the rules read), and $out/NAME.test.json on the test set with MNIST's test
# digits and the built-in sets (recorded, not used to choose).
ood_score() {
	local name=$1; shift
	local runs
	run_flags "$out" "$@"
	eval_json "$out/$name.val.json" "${runs[@]}" --split validation --ood "$mnist/train-images-idx3-ubyte.gz" --ood builtin
	eval_json "$out/$name.test.json" "${runs[@]}" --split test --ood mnist --ood builtin
}

# cnn_ood_row ROW: issue 57's CNN rows (cnn_ood_select.sh, cnn_ood_verdict.sh; their
# headers say why each): sets the array row_args to ROW's training flags (make run-cnn's
# 2 x 14,000-step chains of seed $seed, then the row's own) and row_k to the LeNets of the
# deep ensemble of its wall-clock (the selection's measurements: 7 or 8); fails for a ROW
# that is not one of base, s4k3nc and nc.
cnn_ood_row() {
	row_args=(--seed "$seed" --chains 2 --steps 14000 --burnin 3000 --thin 100 --temperature 0.1)
	case $1 in
	base) row_k=7 ;;
	s4k3nc) row_args+=(--noise-correction --null-space-prior 10 --null-space-keep 0.999 --null-space-skip 0.9999) row_k=8 ;;
	nc) row_args+=(--noise-correction) row_k=7 ;;
	*) return 1 ;;
	esac
}
