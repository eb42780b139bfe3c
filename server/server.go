// Package server serves the exporter over HTTP: the pre-rendered metrics,
// the /status report (HTML, text, JSON; also on the pod's loopback for
// the on-call port-forward), the health endpoints probes use and a
// landing page, over TLS with the web configuration's files, and with
// Kubernetes token authentication and authorization when asked.
package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
)

// Readiness tells whether the exporter has a complete view to serve.
type Readiness interface {
	Ready() bool
	Status() []snapshot.ResourceStatus
	// RenderFailure is why the last render of the metrics failed, empty
	// when it succeeded.
	RenderFailure() string
}

// Config is what the handler serves.
type Config struct {
	MetricsPath string
	// Registry holds the exporter's own metrics that change rarely (the
	// source's counters, the build), gathered again only when
	// RegistryGeneration moved, which it must whenever one of them may
	// have changed; without it, on every scrape. The Go runtime's, the
	// process's and the scrapes' metrics are written by the handler.
	Registry           *prometheus.Registry
	RegistryGeneration func() uint64
	// Rendered is appended to every scrape: metrics encoded ahead of time.
	Rendered  Prerendered
	Readiness Readiness
	Logger    *slog.Logger
	// MaxRequests bounds concurrent scrapes; 0 means no limit.
	MaxRequests int
	// Status, when set, serves the /status page (StatusHandler).
	Status http.Handler
	// Profiling is true when /debug/pprof/ is served (--web.enable-pprof):
	// only then does the landing page link the profiles.
	Profiling bool
}

// Handler routes /metrics (or MetricsPath), /healthz, /readyz and the
// landing page. Everything it serves is read-only: GET and HEAD are
// answered, any other method gets 405 with an Allow header.
func Handler(cfg Config) (http.Handler, error) {
	if err := CheckMetricsPath(cfg.MetricsPath); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	// "GET /x" also matches HEAD; the mux answers other methods with 405.
	mux.Handle("GET "+cfg.MetricsPath, metricsHandler(cfg))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", readyz(cfg.Readiness))
	links := []web.LandingLinks{
		{Address: cfg.MetricsPath, Text: "Metrics"},
		{Address: "/readyz", Text: "Readiness", Description: "200 once every watched resource has synced or was reported unavailable."},
		{Address: "/healthz", Text: "Health"},
	}
	if cfg.Status != nil {
		mux.Handle("GET "+StatusPath, cfg.Status)
		links = append([]web.LandingLinks{{Address: StatusPath, Text: "Status", Description: "What is wrong with image mode on this cluster, stage by stage per pool, and what to do."}}, links...)
	}
	if cfg.MetricsPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "OCL Exporter",
			Description: "Prometheus exporter for OpenShift On-Cluster Layering (image mode): MachineOSConfigs, MachineOSBuilds and the rollout of layered images to nodes.",
			Version:     version.Info(),
			Links:       links,
			Profiling:   strconv.FormatBool(cfg.Profiling),
		})
		if err != nil {
			return nil, fmt.Errorf("building the landing page: %w", err)
		}
		mux.Handle("GET /", landing)
	}
	return mux, nil
}

// PortForwardHandler serves status, the /status handler, and nothing
// else: what the listener of --web.port-forward-address serves, on a
// loopback address of the pod, which only `oc port-forward` reaches.
func PortForwardHandler(status http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+StatusPath, status)
	mux.HandleFunc("GET /", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "only "+StatusPath+" is served on this address", http.StatusNotFound)
	})
	return mux
}

// reservedPaths are served whatever --web.telemetry-path says; the mux
// panics on a second pattern for one of them.
var reservedPaths = []string{"/healthz", "/readyz", StatusPath}

// CheckMetricsPath accepts an absolute, clean path that is a literal
// pattern of http.ServeMux (no spaces, no {wildcards}) and is not one of
// the health endpoints: anything else would make the mux panic or never
// match.
func CheckMetricsPath(p string) error {
	const accepted = "a clean absolute path such as /metrics (no //, /./ or /../, spaces or braces), other than /healthz, /readyz and /status"
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("--web.telemetry-path %q must be %s", p, accepted)
	case strings.ContainsAny(p, " \t\r\n{}"), !utf8.ValidString(p), !clean(p):
		return fmt.Errorf("--web.telemetry-path %q must be %s", p, accepted)
	case slices.Contains(reservedPaths, strings.TrimSuffix(p, "/")):
		return fmt.Errorf("--web.telemetry-path %q collides with the %s endpoint; it must be %s", p, strings.TrimPrefix(strings.TrimSuffix(p, "/"), "/"), accepted)
	}
	return nil
}

// clean is true for a path that path.Clean keeps, but for a trailing slash.
func clean(p string) bool {
	c := path.Clean(p)
	return p == c || (c != "/" && p == c+"/")
}

// readyz answers 200 once the view is complete, else 503 naming what the
// exporter still waits for, so a stuck rollout of the exporter explains
// itself in `oc describe pod`. The path is public, so it names resources
// and states only: the reasons (API server addresses, error text) are in
// the log, where the source and the renderer write them as they happen.
func readyz(r Readiness) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		for _, st := range r.Status() {
			switch {
			case st.Synced && st.Available:
				continue
			case st.Problem == snapshot.ProblemNotCaptured:
				fmt.Fprintf(&b, "%s: not captured by the snapshot (unknown, not empty)\n", st.Resource)
			case st.Synced:
				fmt.Fprintf(&b, "%s: serving the last known state\n", st.Resource)
			case st.Settled():
				fmt.Fprintf(&b, "%s: unavailable (%s)\n", st.Resource, st.Problem)
			case st.Seen:
				fmt.Fprintf(&b, "%s: waiting\n", st.Resource)
			default:
				fmt.Fprintf(&b, "%s: waiting for the first list\n", st.Resource)
			}
		}
		if r.RenderFailure() != "" {
			b.WriteString("metrics: the last render failed\n")
		}
		if b.Len() > 0 {
			b.WriteString("(the exporter's log has the details)\n")
		}
		if !r.Ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "not ready\n"+b.String())
			return
		}
		fmt.Fprint(w, "ok\n"+b.String())
	}
}
