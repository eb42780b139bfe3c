# ocl_exporter: build, run and test with nothing preinstalled but Go; lint
# also needs Node.js and npm (markdownlint, locked in tools/npm/), the
# integration suites fetch Debian packages. Tools are pinned as Go tools
# (promtool in tools/go.mod, golangci-lint in tools/golangci/go.mod, its own
# module so that its dependencies do not move promtool's) and built into
# bin/ on first use. `make help` lists the targets.

GO        ?= go
BIN       := bin
PKG       := github.com/prometheus/common/version
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH    ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
# The build date is the commit's (reproducible-builds.org's
# SOURCE_DATE_EPOCH), not the clock's: two builds of one commit are the
# same bytes (make test-reproducible).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
BUILD_DATE := $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y%m%d-%H:%M:%S 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y%m%d-%H:%M:%S)
LDFLAGS   := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Revision=$(REVISION) -X $(PKG).Branch=$(BRANCH) \
             -X $(PKG).BuildUser=ocl_exporter -X $(PKG).BuildDate=$(BUILD_DATE) \
             $(if $(RUNBOOK_REPO),-X github.com/ocl-exporter/ocl_exporter/runbooks.Repository=$(RUNBOOK_REPO))
PROMTOOL    := $(BIN)/promtool
GOLANGCI    := $(BIN)/golangci-lint
# Every Go module of the repository, for the go mod tidy check.
GO_MODULES  := $(dir $(shell git ls-files 'go.mod' '*/go.mod'))
SNAPSHOT  ?= examples/snapshot
ARGS      ?=

.PHONY: all build run test test-go test-rules lint tools clean help

## all: lint, test and build, the default.
all: lint test build

# GOBUILD builds the static release binary, for make build and make image.
GOBUILD   = CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'

## build: the static binary in bin/ with version metadata.
build:
	$(GOBUILD) -o $(BIN)/ocl_exporter ./cmd/ocl_exporter

## help: list every target with the first sentence of its `## target:`
## comment, however many lines it spans.
help:
	@awk -f hack/help.awk $(MAKEFILE_LIST)

## run: serve the example snapshot on :29100 (SNAPSHOT=dir to read another).
run: build
	$(BIN)/ocl_exporter --snapshot=$(SNAPSHOT) $(ARGS)

## test: every Go test, the concurrent packages again under the race
## detector, the alerting rules with promtool and the Perses objects with
## Perses (the image has its own target, test-image, which CI runs too).
test: test-go test-race test-rules test-perses

## test-go: every Go test (go test ./...).
test-go:
	$(GO) test -count=1 ./...

## test-race: the packages that run goroutines (source's informers, the
## collector's renderer, the server, the command's serve and reload paths)
## under the race detector, as kube-state-metrics does; needs cgo (gcc).
## Tests that measure capacity skip under it.
RACE_PKGS ?= ./source/... ./collector/... ./server/... ./cmd/ocl_exporter/
.PHONY: test-race
test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 $(RACE_PKGS)

