# Make targets. `make dev` and `make test` are the two commands a newcomer needs.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export PRISMA_SCHEMA_ENGINE_BINARY ?= $(CURDIR)/scripts/no-schema-engine.sh
export PRISMA_HIDE_UPDATE_MESSAGE := 1
export CHECKPOINT_DISABLE := 1

NODE_MODULES_STAMP := node_modules/.package-lock.json

.PHONY: help install generate dev test typecheck lint unit integration migrate bench build up down k8s-validate clean

help:
	@echo "make dev        run every service on embedded defaults (Postgres, in-memory bus)"
	@echo "make test       type-check, lint, unit and integration tests (needs Postgres + Redis)"
	@echo "make migrate    apply prisma/migrations to DATABASE_URL"
	@echo "make bench      benchmarks, reported as ratios to a same-run baseline"
	@echo "make build      bundle every service into dist/"
	@echo "make up         docker compose up (production-shaped stack)"
	@echo "make k8s-validate  render and validate the Kubernetes manifests"

# Installs what is missing: npm dependencies (and the generated Prisma client). The stamp
# is npm's own record of the installed tree, refreshed by every npm install/ci; editing
# package.json alone does not trigger a reinstall (run npm install, which updates the lock).
$(NODE_MODULES_STAMP): package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES_STAMP)

libs/db/src/generated/prisma/client.ts: $(NODE_MODULES_STAMP) $(wildcard prisma/schema/*.prisma)
	npx prisma generate

generate: libs/db/src/generated/prisma/client.ts

dev: install generate
	npx tsx scripts/dev.ts

typecheck: install generate
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p services/console/tsconfig.json --noEmit

lint: install
	npx eslint .

unit: install generate
	npx jest --selectProjects unit

integration: install generate
	bash scripts/ensure-test-env.sh
	# The console the services serve at /ui/ (the e2e tests drive it in Chromium).
	npm run --silent build -w services/console
	npx tsx scripts/check-services.ts
	npx jest --selectProjects integration --runInBand=false --maxWorkers=2

test: typecheck lint unit integration

migrate: install generate
	npx tsx libs/db/src/migrate-cli.ts

bench: install generate
	# Scenarios use the Redis bus as deployed (blocking-query wake-ups, cache invalidation).
	# ... and the runtime image's heap setting (infra/docker/Dockerfile NODE_OPTIONS).
	REDIS_URL="$${REDIS_URL:-redis://127.0.0.1:6379}" NODE_OPTIONS="$${NODE_OPTIONS:---max-semi-space-size=32}" npx tsx bench/run.ts

build: install generate
	npx tsx scripts/build.ts

up:
	docker compose up --build

down:
	docker compose down

k8s-validate: install
	npx tsx scripts/k8s-validate.ts

clean:
	rm -rf dist coverage .data/test
