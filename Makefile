# jlgcli — the few commands a developer needs. `make help` lists them.
GO ?= go
AGENTS_DIR := .cache/agents

.PHONY: help install build test e2e agents check bench docs clean

help: ## list the targets
	@grep -E '^[a-z0-9]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

install: ## install jlgcli into $(go env GOPATH)/bin
	$(GO) install ./cmd/jlgcli

build: ## build ./bin/jlgcli
	$(GO) build -o bin/jlgcli ./cmd/jlgcli

test: ## run every test: the main module with the race detector, then the Temporal end-to-end tests
	$(GO) test -race -timeout 30m ./...
	cd e2e/temporal && $(GO) test -count=1 -timeout 20m ./...

# -count=1: the test cache would not see a change of the jlgcli binary the tests build.
e2e: ## only the end-to-end tests against a real Temporal server (module e2e/temporal)
	cd e2e/temporal && $(GO) test -count=1 -timeout 20m ./...

agents: ## install the pinned agent CLIs (npm) into .cache/agents for the conformance tests
	mkdir -p $(AGENTS_DIR)
	cp .ci/agents/package.json .ci/agents/package-lock.json $(AGENTS_DIR)/
	cd $(AGENTS_DIR) && npm install --no-audit --no-fund --no-save

check: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1; }
	$(GO) vet ./...
	cd e2e/temporal && $(GO) vet ./...

bench: ## run the benchmarks (numbers in BENCHMARKS.md)
	$(GO) test -run '^$$' -bench . -benchmem ./...

docs: ## write docs/commands.md from the command tree (a test fails when it is out of date)
	$(GO) run ./internal/cli/docgen

clean: ## remove build output
	rm -rf bin