## test-rules: promtool check and test of alerts/, the lifecycles included.
test-rules: $(PROMTOOL)
	$(PROMTOOL) check rules alerts/*rules.yaml
	$(PROMTOOL) test rules alerts/tests/*.yaml

## test-perses: the Perses overlay's dashboards and data source read by
## Perses' own model (github.com/perses/perses in tools/go.mod, the version
## perses/community-mixins builds with): tools/perses/.
.PHONY: test-perses
test-perses:
	cd tools && $(GO) test -count=1 ./perses/

## fuzz: run each fuzz target for a fixed number of inputs, FUZZSCALE
## times its count (go test alone runs only their seeds): the label bound,
## the error classifier, the snapshot listing (tar archives of every header
## type, directories of links) and the snapshot loader. A count, not
## -fuzztime's duration: go1.26's coordinator can report its own deadline
## as a failure ("context deadline exceeded", no input written;
## go.dev/issue/75804, fixed in go1.27), which failed CI once on
## FuzzClassify. Each count is about 10 s on a quiet 2-core machine, so a
## loaded one takes longer rather than fuzzing less. None links client-go
## (source/snapshot's TestNeedsNoClientGo keeps the loader's package
## without it); the loader's instrumented build (apimachinery and the
## generated API types) is the longest, 283 s with an empty build cache.
## Each input that finds new code is minimized for FUZZMINIMIZETIME at
## most: go's 60s default would spend a short run on the first one.
FUZZSCALE        ?= 1
FUZZMINIMIZETIME ?= 1s
FUZZ_TARGETS     ?= ./collector/labelvalue:FuzzBoundLabelValue:400000 ./classify:FuzzClassify:400000 \
                    ./listing:FuzzArchive:400000 ./listing:FuzzDirectory:9000 ./source/snapshot:FuzzLoad:90000
.PHONY: fuzz
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest#*:} * $(FUZZSCALE) )); \
		echo "fuzz $$name in $$pkg for $$n inputs"; \
		$(GO) test -list "^$$name$$" "$$pkg" | grep -qx "$$name" || \
			{ echo "no fuzz test $$name in $$pkg: go test would pass fuzzing nothing"; exit 1; }; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime "$${n}x" -fuzzminimizetime $(FUZZMINIMIZETIME) "$$pkg"; \
	done

## lint: gofmt, go vet, golangci-lint (.golangci.yml: staticcheck and more,
## every build tag), go mod tidy, markdownlint, the Dockerfile, file sizes.
lint: $(GOLANGCI) lint-dockerfile lint-markdown lint-size lint-tidy
	@unformatted=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GOLANGCI) run ./...
	cd tools && $(GO) mod verify >/dev/null

## lint-tidy: every module's go.mod and go.sum are what go mod tidy writes.
.PHONY: lint-tidy
lint-tidy:
	@set -e; for m in $(GO_MODULES); do \
		(cd $$m && $(GO) mod tidy -diff >/dev/null 2>&1) || { echo "$$m: go.mod or go.sum is not tidy; run (cd $$m && go mod tidy)"; exit 1; }; \
	done

## lint-size: no tracked file outside testdata/ over 1 MB: a build output
## committed by accident (ignore it in .gitignore and .dockerignore).
.PHONY: lint-size
lint-size:
	@big=$$(git ls-files -z | xargs -0 -r stat -c '%s %n' | awk '$$1 > 1048576 && $$2 !~ /(^|\/)testdata\//'); \
	if [ -n "$$big" ]; then echo "tracked files over 1 MB outside testdata/ (a build output? git rm --cached it, ignore it):"; echo "$$big"; exit 1; fi

## tools: build the pinned promtool and golangci-lint into bin/.
tools: $(PROMTOOL) $(GOLANGCI)

$(PROMTOOL): tools/go.mod tools/go.sum
	cd tools && $(GO) build -o ../$(PROMTOOL) github.com/prometheus/prometheus/cmd/promtool

$(GOLANGCI): tools/golangci/go.mod tools/golangci/go.sum
	cd tools/golangci && $(GO) build -o ../../$(GOLANGCI) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

## clean: remove bin/ and dist/, every build output and tool built there.
clean:
	rm -rf $(BIN) dist

## generate: rewrite every generated file, in the order they depend on
## each other: the golden exposition, the limits diagnose reads from the
## rules, the promtool series and lifecycles with what else the rules
## decide (the OCLExporterDown inhibition, docs/alerts.md's alert
## tables), the reports' goldens and docs/diagnose.md's checks, the
## committed must-gather trees (before the reports: diagnose reads them),
## the dashboards' JSON, the bundle, docs/flags.md and the exporter's
## RBAC. Review the diff and commit it; check-generated (CI) fails while
## a committed file differs from what this writes. A step that fails prints its test output.
GENERATE_PKGS := ./collector/ ./alerts/rulelimits/ ./alerts/ ./source/sourcetest/ ./diagnose/ ./review/
.PHONY: generate check-generated
generate:
	@set -e; for p in $(GENERATE_PKGS); do echo "go test $$p -update"; \
		out=$$($(GO) test -count=1 $$p -update 2>&1) || { echo "$$out"; exit 1; }; done
	$(MAKE) --no-print-directory dashboards bundle docs rbac

## check-generated: make generate, then fail if it changed a file (on a
## clean checkout, as CI's: any change; else a change to what was there).
TREE_STATE = { git status --porcelain --untracked-files=all; git diff; } | sha256sum
check-generated:
	@before=$$($(TREE_STATE)); $(MAKE) --no-print-directory generate; \
	if [ "$$before" != "$$($(TREE_STATE))" ]; then \
		echo "make generate changed the checkout (commit what it writes):"; git status --short; exit 1; fi

## bundle: write deploy/base/generated/ (the PrometheusRule from
## alerts/*rules.yaml, the console dashboards from dashboards/*.json),
## deploy/acm/generated/ (every dashboard, fleet/ too, for ACM's Grafana)
## and deploy/overlays/perses/generated/ (PersesDashboards from dashboards/);
## go test ./hack/bundle/ fails when the committed files are not current.
## The committed rules link the runbooks on main, as alerts/ does; make
## manifests and make dist pin them to the tag or commit they render.
# A fork or a mirror links its own runbooks: RUNBOOK_REPO=https://github.com/ORG/ocl_exporter
# (GitHub's layout; make build takes it too, as the binary's
# --web.runbook-url default), or RUNBOOK_URL=https://runbooks.example.com/ocl/
# (any base ending in /, <Alert>.md appended), to make manifests too.
RUNBOOK_REPO ?=
RUNBOOK_URL  ?=
.PHONY: bundle lint-dockerfile
bundle:
	$(GO) run ./hack/bundle $(if $(RUNBOOK_REPO),-repository=$(RUNBOOK_REPO)) $(if $(RUNBOOK_URL),-runbook-url=$(RUNBOOK_URL))

## manifests: `make manifests IMAGE=REGISTRY/ocl_exporter:TAG` renders the
## bundle (deploy/, or BUNDLE=deploy/overlays/user-workload, or
## BUNDLE=deploy/overlays/perses for the console's Perses view) with that image
## into one YAML file, MANIFESTS (bin/ocl-exporter.yaml), with the kustomize
## of go.mod (hack/bundle): no kustomize program to install. Its rules link
## the runbooks at the tag or commit checked out.
## deploy: `make deploy IMAGE=...` applies those manifests with oc (or
## kubectl) as your login, a cluster admin, and waits for the rollout.
BUNDLE    ?= deploy
MANIFESTS ?= $(BIN)/ocl-exporter.yaml
KUBECTL   ?= $(shell command -v oc 2>/dev/null || command -v kubectl 2>/dev/null)
.PHONY: manifests deploy
manifests:
	@test -n "$(IMAGE)" || { echo "make $@ IMAGE=REGISTRY/ocl_exporter:TAG (the image make push pushed)"; exit 2; }
	@mkdir -p $(dir $(MANIFESTS))
	$(GO) run ./hack/bundle -manifests=$(MANIFESTS) -dir=$(BUNDLE) -image=$(IMAGE) \
		$(if $(RUNBOOK_REPO),-repository=$(RUNBOOK_REPO)) $(if $(RUNBOOK_URL),-runbook-url=$(RUNBOOK_URL))

deploy: manifests
	@test -n "$(KUBECTL)" || { echo "make deploy: neither oc nor kubectl is on PATH; apply $(MANIFESTS) with your cluster's client"; exit 2; }
	$(KUBECTL) apply -f $(MANIFESTS)
	$(KUBECTL) -n ocl-exporter rollout status deployment/ocl-exporter --timeout=5m

## lint-dockerfile: BuildKit's build checks (what `docker build --check`
## runs), built from tools/go.mod: no container engine runs here.
DOCKERFILE_CHECK := $(BIN)/dockerfile-check
lint-dockerfile: $(DOCKERFILE_CHECK)
	$(DOCKERFILE_CHECK) Dockerfile

$(DOCKERFILE_CHECK): tools/go.mod tools/go.sum tools/dockerfile-check/main.go
	cd tools && $(GO) build -o ../$(DOCKERFILE_CHECK) ./dockerfile-check

include hack/integration.mk

## dashboards: write dashboards/*.json from the Go definitions in
## dashboards/ (then `make bundle` for the console ConfigMaps);
## go test ./dashboards/ fails when the committed JSON is not current.
.PHONY: dashboards
dashboards:
	$(GO) run ./dashboards/gen

## docs: rewrite docs/flags.md's tables from the command line's flags
## and help; go test ./cmd/ocl_exporter/ fails while they differ.
.PHONY: docs
docs:
	$(GO) test ./cmd/ocl_exporter/ -run '^TestFlagTables$$' -count=1 -update

## rbac: rewrite the rules of the roles deploy/base/rbac.yaml binds to
## the exporter from snapshot.Resources(); go test ./deploy/ fails while
## they differ.
.PHONY: rbac
rbac:
	$(GO) test ./deploy/ -run '^TestExporterRBACIsExactlyWhatTheInformersNeed$$' -count=1 -update

## lint-markdown: runbooks/ and docs/ with markdownlint-cli2 and the
## openshift/runbooks settings (.markdownlint-cli2.yaml), installed from the
## npm registry at the versions locked in tools/npm/package-lock.json.
.PHONY: lint-markdown
NPM_TOOLS    := tools/npm/node_modules/.installed
MARKDOWNLINT := tools/npm/node_modules/.bin/markdownlint-cli2

lint-markdown: $(NPM_TOOLS)
	$(MARKDOWNLINT) 'runbooks/*.md' 'docs/*.md'

$(NPM_TOOLS): tools/npm/package.json tools/npm/package-lock.json
	cd tools/npm && npm ci --no-fund --no-audit
	touch $@

## image: the exporter's OCI image, multi-platform, written as an OCI image
## layout to bin/ocl_exporter-oci by tools/image (go-containerregistry):
## no container engine, no registry. The Dockerfile's final stage with a
## FROM scratch base. test-image checks it against the Dockerfile and runs
## the binary it holds.
## push: `make push IMAGE=REGISTRY/ocl_exporter:TAG` copies the image to a
## registry with crane (tools/go.mod), using your registry login
## (~/.docker/config.json; `go tool crane auth login` writes it);
## `skopeo copy --all oci:bin/ocl_exporter-oci docker://REF` does the same.
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
IMAGE_LAYOUT    := $(BIN)/ocl_exporter-oci
IMAGE_TOOL      := $(BIN)/oci-image
# The image says when its commit was made, not when it was built.
IMAGE_CREATED   ?= $(SOURCE_DATE_EPOCH)

.PHONY: image test-image push
image: $(IMAGE_TOOL)
	@set -e; for p in $(IMAGE_PLATFORMS); do \
		echo "build $$p"; \
		GOOS=$${p%%/*} GOARCH=$${p#*/} $(GOBUILD) -o $(BIN)/platforms/$$p/ocl_exporter ./cmd/ocl_exporter; \
	done
	$(IMAGE_TOOL) -out $(IMAGE_LAYOUT) -version '$(VERSION)' -revision '$(REVISION)' -created $(IMAGE_CREATED) \
		$(foreach p,$(IMAGE_PLATFORMS),$(p)=$(BIN)/platforms/$(p)/ocl_exporter)

