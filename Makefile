# The only entry point. `make help` lists the targets.
SHELL := /bin/bash
# uv from PATH, else the PyPI package run as a module (installed on first use by ensure-uv).
UV ?= $(shell command -v uv 2>/dev/null || echo "python3 -m uv")
export UV
PORT ?= 8000
export UV_LINK_MODE ?= copy

.PHONY: help ensure-uv sync check bench-quality bench-models system-packages console console-screenshots clients api-types fmt lint typecheck test test-unit test-integration infra-up infra-down migrate helm-lint chart-consumers images deploy-smoke smoke-journey dev demo bench dev-k8s

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

ensure-uv:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv

sync: ensure-uv ## install every workspace package from the lock
	$(UV) sync --locked --all-packages

console: ## build the web console (services/upload/console: npm ci from the lockfile, tsc, vite) served at /console
	cd services/upload/console && npm ci --no-audit --no-fund --loglevel=error && npm run build

clients: ## regenerate both clients from the upload app's OpenAPI: clients/python/docproc_client/generated (openapi-python-client) and clients/typescript/src/api.d.ts (openapi-typescript; the console is typed by it)
	$(UV) run python -m docproc_upload.openapi_document > clients/typescript/openapi.json
	$(UV) run openapi-python-client generate --meta none --overwrite --config clients/python/openapi-python-client.yaml --path clients/typescript/openapi.json --output-path clients/python/docproc_client/generated
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && npm run -s generate

api-types: clients ## the same as `make clients` (its former name)

console-screenshots: sync console ## the console's journeys in Chromium, saving each screen under docs/console/
	CONSOLE_SCREENSHOTS=docs/console $(UV) run pytest -q tests/console

fmt: ## format and autofix
	$(UV) run ruff format .
	$(UV) run ruff check --fix .

lint: ## ruff
	$(UV) run ruff format --check .
	$(UV) run ruff check .

typecheck: ## mypy (strict), the deploy smoke included (CI type-checks what it does not run)
	$(UV) run mypy libs/*/src services/*/src cli/src clients/python/docproc_client deploy/smoke

system-packages: ## LibreOffice + Tesseract for the parser tests (Debian, as root; else they skip)
	bash scripts/system-packages.sh

infra-up: ## start Kafka (KRaft), Postgres+pgvector, moto S3, Azurite and fake-gcs-server on 127.0.0.1
	$(UV) run python scripts/infra.py up

infra-down: ## stop them and remove their data
	$(UV) run python scripts/infra.py down

migrate: ## alembic upgrade head on DATABASE__URL
	$(UV) run python -m docproc_common.db.migrate

test-unit: sync ## tests that need no service
	$(UV) run pytest -q -m "not integration" libs services cli

test-integration: sync system-packages console infra-up ## tests against real Kafka, Postgres and S3, services as processes
	$(UV) run pytest -q -m integration libs services tests

helm-lint: ## helm lint --strict, helm template per ci values, schema validation
	bash scripts/helm.sh

chart-consumers: ## regenerate the chart's consumers.yaml from the topic map (docproc_common.bus.topics.SUBSCRIBERS)
	$(UV) run python -m docproc_common.bus.topics consumers > deploy/helm/docproc/consumers.yaml

test: ensure-uv ## everything CI runs: set-up, lint, types, the suite (shuffled), the chart's pods as containers (deploy-smoke); each phase timed
	bash scripts/test-phases.sh "$(MAKE)" "$(UV)" $(PYTEST_ARGS)

check: sync ## the inner loop: lint, types and the unit tests, no infrastructure
	$(MAKE) lint typecheck
	$(UV) run pytest -q -n 2 --dist load -m "not integration" libs services cli $(PYTEST_ARGS)

images: console ## build every service image with podman (local Debian base images when Docker Hub is out of reach); the console first, so upload's carries it
	bash scripts/images.sh

deploy-smoke: sync infra-up images smoke-journey ## the chart's rendered pods as containers of those images: journey, alert, dashboards (deploy/smoke)

smoke-journey: ## deploy/smoke alone, on images already built (make deploy-smoke builds them first)
	$(UV) run pytest -q -p no:randomly --durations=0 deploy/smoke  # one journey, its steps in order

dev: sync console ## the embedded all-in-one: docproc dev (the console at /console)
	$(UV) run docproc dev --port $(PORT)

demo: sync console ## start docproc dev, ingest samples/, search, print the console's address, stop
	bash scripts/demo.sh

bench: sync infra-up ## every benchmark but retrieval quality (it needs a data set: make bench-quality DATA=<BEIR folder>); figures go to docs/benchmarks.md
	for b in bench/*.py; do case $$b in bench/quality.py|bench/models.py) ;; *) $(UV) run python $$b || exit 1;; esac; done

bench-quality: sync ## retrieval quality on a BEIR-format folder you provide (DATA=...; never committed)
	$(UV) run python bench/quality.py --data "$(DATA)"

bench-models: sync ## fetch and check the benchmark's stronger embedding model (bge-small-en-v1.5, via Maven) into bench/out/models
	$(UV) run python bench/models.py fetch --dest bench/out/models

dev-k8s: ## skaffold dev (needs a cluster)
	skaffold dev
