# The integration suites' servers and targets (make e2e, e2e-soak,
# e2e-fleet, bench-scale, bench-status, test-browser): built or extracted
# once into $(E2E_CACHE), outside the repository and keyed by version.
# Included by the Makefile; run the targets from the repository root.

## e2e: the integration suite (test/e2e/, CONTRIBUTING.md "Integration tests") on a
## real etcd, kube-apiserver, Prometheus and Alertmanager on loopback. The
## servers are built or extracted once into $(E2E_CACHE), outside the
## repository and keyed by version: kube-apiserver from hack/kube-apiserver
## (about 8 minutes on 2 cores), the Prometheus Operator from
## hack/prometheus-operator (its CRDs come from the same module version in
## the Go module cache) and the Prometheus v3 it configures from
## hack/prometheus, Alertmanager from its Go module (Debian's reads its
## templates from /usr/share), etcd and Prometheus from Debian packages
## (seconds).
KUBE_VERSION  := v1.34.3
AM_VERSION    := v0.28.1
E2E_CACHE     ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ocl_exporter
# -stamped: built with its version in /version (the Prometheus Operator
# decides from it whether EndpointSlices exist), unlike earlier caches.
E2E_APISERVER := $(E2E_CACHE)/kube-apiserver-$(KUBE_VERSION)-stamped
KUBE_LDFLAGS  := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
                 -X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION:v%=%))) \
                 -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION:v%=%))) \
                 -X k8s.io/component-base/version.gitTreeState=clean
# The on-call path's test (TestResponderRole): kubectl, whose port-forward
# is the code `oc port-forward` runs, and the kubelet's own port-forward
# server standing in for a kubelet, both from hack/kube-apiserver (the
# same packages as kube-apiserver, so about 30 CPU-seconds more), and
# curl.
E2E_KUBECTL   := $(E2E_CACHE)/kubectl-$(KUBE_VERSION)
E2E_KUBELETPF := $(E2E_CACHE)/kubelet-portforward-$(KUBE_VERSION)
E2E_AM        := $(E2E_CACHE)/alertmanager-$(AM_VERSION)/alertmanager
E2E_DEBIAN    := $(E2E_CACHE)/debian-bookworm
E2E_ETCD      := $(E2E_DEBIAN)/etcd-server/usr/bin/etcd
E2E_PROM      := $(E2E_DEBIAN)/prometheus/usr/bin/prometheus
PO_MODULE     := github.com/prometheus-operator/prometheus-operator
PO_VERSION    := $(shell awk '{ for (i = 1; i < NF; i++) if ($$i == "$(PO_MODULE)") print $$(i+1) }' hack/prometheus-operator/go.mod)
E2E_PO        := $(E2E_CACHE)/prometheus-operator-$(PO_VERSION)
# The Prometheus the operator's configuration runs on (hack/prometheus):
# Debian's is built without Kubernetes service discovery. The version the
# operator defaults to.
PROMK8S_VERSION := $(shell awk '{ for (i = 1; i < NF; i++) if ($$i == "github.com/prometheus/prometheus") print $$(i+1) }' hack/prometheus/go.mod)
# Its release, stamped into --version (the module's v0.MMM.P is 3.MM.P).
PROMK8S_RELEASE := 3.5.0
E2E_PROMK8S   := $(E2E_CACHE)/prometheus-$(PROMK8S_VERSION)

# E2E_ARGS: more go test flags, e.g. E2E_ARGS='-v -run TestScenarios'.
E2E_ARGS      ?=
# The suite takes about 30 minutes on a quiet 2-core machine, most of it
# lifecycles replayed on the wall clock: the timeout leaves a loaded CI
# machine room, within its 90 minutes.
E2E_TIMEOUT   ?= 55m
.PHONY: e2e e2e-tools
e2e: e2e-tools
	E2E_KUBE_APISERVER=$(E2E_APISERVER) E2E_ETCD=$(E2E_ETCD) E2E_PROMETHEUS=$(E2E_PROM) \
	E2E_PROMTOOL=$(dir $(E2E_PROM))promtool E2E_ALERTMANAGER=$(E2E_AM) E2E_PROMETHEUS_OPERATOR=$(E2E_PO) \
	E2E_OPERATOR_PROMETHEUS=$(E2E_PROMK8S) E2E_KUBECTL=$(E2E_KUBECTL) E2E_KUBELET_PORTFORWARD=$(E2E_KUBELETPF) \
		$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) $(E2E_ARGS) ./test/e2e/

