# ocl_exporter: build, run, test and lint with nothing preinstalled but Go.
# Tools (promtool, staticcheck) are pinned in tools/go.mod and built into bin/
# on first use.

GO        ?= go
BIN       := bin
PKG       := github.com/prometheus/common/version
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH    ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Revision=$(REVISION) -X $(PKG).Branch=$(BRANCH) \
             -X $(PKG).BuildUser=ocl_exporter -X $(PKG).BuildDate=$(shell date -u +%Y%m%d-%H:%M:%S)
PROMTOOL    := $(BIN)/promtool
STATICCHECK := $(BIN)/staticcheck
SNAPSHOT  ?= examples/snapshot
ARGS      ?=

.PHONY: all build run test test-go test-rules lint tools clean

all: lint test build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ocl_exporter ./cmd/ocl_exporter

## run: serve the example snapshot on :29100 (SNAPSHOT=dir to read another).
run: build
	$(BIN)/ocl_exporter --snapshot=$(SNAPSHOT) $(ARGS)

## test: every Go test, then the alerting rules with promtool.
test: test-go test-rules

test-go:
	$(GO) test -count=1 ./...

test-rules: $(PROMTOOL)
	@if ls alerts/*.yaml >/dev/null 2>&1; then \
		$(PROMTOOL) check rules alerts/*rules.yaml && \
		$(PROMTOOL) test rules alerts/tests/*.yaml; \
	else echo "no alerting rules yet"; fi

## fuzz: run each fuzz target for FUZZTIME (go test runs only their seeds):
## the label bound and the error classifier, which depend on the standard
## library only and build in seconds. The snapshot loader's target
## (FUZZ_TARGETS=./source:FuzzLoad) needs an instrumented build of
## client-go, 18 minutes cold here, so CI runs only its seeds.
FUZZTIME     ?= 10s
FUZZ_TARGETS ?= ./collector/labelvalue:FuzzBound ./classify:FuzzClassify
.PHONY: fuzz
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in $${t%%:*} for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}"; \
	done

lint: $(STATICCHECK) lint-dockerfile lint-markdown
	@unformatted=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) vet -tags e2e ./test/e2e/
	$(STATICCHECK) -tags e2e ./test/e2e/
	$(GO) vet -tags scale ./test/scale/
	$(STATICCHECK) -tags scale ./test/scale/
	cd tools && $(GO) mod verify >/dev/null

tools: $(PROMTOOL) $(STATICCHECK)

$(PROMTOOL): tools/go.mod tools/go.sum
	cd tools && $(GO) build -o ../$(PROMTOOL) github.com/prometheus/prometheus/cmd/promtool

$(STATICCHECK): tools/go.mod tools/go.sum
	cd tools && $(GO) build -o ../$(STATICCHECK) honnef.co/go/tools/cmd/staticcheck

clean:
	rm -rf $(BIN)

## bundle: write deploy/base/generated/ (the PrometheusRule from
## alerts/*rules.yaml, the console dashboards from dashboards/*.json);
## go test ./hack/bundle/ fails when the committed files are not current.
.PHONY: bundle lint-dockerfile
bundle:
	$(GO) run ./hack/bundle

## lint-dockerfile: BuildKit's build checks (what `docker build --check`
## runs), built from tools/go.mod: no container engine runs here.
DOCKERFILE_CHECK := $(BIN)/dockerfile-check
lint-dockerfile: $(DOCKERFILE_CHECK)
	$(DOCKERFILE_CHECK) Dockerfile

$(DOCKERFILE_CHECK): tools/go.mod tools/go.sum tools/dockerfile-check/main.go
	cd tools && $(GO) build -o ../$(DOCKERFILE_CHECK) ./dockerfile-check

## e2e: the integration suite (test/e2e/, README "Integration tests") on a
## real etcd, kube-apiserver, Prometheus and Alertmanager on loopback. The
## servers are built or extracted once into $(E2E_CACHE), outside the
## repository and keyed by version: kube-apiserver from hack/kube-apiserver
## (about 8 minutes on 2 cores), Alertmanager from its Go module (Debian's
## reads its templates from /usr/share), etcd and Prometheus from Debian
## packages (seconds).
KUBE_VERSION  := v1.34.3
AM_VERSION    := v0.28.1
E2E_CACHE     ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ocl_exporter
E2E_APISERVER := $(E2E_CACHE)/kube-apiserver-$(KUBE_VERSION)
E2E_AM        := $(E2E_CACHE)/alertmanager-$(AM_VERSION)/alertmanager
E2E_DEBIAN    := $(E2E_CACHE)/debian-bookworm
E2E_ETCD      := $(E2E_DEBIAN)/etcd-server/usr/bin/etcd
E2E_PROM      := $(E2E_DEBIAN)/prometheus/usr/bin/prometheus

.PHONY: e2e e2e-tools
e2e: e2e-tools
	E2E_KUBE_APISERVER=$(E2E_APISERVER) E2E_ETCD=$(E2E_ETCD) E2E_PROMETHEUS=$(E2E_PROM) \
	E2E_PROMTOOL=$(dir $(E2E_PROM))promtool E2E_ALERTMANAGER=$(E2E_AM) \
		$(GO) test -tags e2e -count=1 -timeout 40m ./test/e2e/

e2e-tools: $(E2E_APISERVER) $(E2E_AM) $(E2E_ETCD) $(E2E_PROM)

$(E2E_APISERVER):
	mkdir -p $(E2E_CACHE)
	cd hack/kube-apiserver && nice -n 19 $(GO) build -trimpath -o $@.tmp k8s.io/kubernetes/cmd/kube-apiserver
	mv $@.tmp $@

$(E2E_AM):
	GOBIN=$(dir $@) $(GO) install -trimpath github.com/prometheus/alertmanager/cmd/alertmanager@$(AM_VERSION)

# Debian packages, extracted (dpkg -x) rather than installed: no system
# service, nothing written outside $(E2E_CACHE).
$(E2E_DEBIAN)/%/.extracted:
	@if [ ! -f $(E2E_DEBIAN)/.apt-updated ]; then apt-get update -qq && mkdir -p $(E2E_DEBIAN) && touch $(E2E_DEBIAN)/.apt-updated; fi
	rm -rf $(E2E_DEBIAN)/$* $(E2E_DEBIAN)/$*.download && mkdir -p $(E2E_DEBIAN)/$*.download
	cd $(E2E_DEBIAN)/$*.download && apt-get download -q $* && dpkg -x $*_*.deb ../$*
	rm -rf $(E2E_DEBIAN)/$*.download
	touch $@

$(E2E_ETCD): $(E2E_DEBIAN)/etcd-server/.extracted
$(E2E_PROM): $(E2E_DEBIAN)/prometheus/.extracted

## dashboards: write dashboards/*.json from the Go definitions in
## dashboards/ (then `make bundle` for the console ConfigMaps);
## go test ./dashboards/ fails when the committed JSON is not current.
.PHONY: dashboards
dashboards:
	$(GO) run ./dashboards/gen

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

## bench-scale: ocl_exporter and kube-state-metrics side by side on a real
## etcd and kube-apiserver holding a synthetic cluster of each size in SIZES
## (test/scale/, docs/performance.md), into SCALE_RESULTS; then
## `go test ./test/scale/ -run TestPlotCurrent -update` redraws the plot and
## table from it. kube-state-metrics is built from hack/kube-state-metrics
## into $(E2E_CACHE) once (about 10 minutes on 2 cores).
KSM_VERSION   := v2.15.0
E2E_KSM       := $(E2E_CACHE)/kube-state-metrics-$(KSM_VERSION)
SIZES         ?= 100,500,2000
SCALE_SCRAPES ?= 200
SCALE_RESULTS ?= test/scale/testdata/results.json

.PHONY: bench-scale
bench-scale: $(E2E_APISERVER) $(E2E_ETCD) $(E2E_KSM)
	SCALE_ETCD=$(E2E_ETCD) SCALE_KUBE_APISERVER=$(E2E_APISERVER) SCALE_KSM=$(E2E_KSM) \
	SCALE_SIZES=$(SIZES) SCALE_SCRAPES=$(SCALE_SCRAPES) SCALE_RESULTS=$(if $(SCALE_RESULTS),$(abspath $(SCALE_RESULTS))) \
		$(GO) test -tags scale -count=1 -run TestScale -v -timeout 60m ./test/scale/

$(E2E_KSM):
	mkdir -p $(E2E_CACHE)
	cd hack/kube-state-metrics && nice -n 19 $(GO) build -trimpath -o $@.tmp k8s.io/kube-state-metrics/v2
	mv $@.tmp $@
