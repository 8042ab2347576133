# zaris-certify: every target installs and builds on first use.
SHELL := /bin/bash
NODE ?= node
CLI := $(NODE) dist/harness/cli.js
SOURCES := $(shell find nodes harness ledger reports -name '*.ts' -not -name '*.test.ts' 2>/dev/null)

.PHONY: all install build test certify analyze export bench bench-verify sim image clean

all: build

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

dist/.built: node_modules/.installed $(SOURCES) tsconfig.json tsconfig.build.json
	npx tsc -p tsconfig.build.json
	@touch $@

build: dist/.built

test: build
	npx vitest run

# the deterministic failover simulation outside vitest: make sim RUNS=N [SEED=S]
RUNS ?= 1000
sim: build
	$(NODE) dist/nodes/sim/sim-main.js --runs $(RUNS) $(if $(SEED),--seed $(SEED))

clean:
	rm -rf dist
