#!/bin/bash
# Prints what docs/architecture.md quotes of the code: each package's size in
# non-test lines (wc -l of its non-test .go files, its subdirectories apart)
# and the module's packages each one imports. Run from the repository root:
#   scripts/package_sizes.sh
set -eu
mod=$(go list -m)
echo "# non-test lines per package (the Go files of this build)"
go list -f '{{.Dir}} {{.ImportPath}} {{join .GoFiles " "}} {{join .CgoFiles " "}}' ./... | while read -r dir path files; do
	n=0
	for f in $files; do
		n=$((n + $(wc -l <"$dir/$f")))
	done
	printf '%6d %s\n' "$n" "${path#"$mod"/}"
done
echo "# imports within the module (non-test)"
go list -f '{{.ImportPath}}:{{range .Imports}} {{.}}{{end}}' ./... | while IFS=: read -r path imports; do
	own=""
	for i in $imports; do
		case "$i" in "$mod"/*) own="$own ${i#"$mod"/}" ;; esac
	done
	echo "${path#"$mod"/}:$own"
done