## e2e-soak: the e2e suite SOAK_RUNS times in a row beside SOAK_BURN
## busy loops (a loaded CI machine), stopping at the first failure: a
## hunt for races. Each run's log: bin/e2e-soak-N.log.
SOAK_RUNS ?= 3
SOAK_BURN ?= 2
.PHONY: e2e-soak
e2e-soak: e2e-tools
	@mkdir -p $(BIN); pids=; \
	for i in $$(seq $(SOAK_BURN)); do sh -c 'while :; do :; done' & pids="$$pids $$!"; done; \
	status=0; for n in $$(seq $(SOAK_RUNS)); do \
		start=$$(date +%s); \
		if $(MAKE) --no-print-directory e2e > $(BIN)/e2e-soak-$$n.log 2>&1; then \
			echo "e2e-soak: run $$n of $(SOAK_RUNS) passed in $$(( $$(date +%s) - start )) s"; \
		else echo "e2e-soak: run $$n of $(SOAK_RUNS) FAILED, see $(BIN)/e2e-soak-$$n.log"; status=1; break; fi; \
	done; kill $$pids; exit $$status

## e2e-tools: build or extract the e2e servers into $(E2E_CACHE) without
## running anything (make e2e does it first).
e2e-tools: $(E2E_APISERVER) $(E2E_KUBECTL) $(E2E_KUBELETPF) $(E2E_AM) $(E2E_ETCD) $(E2E_PROM) $(E2E_PO) $(E2E_PROMK8S) curl

$(E2E_APISERVER):
	mkdir -p $(E2E_CACHE)
	cd hack/kube-apiserver && nice -n 19 $(GO) build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@.tmp k8s.io/kubernetes/cmd/kube-apiserver
	mv $@.tmp $@

$(E2E_KUBECTL):
	mkdir -p $(E2E_CACHE)
	cd hack/kube-apiserver && nice -n 19 $(GO) build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@.tmp k8s.io/kubernetes/cmd/kubectl
	mv $@.tmp $@

# Rebuilt when its source changes: it is this repository's code.
$(E2E_KUBELETPF): hack/kube-apiserver/kubelet-portforward/main.go hack/kube-apiserver/go.mod
	mkdir -p $(E2E_CACHE)
	cd hack/kube-apiserver && nice -n 19 $(GO) build -trimpath -o $@.tmp ./kubelet-portforward
	mv $@.tmp $@

## curl: install Debian's curl, which the runbooks' first command runs,
## when it is missing (needs root).
.PHONY: curl
curl:
	@if ! command -v curl >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends curl; \
	fi

$(E2E_PO):
	mkdir -p $(E2E_CACHE)
	cd hack/prometheus-operator && nice -n 19 $(GO) build -trimpath -o $@.tmp $(PO_MODULE)/cmd/operator
	mv $@.tmp $@

$(E2E_PROMK8S):
	mkdir -p $(E2E_CACHE)
	cd hack/prometheus && nice -n 19 $(GO) build -trimpath -o $@.tmp \
		-ldflags '-X github.com/prometheus/common/version.Version=$(PROMK8S_RELEASE)' github.com/prometheus/prometheus/cmd/prometheus
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

## e2e-fleet: the fleet test (test/fleet/, CONTRIBUTING.md "Integration tests"): two
## exporters on two snapshots act as two clusters, each scraped by a
## Prometheus with external_labels {cluster: ...} and a Thanos sidecar, and
## Thanos Query federates both; every dashboard and docs/queries.md query
## must give each cluster's own answer through it. Thanos is built once
## from hack/thanos (its version is the one hack/thanos/go.mod pins) into
## $(E2E_CACHE), with the slicelabels tag Thanos' own build uses (its
## label casts corrupt memory with Prometheus' default labels layout).
THANOS_VERSION := $(shell awk '$$1 == "github.com/thanos-io/thanos" { print $$2 }' hack/thanos/go.mod)
E2E_THANOS     := $(E2E_CACHE)/thanos-$(THANOS_VERSION)

.PHONY: e2e-fleet
e2e-fleet: $(E2E_THANOS) $(E2E_PROM)
	E2E_THANOS=$(E2E_THANOS) E2E_PROMETHEUS=$(E2E_PROM) \
		$(GO) test -tags fleet -count=1 -v -timeout 20m ./test/fleet/

$(E2E_THANOS):
	mkdir -p $(E2E_CACHE)
	cd hack/thanos && nice -n 19 $(GO) build -trimpath -tags slicelabels -o $@.tmp github.com/thanos-io/thanos/cmd/thanos
	mv $@.tmp $@

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

