# zaris-certify: every target installs (npm ci) and builds (tsc) on first use.
#   make certify DURATION=4h [SEED=42] [RUNTIME=auto|process|docker] [FAULTS=kill,...|preset:<name>] [NODES=3|5]
#                [BEYOND_BUDGET=1] [REPLAY=runs/<dir>] [RATE=3000] [ESCALATION=10s] [ASYNC_LAG=1s] [BUG=lose-on-promotion]
#                [SCENARIO=scenarios/<name>.yaml]
#                (the workload's client reads ZARIS_REQUEST_TIMEOUT, ZARIS_DISABLE_RETRIES, ZARIS_CLIENT_MAP_REFRESH_WAIT_MS)
#   make scenarios [ONLY=name,...] [RUNTIME=...] | make shrink RUN=runs/<a failed run> [MAX_RUNS=16]
#   make test | make analyze RUN=runs/<dir> | make analyze HISTORY=f.json OUT=dir | make export RUN=runs/<dir>
#   make bench | make bench-verify | make sim RUNS=N | make image
SHELL := /bin/bash
NODE ?= node
CLI := $(NODE) dist/harness/cli.js
SOURCES := $(shell find nodes harness ledger reports -name '*.ts' -not -name '*.test.ts' -not -path '*/test-support/*' 2>/dev/null)

.PHONY: all install build test certify scenarios shrink analyze export bench bench-verify sim image clean

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

# vitest's exit code is make test's; every run, passed or failed, ends with what was NOT run and
# why (test-support/not-run-reporter.ts) and the line "tests: N passed, N failed, N skipped".
# the tests are typechecked too (tsconfig.json covers them; the build's tsconfig does not)
test: build
	npx tsc -p tsconfig.json --noEmit
	npx vitest run

# Variables reach the CLI as arguments built in the shell from the environment (make puts command-
# line variables there): a value is never pasted into a command line, so quotes in it are harmless.
certify: build
	@args=(--duration "$${DURATION:-60s}" --runtime "$${RUNTIME:-auto}"); \
	if [ -n "$${SEED:-}" ]; then args+=(--seed "$$SEED"); fi; \
	if [ -n "$${FAULTS:-}" ]; then args+=(--faults "$$FAULTS"); fi; \
	if [ -n "$${NODES:-}" ]; then args+=(--nodes "$$NODES"); fi; \
	case "$${BEYOND_BUDGET:-}" in 1|true|yes) args+=(--beyond-budget);; esac; \
	if [ -n "$${REPLAY:-}" ]; then args+=(--replay "$$REPLAY"); fi; \
	if [ -n "$${SCENARIO:-}" ]; then args+=(--scenario "$$SCENARIO"); fi; \
	if [ -n "$${RATE:-}" ]; then args+=(--rate "$$RATE"); fi; \
	if [ -n "$${BUG:-}" ]; then args+=(--self-test-bug "$$BUG"); fi; \
	if [ -n "$${ESCALATION:-}" ]; then args+=(--escalation "$$ESCALATION"); fi; \
	if [ -n "$${ASYNC_LAG:-}" ]; then args+=(--async-lag "$$ASYNC_LAG"); fi; \
	exec $(CLI) certify "$${args[@]}"

# every scenario of scenarios/ (or ONLY=name,...), one at a time: a table and runs/scenarios.json
scenarios: build
	@args=(--runtime "$${RUNTIME:-auto}"); if [ -n "$${ONLY:-}" ]; then args+=(--only "$$ONLY"); fi; \
	if [ -n "$${SEED:-}" ]; then args+=(--seed "$$SEED"); fi; \
	exec $(CLI) scenarios "$${args[@]}"

# delta debugging of a FAILED run's recorded faults: writes <run>/shrunk.yaml (a scenario)
shrink: build
	@if [ -z "$${RUN:-}" ]; then echo 'make shrink RUN=runs/<a failed run> [MAX_RUNS=16] [RUNTIME=...]' >&2; exit 64; fi; \
	args=(--runtime "$${RUNTIME:-auto}" --max-runs "$${MAX_RUNS:-16}"); exec $(CLI) shrink "$$RUN" "$${args[@]}"

analyze: build
	@if [ -n "$${HISTORY:-}" ]; then exec $(CLI) analyze --history "$$HISTORY" --out "$${OUT:-$${HISTORY%.json}-analysis}"; \
	else exec $(CLI) analyze "$${RUN:-runs/latest}"; fi

export: build
	@exec $(CLI) export "$${RUN:-runs/latest}"

# Benchmarks print their figures; make bench also writes runs/bench.json (DESIGN.md §7).
bench: build
	$(NODE) dist/harness/certify.bench.js
	$(NODE) dist/nodes/client/retry-loop.bench.js

bench-verify: build
	@exec $(NODE) dist/harness/verifier/verifier.bench.js $${WRITES:-}

# The node image zaris-certify-node:<digest of dist/>, offline: the base image is made from
# Debian packages when missing (harness/docker/make-base-image.ts). Skips when up to date.
image: build
	@exec $(NODE) dist/harness/docker/make-node-image.js --base-image "$${BASE_IMAGE:-zaris-certify-base:bookworm-node20-faketime}"

# the deterministic failover simulation outside vitest: make sim RUNS=N [SEED=S]
sim: build
	@args=(--runs "$${RUNS:-1000}"); if [ -n "$${SEED:-}" ]; then args+=(--seed "$$SEED"); fi; exec $(NODE) dist/nodes/sim/sim-main.js "$${args[@]}"

clean:
	rm -rf dist
