# zaris-certify: every target installs (npm ci) and builds (tsc) on first use.
#   make certify DURATION=4h [TARGET=zaris|etcd|redis-sentinel|nats-jetstream|example-kv] [SEED=42] [RUNTIME=auto|process|docker] [FAULTS=kill,...,membership|preset:<name>] [NODES=3|5] [SPARES=0..3]
#                [REDIS_MIN_REPLICAS=0|1|2] (TARGET=redis-sentinel: Redis's min-replicas-to-write, default 1)
#                [PATRONI_SYNC=off|strict] (TARGET=postgres-patroni: asynchronous replication, or Patroni's synchronous_mode_strict; default off)
#                [NATS_READS=1] (TARGET=nats-jetstream: reads during the run, judged as linearizable; default off)
#                [BEYOND_BUDGET=1] [REPLAY=runs/<dir>] [RATE=3000] [ESCALATION=10s] [ASYNC_LAG=1s] [STALL=5s] [BUG=lose-on-promotion]
#                [SCENARIO=scenarios/<name>.yaml]
#                (the workload's client reads ZARIS_REQUEST_TIMEOUT, ZARIS_DISABLE_RETRIES, ZARIS_CLIENT_MAP_REFRESH_WAIT_MS)
#   make scenarios [ONLY=name,...] [RUNTIME=...] | make shrink RUN=runs/<a failed run> [MAX_RUNS=16]
#   make test | make analyze RUN=runs/<dir> | make analyze HISTORY=f.json OUT=dir | make export RUN=runs/<dir>
#   make report-screenshot RUN=runs/<dir> [OUT=file.png] [FULL=1] (a PNG of the run's report.html; Debian's chromium)
#   make bench | make bench-verify | make bench-seal [DURATION=4h] [LOSS_EVERY=N] | make bench-endphase | make sim RUNS=N [BUG=name] [MEMBERSHIP=1] | make power-sim [RUNS=100] [ONLY=...] [PART=k/m] | make power [RUNS=10] [SECONDS=180] [MIX=preset|default] [ONLY=bug,...,none] [JOBS=1] | make image
SHELL := /bin/bash
NODE ?= node
CLI := $(NODE) dist/harness/cli.js
SOURCES := $(shell find nodes harness ledger reports -name '*.ts' -not -name '*.test.ts' -not -path '*/test-support/*' 2>/dev/null)

.PHONY: all install build test certify scenarios shrink analyze export report-screenshot bench bench-verify bench-seal bench-endphase sim power-sim power image clean

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
# Tests that run alone, after the suite (each says why in its file; without its packages it skips
# with its reason like any other): the Redis Sentinel failover test.
SOLO_TESTS := harness/targets/redis/redis-failover.test.ts

# the suite, then the solo tests; the exit status is the first failure's (0 when both pass)
test: build
	npx tsc -p tsconfig.json --noEmit
	@st=0; npx vitest run --exclude '$(SOLO_TESTS)' || st=$$?; \
	echo "make test: the tests that run alone, after the suite: $(SOLO_TESTS)"; \
	ZARIS_TEST_REDIS_FAILOVER=1 npx vitest run $(SOLO_TESTS) || { s=$$?; [ $$st -ne 0 ] || st=$$s; }; \
	exit $$st

# Variables reach the CLI as arguments built in the shell from the environment (make puts command-
# line variables there): a value is never pasted into a command line, so quotes in it are harmless.
certify: build
	@args=(--duration "$${DURATION:-60s}" --runtime "$${RUNTIME:-auto}" --target "$${TARGET:-zaris}"); \
	if [ -n "$${REDIS_MIN_REPLICAS:-}" ]; then args+=(--redis-min-replicas "$$REDIS_MIN_REPLICAS"); fi; \
	if [ -n "$${PATRONI_SYNC:-}" ]; then args+=(--patroni-sync "$$PATRONI_SYNC"); fi; \
	case "$${NATS_READS:-}" in 1|true|yes) args+=(--nats-reads);; esac; \
	if [ -n "$${SEED:-}" ]; then args+=(--seed "$$SEED"); fi; \
	if [ -n "$${FAULTS:-}" ]; then args+=(--faults "$$FAULTS"); fi; \
	if [ -n "$${NODES:-}" ]; then args+=(--nodes "$$NODES"); fi; \
	if [ -n "$${SPARES:-}" ]; then args+=(--spares "$$SPARES"); fi; \
	case "$${BEYOND_BUDGET:-}" in 1|true|yes) args+=(--beyond-budget);; esac; \
	if [ -n "$${REPLAY:-}" ]; then args+=(--replay "$$REPLAY"); fi; \
	if [ -n "$${SCENARIO:-}" ]; then args+=(--scenario "$$SCENARIO"); fi; \
	if [ -n "$${RATE:-}" ]; then args+=(--rate "$$RATE"); fi; \
	if [ -n "$${BUG:-}" ]; then args+=(--self-test-bug "$$BUG"); fi; \
	if [ -n "$${ESCALATION:-}" ]; then args+=(--escalation "$$ESCALATION"); fi; \
	if [ -n "$${ASYNC_LAG:-}" ]; then args+=(--async-lag "$$ASYNC_LAG"); fi; \
	if [ -n "$${STALL:-}" ]; then args+=(--stall "$$STALL"); fi; \
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

