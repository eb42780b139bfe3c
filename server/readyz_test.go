package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/prometheus/client_golang/prometheus"
)

type fakeReadiness struct {
	ready   bool
	status  []snapshot.ResourceStatus
	failure string
}

func (f fakeReadiness) Ready() bool                       { return f.ready }
func (f fakeReadiness) Status() []snapshot.ResourceStatus { return f.status }
func (f fakeReadiness) RenderFailure() string             { return f.failure }

// TestReadyzNamesResourcesOnly: /readyz is public, so it names what is
// not ready but never echoes error text such as the API server's address.
func TestReadyzNamesResourcesOnly(t *testing.T) {
	const secret = "https://api.internal.example:6443/apis/machineconfiguration.openshift.io/v1/machineosbuilds"
	r := fakeReadiness{
		status: []snapshot.ResourceStatus{
			{Resource: "nodes", Seen: true, Synced: true, Available: true},
			{Resource: "machineosbuilds", Seen: true, Problem: snapshot.ProblemUnreachable, Reason: "listing machineosbuilds failed: Get " + secret + ": dial tcp 10.0.0.1:6443: connect: connection refused"},
			{Resource: "machineosconfigs", Seen: true, Problem: snapshot.ProblemForbidden, Reason: "forbidden: " + secret},
			{Resource: "jobs", Seen: true, Synced: true, Reason: "watch failed: " + secret},
			{Resource: "pods"},
		},
		failure: `collected metric "mosc_info" { label:{name:"machineosconfig" value:"infra"} gauge:{value:1}} was collected before with the same name and label values`,
	}
	rec := httptest.NewRecorder()
	readyz(r)(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("code %d, want 503", rec.Code)
	}
	want := "not ready\n" +
		"machineosbuilds: waiting\n" +
		"machineosconfigs: unavailable (forbidden)\n" +
		"jobs: serving the last known state\n" +
		"pods: waiting for the first list\n" +
		"metrics: the last render failed\n" +
		"(the exporter's log has the details)\n"
	if body != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
	for _, leak := range []string{"api.internal", "10.0.0.1", "mosc_info"} {
		if strings.Contains(body, leak) {
			t.Errorf("the public answer leaks %q", leak)
		}
	}

	rec = httptest.NewRecorder()
	readyz(fakeReadiness{ready: true, status: r.status[:1]})(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
		t.Errorf("ready: %d %q", rec.Code, rec.Body.String())
	}
}

// TestMetricsFailUntilReady: a scrape of an exporter that has not read
// every watched resource yet fails, rather than serve a partial view that
// reads as every problem fixed; once ready, it serves.
func TestMetricsFailUntilReady(t *testing.T) {
	for _, ready := range []bool{false, true} {
		h := metricsHandler(Config{Registry: prometheus.NewRegistry(), Rendered: text(rendered), Logger: slog.New(slog.DiscardHandler),
			Readiness: fakeReadiness{ready: ready}})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		want := map[bool]int{false: http.StatusServiceUnavailable, true: http.StatusOK}[ready]
		if rec.Code != want || ready != strings.Contains(rec.Body.String(), rendered) {
			t.Errorf("ready %v: %d %q, want %d", ready, rec.Code, rec.Body.String(), want)
		}
	}
}