## bench-churn: what ocl_exporter and kube-state-metrics cost an hour in a
## cluster that changes as a real one does (test/scale/churn_test.go,
## docs/performance.md): both at once against one real kube-apiserver
## holding a synthetic cluster of each size in CHURN_SIZES, scraped every
## 30 s, while node status is written every 5 minutes and on change, a
## pool rolls out 10% at a time, a build runs every 30 minutes and events
## come; the hour is played CHURN_SPEEDUP times faster (renders and
## scrapes too), what runs on the wall clock alone measured over
## CHURN_IDLE; the exporter's --collector.render-interval is
## CHURN_RENDER_INTERVAL (1s) / CHURN_SPEEDUP, at least 100 ms. CPU
## seconds an hour, RSS, renders an
## hour, into CHURN_RESULTS, which keeps the results of the sizes and
## render intervals not run (run each at the speed the machine keeps up
## with); CHURN_PROFILE=<dir> (from the environment) writes the
## exporter's CPU profile over the hour there;
## `go test ./test/scale/ -run TestPlotCurrent -update` redraws the table.
CHURN_SIZES   ?= 2000,10000
CHURN_SPEEDUP ?= 10
CHURN_IDLE    ?= 3m
CHURN_RENDER_INTERVAL ?= 1s
CHURN_RESULTS ?= test/scale/testdata/churn.json

.PHONY: bench-churn
bench-churn: $(E2E_APISERVER) $(E2E_ETCD) $(E2E_KSM)
	SCALE_ETCD=$(E2E_ETCD) SCALE_KUBE_APISERVER=$(E2E_APISERVER) SCALE_KSM=$(E2E_KSM) \
	CHURN_SIZES=$(CHURN_SIZES) CHURN_SPEEDUP=$(CHURN_SPEEDUP) CHURN_IDLE=$(CHURN_IDLE) CHURN_RENDER_INTERVAL=$(CHURN_RENDER_INTERVAL) \
	CHURN_RESULTS=$(if $(CHURN_RESULTS),$(abspath $(CHURN_RESULTS))) \
		$(GO) test -tags scale -count=1 -run TestChurn -v -timeout 120m ./test/scale/

## bench-storm: the exporter under an event storm (test/scale/storm_test.go):
## STORM_EVENTS Warning events that passed its earlier selectors
## (crashlooping pods, pool and Job Warnings) on a real etcd and
## kube-apiserver; ready time, RSS, peak RSS and the events its watches
## dropped. STORM_BASELINE=binary measures another exporter beside it,
## STORM_WATCHLIST=false turns the API server's WatchList off (first lists
## in pages).
STORM_EVENTS ?= 400000
.PHONY: bench-storm
bench-storm: $(E2E_APISERVER) $(E2E_ETCD)
	SCALE_ETCD=$(E2E_ETCD) SCALE_KUBE_APISERVER=$(E2E_APISERVER) STORM_EVENTS=$(STORM_EVENTS) \
		$(GO) test -tags scale -count=1 -run TestEventStorm -v -timeout 60m ./test/scale/

## bench-restart: the exporter stopped (SIGTERM, as an eviction stops it)
## and started again RESTART_ROUNDS times against a real etcd and
## kube-apiserver holding a synthetic cluster of each size in
## RESTART_SIZES (test/scale/restart_test.go, docs/performance.md): the old
## process's exit, the new one's time to /readyz and to its first complete
## scrape, and the machine's load average.
RESTART_SIZES  ?= 2000,10000
RESTART_ROUNDS ?= 5
.PHONY: bench-restart
bench-restart: $(E2E_APISERVER) $(E2E_ETCD)
	SCALE_ETCD=$(E2E_ETCD) SCALE_KUBE_APISERVER=$(E2E_APISERVER) RESTART_SIZES=$(RESTART_SIZES) RESTART_ROUNDS=$(RESTART_ROUNDS) \
		$(GO) test -tags scale -count=1 -run TestRestart -v -timeout 60m ./test/scale/

$(E2E_KSM):
	mkdir -p $(E2E_CACHE)
	cd hack/kube-state-metrics && nice -n 19 $(GO) build -trimpath -o $@.tmp k8s.io/kube-state-metrics/v2
	mv $@.tmp $@

## bench-rules: what the bundle costs inside Prometheus: the exporter on a
## synthetic cluster of each of RULEBENCH_SIZES nodes, 6 hours of its
## history and the rules' backfilled, then scraped by Prometheus 3.5 every
## 15 s with alerts/*rules.yaml evaluated every 15 s; per-group and
## per-rule evaluation time, every dashboard query over the dashboards'
## 6 hours and every docs/queries.md query, Prometheus RSS
## (test/rulebench, docs/performance.md). RULEBENCH_RESULTS=file keeps
## the table. BASE=<commit> also evaluates that commit's rules, renamed,
## in the same Prometheus on the same series, half an interval from the
## tree's and scraped every 7.5 s, and reports the ratio of the working
## tree's to them evaluation by evaluation (40 of them): the comparison a
## change to the rules is judged by.
RULEBENCH_SIZES   ?= 2000,10000
RULEBENCH_RESULTS ?=
BASE              ?=
.PHONY: bench-rules
bench-rules: $(E2E_PROMK8S)
	E2E_OPERATOR_PROMETHEUS=$(E2E_PROMK8S) RULEBENCH_SIZES=$(RULEBENCH_SIZES) RULEBENCH_RESULTS=$(RULEBENCH_RESULTS) \
	RULEBENCH_BASE=$(BASE) \
		$(GO) test -tags rulebench -count=1 -v -run '^(TestRenameRules|TestRuleCost)$$' -timeout 60m ./test/rulebench/

