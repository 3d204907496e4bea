# kgsearch — run `make help` for the list of targets.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help
export KGS_STATE ?= $(CURDIR)/.state
GO ?= go
SERVICES := crawler kg search

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## stack up, services up, crawl a real documentation site, print a search in TOON
	scripts/run.sh

.PHONY: test
test: ## install+start MariaDB and Neo4j if needed, run all tests with -race, stop what it started
	scripts/test.sh

.PHONY: up
up: ## install (first time) and start MariaDB 11.8, Neo4j 5.26 and the embedding model
	deploy/local/stack.sh up

# The documentation sites deploy/local serves on loopback (make run's manual, the eval sets).
DOC_SITES := pydocs djangodocs gitdocs rustbook nodedocs pgdocs octavedocs celerydocs drfdocs

.PHONY: down
down: ## stop the services, the local doc sites (deploy/local/*docs.sh, rustbook.sh) and the stack started by `make up` / `make run`
	-scripts/services.sh stop
	-for site in $(DOC_SITES); do deploy/local/$$site.sh stop; done
	deploy/local/stack.sh down

.PHONY: status
status: ## show what is running (the stack, the services and the doc sites that run)
	-deploy/local/stack.sh status
	-scripts/services.sh status
	@for site in $(DOC_SITES); do if s=$$(deploy/local/$$site.sh status 2>/dev/null); then echo "$$site: $$s"; fi; done

.PHONY: env
env: ## print the environment the services and tests use (eval "$$(make -s env)")
	@deploy/local/stack.sh env

.PHONY: build
build: ## build the three services, kgs and the tools of cmd/ into bin/
	@mkdir -p bin
	$(GO) build -o bin/ ./services/crawler ./services/kg ./services/search ./cmd/...

.PHONY: bench
bench: ## run the benchmarks against the real stack (see docs/benchmarks.md)
	scripts/bench.sh

.PHONY: eval
eval: ## relevance on the dev sets: our modes, ablations and peer baselines (tantivy BM25, exact dense, RRF); nDCG@10, MRR@10, Recall@10, sign tests
	scripts/eval.sh

.PHONY: apicheck
apicheck: ## schemathesis against each service's /openapi.json (bounded: APICHECK_EXAMPLES, APICHECK_TIMEOUT)
	scripts/apicheck.sh

.PHONY: load
load: ## load test the running search service at 1 and 8 clients (p50/p99, QPS, RSS)
	$(GO) run ./cmd/kgload -search http://127.0.0.1:$${SEARCH_PORT:-8080} -clients 1,8 -duration 30s -pid-file $(KGS_STATE)/run/search.pid

.PHONY: fault
fault: ## stop kg in the middle of a load run: every request must still be answered, degraded
	$(GO) run ./cmd/kgload -search http://127.0.0.1:$${SEARCH_PORT:-8080} -clients 1 -duration 60s -pid-file $(KGS_STATE)/run/search.pid -fault

.PHONY: tokens
tokens: ## token counts of JSON vs TOON payloads (cl100k_base, o200k_base; offline)
	$(GO) run ./cmd/toontokens

.PHONY: reindex
reindex: ## rebuild the search service's Bleve index from MariaDB
	scripts/services.sh reindex

.PHONY: regraph
regraph: ## re-deliver every stored document to kg (after an extractor upgrade); REGRAPH_ARGS=-dry-run
	eval "$$(deploy/local/stack.sh env)"; go run ./services/crawler/cmd/kgregraph $(REGRAPH_ARGS)

.PHONY: fuzz
fuzz: ## run each native fuzz target for FUZZTIME (default 30s)
	scripts/fuzz.sh $${FUZZTIME:-30s}

# golangci-lint, pinned: built from the Go module proxy into $(KGS_STATE)/bin on first use
# (a new version installs beside the old one). The linters and exclusions are in .golangci.yml.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(KGS_STATE)/bin/golangci-lint-$(GOLANGCI_LINT_VERSION)

$(GOLANGCI_LINT):
	@mkdir -p $(@D)/.golangci-install
	GOBIN=$(@D)/.golangci-install $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(@D)/.golangci-install/golangci-lint $@
	rmdir $(@D)/.golangci-install

.PHONY: lint
lint: $(GOLANGCI_LINT) ## gofmt check, go vet and golangci-lint (.golangci.yml; installs the pinned version on first use)
	@test -z "$$(gofmt -l . | tee /dev/stderr)"
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...

.PHONY: clean
clean: ## remove built binaries (keeps .state: installed servers and data)
	rm -rf bin
