# zaris-certify: every target installs (npm ci) and builds (tsc) on first use.
#   make certify DURATION=4h [SEED=42] [RUNTIME=auto|process|docker] [FAULTS=kill,stop,pause,partition]
#                [BEYOND_BUDGET=1] [REPLAY=runs/<dir>] [RATE=3000] [ESCALATION=10s] [BUG=lose-on-promotion]
#   make test | make analyze RUN=runs/<dir> | make analyze HISTORY=f.json OUT=dir | make export RUN=runs/<dir>
#   make bench | make bench-verify | make sim RUNS=N | make image
SHELL := /bin/bash
NODE ?= node
CLI := $(NODE) dist/harness/cli.js
SOURCES := $(shell find nodes harness ledger reports -name '*.ts' -not -name '*.test.ts' -not -path '*/test-support/*' 2>/dev/null)

DURATION ?= 60s
RUNTIME ?= auto

.PHONY: all install build test certify analyze export bench bench-verify sim image clean

all: build

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

dist/.built: node_modules/.installed $(SOURCES) tsconfig.json tsconfig.build.json
	rm -rf dist
	npx tsc -p tsconfig.build.json
	@touch $@

build: dist/.built

test: build
	npx vitest run
	@timeout 5 docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || echo "make test: the container tests (*-docker.test.ts) were NOT run: no Docker engine answers (start dockerd, or run .ci/run)"
	@iptables -S >/dev/null 2>&1 || echo "make test: the iptables partition tests were NOT run: no CAP_NET_ADMIN (run as root)"

CERTIFY_ARGS := --duration '$(DURATION)' --runtime '$(RUNTIME)'
ifneq ($(strip $(SEED)),)
CERTIFY_ARGS += --seed '$(SEED)'
endif
ifneq ($(strip $(FAULTS)),)
CERTIFY_ARGS += --faults '$(FAULTS)'
endif
ifneq ($(filter 1 true yes,$(BEYOND_BUDGET)),)
CERTIFY_ARGS += --beyond-budget
endif
ifneq ($(strip $(REPLAY)),)
CERTIFY_ARGS += --replay '$(REPLAY)'
endif
ifneq ($(strip $(RATE)),)
CERTIFY_ARGS += --rate '$(RATE)'
endif
ifneq ($(strip $(BUG)),)
CERTIFY_ARGS += --self-test-bug '$(BUG)'
endif
ifneq ($(strip $(ESCALATION)),)
CERTIFY_ARGS += --escalation '$(ESCALATION)'
endif

certify: build
	@$(CLI) certify $(CERTIFY_ARGS)

analyze: build
ifneq ($(strip $(HISTORY)),)
	@$(CLI) analyze --history '$(HISTORY)' --out '$(or $(OUT),$(basename $(HISTORY))-analysis)'
else
	@$(CLI) analyze '$(or $(RUN),runs/latest)'
endif

export: build
	@$(CLI) export '$(or $(RUN),runs/latest)'

# Benchmarks print their figures; make bench also writes runs/bench.json (DESIGN.md §7).
bench: build
	$(NODE) dist/harness/certify.bench.js
	$(NODE) dist/nodes/client/retry-loop.bench.js

bench-verify: build
	$(NODE) dist/harness/verifier/verifier.bench.js $(WRITES)

# The node image zaris-certify-node:<digest of dist/>, offline: the base image is made from
# Debian packages when missing (harness/docker/make-base-image.ts). Skips when up to date.
BASE_IMAGE ?= zaris-certify-base:bookworm-node20
image: build
	$(NODE) dist/harness/docker/make-node-image.js --base-image '$(BASE_IMAGE)'

# the deterministic failover simulation outside vitest: make sim RUNS=N [SEED=S]
RUNS ?= 1000
sim: build
	$(NODE) dist/nodes/sim/sim-main.js --runs $(RUNS) $(if $(SEED),--seed $(SEED))

clean:
	rm -rf dist
