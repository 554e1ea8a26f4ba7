# runs.sh: the experiment scripts' resumable rows, sourced by ensemble_sweep.sh,
# ensemble_confirm.sh, ensemble_hold.sh and uncertainty_figures.sh. The caller
# sets out (the directory of the rows) and bin (the ptsghmc binary).

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

# eval_rows NAME SPLIT ROW...: `eval --json` of the pooled rows on SPLIT (test or
# validation) into $out/NAME.test.json or $out/NAME.val.json, unless it exists.
eval_rows() {
	local name=$1 split=$2; shift 2
	local runs=() file="$out/$name.test.json"
	[ "$split" = validation ] && file="$out/$name.val.json"
	for r in "$@"; do runs+=(--run "$out/$r"); done
	[ -f "$file" ] || "$bin" eval "${runs[@]}" --split "$split" --json > "$file"
}