# a PNG of a run's report as a 1400 x 900 window shows it, from the top to the end of the first
# chart (FULL=1: the whole page); default OUT: <run>/report.png. Needs /usr/bin/chromium (Debian).
report-screenshot: build
	@if [ -z "$${RUN:-}" ]; then echo 'make report-screenshot RUN=runs/<dir> [OUT=file.png] [FULL=1]' >&2; exit 64; fi; \
	exec $(NODE) dist/reports/report-screenshot.js "$$RUN" "$${OUT:-}" "$${FULL:-}"

# Benchmarks print their figures; make bench also writes runs/bench.json (DESIGN.md §7).
bench: build
	$(NODE) dist/harness/certify.bench.js
	$(NODE) dist/nodes/client/retry-loop.bench.js

bench-verify: build
	@exec $(NODE) dist/harness/verifier/verifier.bench.js $${WRITES:-}

# seal + verify + report of a synthetic run's ledger (default: 4 hours at 3,000 writes/s)
bench-seal: build
	@DURATION="$${DURATION:-4h}" RATE="$${RATE:-3000}" LOSS_EVERY="$${LOSS_EVERY:-0}" exec $(NODE) dist/harness/seal.bench.js

# the same end phase with many findings (DESIGN.md §8): 40 minutes whose every rf1 key loses its last
# ack (~44,000 rf1 losses) and async keys acked just before their owner's crash lose theirs
bench-endphase: build
	@DURATION="$${DURATION:-40m}" RATE="$${RATE:-3000}" LOSS_EVERY="$${LOSS_EVERY:-1}" exec $(NODE) dist/harness/seal.bench.js

# The node image zaris-certify-node:<digest of dist/>, offline: the base image is made from
# Debian packages when missing (harness/docker/make-base-image.ts). Skips when up to date.
image: build
	@exec $(NODE) dist/harness/docker/make-node-image.js --base-image "$${BASE_IMAGE:-zaris-certify-base:bookworm-node20-faketime-stores-pg}"

# per self-test bug and for the correct store, RUNS seeded certify runs of SECONDS each, JOBS at a
# time (default 1; RUNTIME=process by default), each bug under its own FAULTS preset (MIX=preset, the
# default) or every run under the default mix (MIX=default: what make certify plays without FAULTS=);
# writes runs/power.json and prints a table
# (SECONDS is read as a make variable: bash's own $$SECONDS counts the shell's age)
power: build
	@args=(--runs "$(or $(RUNS),10)" --seconds "$(or $(SECONDS),180)" --runtime "$${RUNTIME:-process}" --jobs "$${JOBS:-1}"); \
	if [ -n "$${SEED:-}" ]; then args+=(--seed "$$SEED"); fi; \
	if [ -n "$${MIX:-}" ]; then args+=(--mix "$$MIX"); fi; \
	if [ -n "$${ONLY:-}" ]; then args+=(--only "$$ONLY"); fi; \
	exec $(CLI) power "$${args[@]}"

# the deterministic failover simulation outside vitest: make sim RUNS=N [SEED=S] [BUG=name] [MEMBERSHIP=1] (membership schedules only)
sim: build
	@args=(--runs "$${RUNS:-1000}"); if [ -n "$${SEED:-}" ]; then args+=(--seed "$$SEED"); fi; \
	if [ -n "$${BUG:-}" ]; then args+=(--bug "$$BUG"); fi; \
	if [ -n "$${MEMBERSHIP:-}" ]; then args+=(--membership); fi; \
	exec $(NODE) dist/nodes/sim/sim-main.js "$${args[@]}"

# the simulation's catch rate of every self-test bug: make power-sim [RUNS=100] [SEED=S] [ONLY=bug,...,none] [PART=k/m]; writes
# runs/power-sim.json (with ONLY: runs/power-sim-<names>.json; with PART, -part<k>of<m> before .json)
power-sim: build
	@args=(--runs "$${RUNS:-100}"); if [ -n "$${SEED:-}" ]; then args+=(--seed "$$SEED"); fi; \
	out=runs/power-sim; if [ -n "$${ONLY:-}" ]; then args+=(--only "$$ONLY"); out="$$out-$$(echo "$$ONLY" | tr ',' '+')"; fi; \
	if [ -n "$${PART:-}" ]; then args+=(--part "$$PART"); out="$$out-part$$(echo "$$PART" | tr '/' 'o' | sed 's/o/of/')"; fi; \
	args+=(--out "$$out.json"); \
	exec $(NODE) dist/nodes/sim/power-sim.js "$${args[@]}"

clean:
	rm -rf dist