## bench-rules-work: the work of the rules, paired with BASE's (needed) in
## process: Prometheus' rule manager and PromQL engine (the Go module's
## release) over a test TSDB holding the synthetic cluster of each of
## RULEBENCH_SIZES nodes, on a simulated clock, 200 cycles after an hour
## of warm-up. Nothing to build or start; about 20 s at 2,000 nodes, and
## repeatable to a per cent or so where bench-rules' wall clock moves by
## 8% (test/rulebench/work_test.go, docs/performance.md).
.PHONY: bench-rules-work
bench-rules-work:
	@test -n "$(BASE)" || { echo "bench-rules-work pairs the tree with a commit: make bench-rules-work BASE=main"; exit 2; }
	RULEBENCH_SIZES=$(RULEBENCH_SIZES) RULEBENCH_BASE=$(BASE) \
		$(GO) test -tags rulebench -count=1 -v -run '^TestRuleWork$$' -timeout 30m ./test/rulebench/

## bench-status: the scrape's latency while STATUS_CLIENTS (50) clients
## hammer /status of a STATUS_NODES (5000) node snapshot, the exporter on
## one CPU and the clients on the other (test/scale/status_test.go).
STATUS_NODES   ?= 5000
STATUS_CLIENTS ?= 50
.PHONY: bench-status
bench-status:
	STATUS_NODES=$(STATUS_NODES) STATUS_CLIENTS=$(STATUS_CLIENTS) \
		$(if $(shell command -v taskset),taskset -c 1) $(GO) test -tags scale -count=1 -run TestStatusUnderLoad -v -timeout 10m ./test/scale/

## test-browser: load the exporter's /status page in a real headless
## Chromium (test/browser/): the rendered text must name the failing
## stages, causes and runbooks; the screenshot goes to BROWSER_OUT.
## Debian's chromium is installed when /usr/bin/chromium is missing (root,
## as CI runs); `go test -tags browser ./test/browser/ -update-docs`
## refreshes docs/status.png.
CHROMIUM    ?= /usr/bin/chromium
BROWSER_OUT ?= $(CURDIR)/bin/browser

.PHONY: test-browser chromium
test-browser: chromium
	mkdir -p $(BROWSER_OUT)
	CHROMIUM=$(CHROMIUM) $(GO) test -tags browser -count=1 -artifacts -outputdir=$(BROWSER_OUT) -v ./test/browser/

## chromium: install Debian's chromium for test-browser when
## /usr/bin/chromium is missing (needs root).
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; \
	fi

## e2e-mco: the machine-config-operator's own machine-os-builder and node
## controller (test/mco/, CONTRIBUTING.md "Integration tests") write the
## objects of each incident on the real etcd and kube-apiserver, and the
## exporter and the rules judge what they wrote. Built once per source
## into $(E2E_CACHE) by hack/mco/build.sh (about 5 minutes on 2 cores,
## cold): from ../shared/mco/ beside the repository (the trimmed MCO source
## with its vendor/ directory), or MCO_SRC=path/to/machine-config-operator;
## without either the suite skips with one line.
MCO_TARBALL ?= $(abspath $(CURDIR)/../shared/mco/mco-7ff337a.tar.xz)
MCO_SRC     ?=
# Without a source the suite only says so: no server is built for it.
MCO_SOURCE  := $(or $(MCO_SRC),$(wildcard $(MCO_TARBALL)))
.PHONY: e2e-mco
e2e-mco: $(if $(MCO_SOURCE),$(E2E_APISERVER) $(E2E_ETCD) $(PROMTOOL))
	@mco=$$(E2E_CACHE=$(E2E_CACHE) MCO_TARBALL=$(MCO_TARBALL) MCO_SRC=$(MCO_SRC) GO=$(GO) hack/mco/build.sh) && eval "$$mco" && \
	if [ -n "$${E2E_MCO_SKIP:-}" ]; then echo "e2e-mco: skipped: $$E2E_MCO_SKIP"; exit 0; fi && \
	export E2E_MCO_DIR E2E_MCO_BUILDER E2E_MCO_NODE && \
	E2E_KUBE_APISERVER=$(E2E_APISERVER) E2E_ETCD=$(E2E_ETCD) E2E_PROMTOOL=$(abspath $(PROMTOOL)) \
		$(GO) test -tags e2emco -count=1 -timeout 30m $(E2E_ARGS) ./test/mco/