## test-image: build the two-platform image and check it against the
## Dockerfile, running the binary it holds.
test-image: image
	cd tools && OCL_IMAGE_LAYOUT=$(abspath $(IMAGE_LAYOUT)) $(GO) test -count=1 ./image/

push: image
	@test -n "$(IMAGE)" || { echo "make push IMAGE=REGISTRY/ocl_exporter:TAG"; exit 2; }
	cd tools && $(GO) tool crane push $(abspath $(IMAGE_LAYOUT)) $(IMAGE)

## dist: the release artifacts in dist/ (ignored; CONTRIBUTING.md,
## "Cutting a release"): static binaries for DIST_PLATFORMS, the OCI image
## of the linux ones as an archive, the bundle rendered with
## IMAGE_REPO:VERSION and its runbook links at that version, and SHA256SUMS;
## hack/dist then checks that every artifact says VERSION (git describe: the
## tag on a release, which must be the one the VERSION file names).
DIST           := dist
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
IMAGE_REPO     ?= ghcr.io/ocl-exporter/ocl_exporter
DIST_IMAGE     := $(IMAGE_REPO):$(VERSION)
DIST_LAYOUT    := $(BIN)/dist-oci
.PHONY: dist
dist: $(IMAGE_TOOL)
	$(GO) run ./hack/dist -check-tag -version='$(VERSION)'
	rm -rf $(DIST) $(DIST_LAYOUT)
	mkdir -p $(DIST)
	@set -e; for p in $(DIST_PLATFORMS); do \
		echo "build $$p"; \
		GOOS=$${p%%/*} GOARCH=$${p#*/} $(GOBUILD) -o $(DIST)/ocl_exporter-$(VERSION)-$${p%%/*}-$${p#*/} ./cmd/ocl_exporter; \
	done
	$(IMAGE_TOOL) -out $(DIST_LAYOUT) -version '$(VERSION)' -revision '$(REVISION)' -created $(IMAGE_CREATED) \
		$(foreach p,$(filter linux/%,$(DIST_PLATFORMS)),$(p)=$(DIST)/ocl_exporter-$(VERSION)-$(subst /,-,$(p)))
	$(GO) run ./hack/bundle -manifests=$(DIST)/ocl_exporter-$(VERSION).yaml -image=$(DIST_IMAGE) \
		-version='$(VERSION)' -revision='$(REVISION)' $(if $(RUNBOOK_REPO),-repository=$(RUNBOOK_REPO))
	$(GO) run ./hack/dist -dir=$(DIST) -version='$(VERSION)' -revision='$(REVISION)' -image=$(DIST_IMAGE) \
		-layout=$(DIST_LAYOUT) -platforms='$(DIST_PLATFORMS)'

