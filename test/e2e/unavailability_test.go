//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// recovery is how long the exporter may take to come back after a fault:
// client-go's reflectors retry a failed list on a backoff that doubles from
// 0.8 up to 30 seconds, jittered up to twice that, and is reset only after
// two minutes without a failure (NewExponentialBackoffManager in
// reflector.go): a minute at most, and a margin.
const recovery = 90 * time.Second

// TestAPIServerRestart stops the API server under a running exporter and
// starts it again: the exporter keeps serving the last state and stays
// ready, reports every resource unavailable, and recovers by itself.
func TestAPIServerRestart(t *testing.T) {
	objs, want := play(t, scenario("seed004-build-failed"))
	m := startMonitoring(t)

	env.cluster.StopAPIServer()
	restarted := false
	t.Cleanup(func() {
		if !restarted { // leave a working cluster to the other tests
			_ = env.cluster.StartAPIServer()
		}
		if t.Failed() {
			replaceExporter(t)
		}
	})
	expect(t, all(resourcesAvailable(0), sameAs(want)))
	m.expectAlerts(t, resourceAlerts(snapshot.Resources()...), []string{resourceAlert})
	if code := get(t, env.exporter.url+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz answers %d while the API server is away, want 200 (the exporter serves the last known state)", code)
	}

	if err := env.cluster.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if err := env.exporter.eventually(t.Context(), recovery, all(allAvailable(1), sameAs(want))); err != nil {
		t.Fatalf("no recovery after the API server restarted: %v", err)
	}
	if !env.exporter.Running() {
		t.Fatalf("the exporter exited:\n%s", env.exporter.Tail(20))
	}
	// The watches work again: deletions show, once the reflectors' backoff
	// has let them watch again.
	removeAndExpectBaseline(t, m, objs, recovery)
}

// replaceExporter starts a new exporter on the same address after a test
// left the running one in a state the other tests cannot start from.
func replaceExporter(t *testing.T) {
	addr := strings.TrimPrefix(env.exporter.url, "http://")
	env.exporter.Stop()
	e, err := startExporter(env.dir, env.exporterBin, "ocl_exporter", env.cluster.ExporterKubeconfig, addr)
	if err != nil {
		t.Errorf("replacing the exporter: %v", err)
		return
	}
	env.exporter = e
}

// TestCRDRemovedAndReadded deletes the MachineOSBuild CRD under a running
// exporter: its builds disappear, the resource reads unavailable and the
// rest is still served; once the CRD and the builds are back, so are the
// series.
func TestCRDRemovedAndReadded(t *testing.T) {
	const mosb = "machineosbuilds.machineconfiguration.openshift.io"
	objs, want := play(t, scenario("healthy-rollout-done"))
	m := startMonitoring(t)
	crd := env.crds[mosb]
	t.Cleanup(func() {
		if err := env.kube.CreateCRD(context.Background(), crd); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Errorf("re-adding the CRD %s: %v", mosb, err)
		}
	})
	if err := env.kube.Remove(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	expect(t, all(resourcesAvailable(1, mosb), lacks("mosb_build_phase", nil),
		valueOf("mosc_info", map[string]string{"machineosconfig": "layered"}, 1)))
	i := slices.IndexFunc(snapshot.Resources(), func(r snapshot.Resource) bool { return r.Name == mosb })
	m.expectAlerts(t, resourceAlerts(snapshot.Resources()[i]), []string{resourceAlert})

	if err := env.kube.CreateCRD(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	builds := slices.DeleteFunc(slices.Clone(objs), func(u *unstructured.Unstructured) bool { return u.GetKind() != "MachineOSBuild" })
	if err := env.kube.applyAll(t.Context(), builds); err != nil {
		t.Fatal(err)
	}
	if err := env.exporter.eventually(t.Context(), recovery, all(allAvailable(1), sameAs(want))); err != nil {
		t.Fatalf("no recovery after the CRD came back: %v", err)
	}
	removeAndExpectBaseline(t, m, objs, settle)
}

// TestRBACRevoked starts a second exporter after the deploy bundle's
// permission on Jobs is revoked: it reports jobs.batch unavailable, logs the
// fix, serves the rest, and picks the Jobs up once the permission is back,
// without a restart. (An exporter already watching keeps its open watch
// until the watch times out, 5 to 10 minutes; the API server checks RBAC
// when a list or watch starts.)
func TestRBACRevoked(t *testing.T) {
	const jobs = "jobs.batch"
	_, want := play(t, scenario("seed004-build-failed"))
	restore := revokeJobs(t)

	e, err := startExporter(env.dir, env.exporterBin, "ocl_exporter-rbac", env.cluster.ExporterKubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	// What does not come from Jobs is served as before.
	if err := e.eventually(t.Context(), settle, all(resourcesAvailable(1, jobs),
		hasValues(only(want, "mosc_", "node_", "ocl_pool_", "mosb_build_phase", "mosb_info")))); err != nil {
		t.Fatal(err)
	}
	if log := e.Tail(100); !strings.Contains(log, "forbidden") || !strings.Contains(log, jobs) {
		t.Errorf("the exporter's log does not name the forbidden resource %s:\n%s", jobs, log)
	}

	if err := restore(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.eventually(t.Context(), recovery, all(allAvailable(1), sameAs(want))); err != nil {
		t.Fatalf("no recovery after the permission came back: %v", err)
	}
}

// get returns the status code of a GET.
func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// only keeps the series of the families starting with one of prefixes.
func only(s series, prefixes ...string) series {
	out := series{}
	for k, v := range s {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out[k] = v
		}
	}
	return out
}

const resourceAlert = "OCLExporterResourceUnavailable"

// resourceAlerts are the alerts of unreadable resources, labels only.
func resourceAlerts(rs ...snapshot.Resource) map[string]alert {
	out := map[string]alert{}
	for _, r := range rs {
		labels := map[string]string{"alertname": resourceAlert, "resource": r.Name, "severity": "warning", "namespace": cluster.ExporterNamespace}
		out[seriesKey("ALERTS", labels)] = alert{Status: "firing", Labels: labels}
	}
	return out
}
