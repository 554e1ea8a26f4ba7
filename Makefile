# ptsghmc: see README.md.
GO      ?= go
BIN     := bin/ptsghmc
DATA    ?= /usr/share/datasets/fashion-mnist
RUNDIR  ?= runs/default
PKGS    := libopenblas-dev dataset-fashion-mnist

.PHONY: all deps build run test test-long bench fuzz fmt vet clean

all: build

# deps installs the Debian packages the project needs (OpenBLAS for cgo
# matrix products, Fashion-MNIST for `make run`) when they are missing.
deps:
	@missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(GO) build -o $(BIN) ./cmd/ptsghmc

# run trains the default small Bayesian MLP on Fashion-MNIST with PT-SGHMC and
# prints its posterior-predictive figures.
run: build
	./$(BIN) train --data $(DATA) --out $(RUNDIR) --overwrite
	./$(BIN) eval --run $(RUNDIR) --data $(DATA)

test: deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) build -tags purego ./...
	$(GO) test -count=1 -tags purego ./autodiff/
	$(GO) test -count=1 ./...

# test-long runs the long statistical tests (minutes).
test-long: deps
	$(GO) test -count=1 -tags=long -timeout 60m ./...

bench: deps
	$(GO) test -run XXX -bench . -benchtime 2s ./autodiff/ ./sampler/

fuzz: deps
	$(GO) test -run XXX -fuzz FuzzReadIDX -fuzztime 60s ./datasets/

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf bin runs