## test-reproducible: build the release artifacts for REPRO_PLATFORMS
## twice, the second time in a later second of the clock, and compare
## their SHA256SUMS: the build date is the commit's (SOURCE_DATE_EPOCH),
## so one commit builds to the same bytes. The linux platforms only, by
## default: their packages are compiled already by make test-image.
REPRO_PLATFORMS ?= linux/amd64 linux/arm64
REPRO_DIR       := $(BIN)/reproducible
.PHONY: test-reproducible
test-reproducible:
	rm -rf $(REPRO_DIR)
	$(MAKE) --no-print-directory dist DIST=$(REPRO_DIR)/1 DIST_PLATFORMS='$(REPRO_PLATFORMS)'
	@start=$$(date +%s); while [ "$$(date +%s)" = "$$start" ]; do sleep 0.1; done
	$(MAKE) --no-print-directory dist DIST=$(REPRO_DIR)/2 DIST_PLATFORMS='$(REPRO_PLATFORMS)'
	@diff $(REPRO_DIR)/1/SHA256SUMS $(REPRO_DIR)/2/SHA256SUMS && \
		echo "test-reproducible: two builds of $(VERSION) are the same bytes ($(words $(REPRO_PLATFORMS)) binaries, the image, the bundle)"

$(IMAGE_TOOL): tools/go.mod tools/go.sum tools/image/main.go
	cd tools && $(GO) build -o ../$(IMAGE_TOOL) ./image
