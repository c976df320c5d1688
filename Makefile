# jlgcli — the few commands a developer needs. `make help` lists them.
GO ?= go
AGENTS_DIR := .cache/agents
# The Gitea server the forge tests run against, built by `make gitea`.
GITEA_DIR := .cache/gitea

.PHONY: help install build test e2e agents gitea check bench docs clean

help: ## list the targets
	@grep -E '^[a-z0-9]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

install: ## install jlgcli into $(go env GOPATH)/bin
	$(GO) install ./cmd/jlgcli

build: ## build ./bin/jlgcli
	$(GO) build -o bin/jlgcli ./cmd/jlgcli

test: ## run every test: the main module with the race detector, then the Temporal end-to-end tests
	$(GO) test -race -timeout 45m ./...
	cd e2e/temporal && $(GO) test -count=1 -timeout 20m ./...

# -count=1: the test cache would not see a change of the jlgcli binary the tests build.
e2e: ## only the end-to-end tests against a real Temporal server (module e2e/temporal)
	cd e2e/temporal && $(GO) test -count=1 -timeout 20m ./...

agents: ## install the pinned agent CLIs (npm) into .cache/agents for the conformance tests
	mkdir -p $(AGENTS_DIR)
	cp .ci/agents/package.json .ci/agents/package-lock.json $(AGENTS_DIR)/
	cd $(AGENTS_DIR) && npm install --no-audit --no-fund --no-save

# Gitea's dependencies stay in the module e2e/gitea: the main module never
# requires it. Built once per version of that module's go.mod and go.sum (and
# of Go), with the SQLite driver (cgo); its options/ and templates/ (locales,
# licenses, pages), which a build without bindata reads from disk, are copied
# beside it from the module's source. The tests copy them into each server's
# work directory (internal/forge/giteatest).
gitea: ## build the Gitea server the forge tests run against into .cache/gitea (skipped when up to date)
	@stamp="$$(cat Makefile e2e/gitea/go.mod e2e/gitea/go.sum | sha256sum | cut -c1-16) $$($(GO) env GOVERSION)"; \
	if [ -x $(GITEA_DIR)/gitea ] && [ "$$(cat $(GITEA_DIR)/stamp 2>/dev/null)" = "$$stamp" ]; then \
		echo "gitea: up to date in $(GITEA_DIR)"; exit 0; fi; \
	set -e; rm -rf $(GITEA_DIR); mkdir -p $(GITEA_DIR); \
	src="$$(cd e2e/gitea && $(GO) list -m -f '{{.Dir}}' code.gitea.io/gitea)"; \
	version="$$(cd e2e/gitea && $(GO) list -m -f '{{.Version}}' code.gitea.io/gitea)"; \
	(cd e2e/gitea && CGO_ENABLED=1 $(GO) build -tags "sqlite sqlite_unlock_notify" -ldflags "-X main.Version=$${version#v}" \
		-o ../../$(GITEA_DIR)/gitea.tmp code.gitea.io/gitea); \
	cp -R "$$src/options" "$$src/templates" $(GITEA_DIR)/; chmod -R u+w $(GITEA_DIR); \
	mv $(GITEA_DIR)/gitea.tmp $(GITEA_DIR)/gitea; echo "$$stamp" > $(GITEA_DIR)/stamp; \
	echo "gitea: built $(GITEA_DIR)/gitea"

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
