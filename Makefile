# ptsghmc: see README.md.
GO      ?= go
BIN     := bin/ptsghmc
DATA    ?= /usr/share/datasets/fashion-mnist
RUNDIR  ?= runs/default
PKGS    := libopenblas-dev dataset-fashion-mnist

.PHONY: all deps build run run-long test test-long bench bench-pt bench-torch fuzz soak fmt vet clean

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

# run trains the default Bayesian MLP on Fashion-MNIST (one SGNHT chain, chosen
# by the tempering verdict in the README) and
# prints its posterior-predictive figures.
run: build
	./$(BIN) train --data $(DATA) --out $(RUNDIR) --overwrite
	./$(BIN) eval --run $(RUNDIR) --data $(DATA)

# run-long is the README's longer configuration: one SGNHT chain (PT's rung 1)
# at half the default step size for 350,000 steps on all 60,000 training
# images (about 33 minutes here), the sgd baseline on the same images, and the
# comparison with plots.
run-long: build
	./$(BIN) train --data $(DATA) --out runs/slong --overwrite --validation 0 --sampler sgnht --lr 0.01 --steps 350000 --burnin 20000 --thin 300
	./$(BIN) train --data $(DATA) --out runs/sgd --overwrite --validation 0 --sampler sgd --steps 30000
	./$(BIN) eval --run runs/slong --baseline runs/sgd --data $(DATA) --plot runs/slong/plots

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

# bench-pt times full PT-SGHMC steps (issue's configuration) and the scaling
# sweep; bench-torch runs the PyTorch reference script beside it (needs
# Debian's python3-torch; not a dependency of the project).
bench-pt: build
	./$(BIN) bench --arch 784-400-400-10 --replicas 10 --batch 128 --steps 50
	./$(BIN) bench --sweep --steps 30 --plot docs/scaling.png

bench-torch:
	/usr/bin/python3 scripts/pytorch_bench.py --threads 1
	/usr/bin/python3 scripts/pytorch_bench.py --threads 2

# fuzz runs each fuzzer for FUZZTIME on one worker (the seed corpora also
# run in `make test`); a crasher is saved under testdata/fuzz/ and becomes a
# regression test there. New inputs are minimized for 1 s only: the
# checkpoint inputs are large, and longer minimization took most of the time.
FUZZTIME ?= 5m
fuzz: deps
	$(GO) test -run XXX -fuzz '^FuzzReadIDX$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s -parallel 1 ./datasets/
	$(GO) test -run XXX -fuzz '^FuzzCheckpoint$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s -parallel 1 ./train/
	$(GO) test -run XXX -fuzz '^FuzzSamples$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s -parallel 1 ./train/
	$(GO) test -run XXX -fuzz '^FuzzConfig$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s -parallel 1 ./train/

# soak SIGKILLs a training run at random moments (KILLS times, default 30)
# across many checkpoint writes, resumes it each time and compares its
# samples and metrics byte for byte with an uninterrupted run (a minute or
# two; not part of make test).
soak: build
	scripts/soak.sh $(BIN)

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf bin runs
