//go:build e2e

package e2e

// A page whose identity came from evidence that is gone when the exporter
// restarts.

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

// The incident is testdata/lifecycles/build-failed-evidence-expired:
// seed 004's build, failed on RUN unknown-command, on an MCO whose Failed
// condition says only "Build Failed" (MachineOSBuildFailedConditions,
// pkg/apihelpers/machineosbuild.go at 7ff337a): the class is read from
// the failed pods' termination messages, and nothing else names it.
const (
	expiredLifecycle = "build-failed-evidence-expired"
	failedBuild      = "layered-a9d6cc1c8ff0e876884feb344f8d637f"
	failedClass      = "containerfile_command_failed"
	buildFailedAlert = "OCLMachineOSBuildFailed"
	// The lifecycle's minutes: the build failed, the exporter serves again
	// after its Deployment rolled out with every pod and event of the
	// build gone, the admin's fix.
	failedAt, expiredAt, fixedAt = 0, 181, 185
	// holdMinutes is how long the restarted exporter is watched reading
	// class unknown: a page under the new label set would be pending at
	// the first evaluation and fire after the rule's for: (5m), then
	// wait Alertmanager's group_wait (30s); a resolve of the old one
	// shows at once.
	holdMinutes = 10
)

// buildFailedKey is the failed build's alert, keyed as alertKey writes it.
func buildFailedKey(class string) string {
	return buildFailedAlert + "/" + failedBuild + "/" + class
}

// TestPagesSurviveExporterRestart replays the lifecycle's restart after
// the evidence expired on the stack TestPagesSurviveDisruption runs, with
// one exporter as the base Deployment runs it. Once
// OCLMachineOSBuildFailed fires with the class read from the pods, the
// exporter is killed (the Deployment's rollout at minute 180; the drain
// that evicts it is RunNodeDrain, pkg/controller/drain/drain_controller.go,
// whose kubectl drain helper deletes every finished pod), and while it is
// down the build's pods and events go: the drains delete the pods, and the
// kube-apiserver's --event-ttl (3h on OpenShift) deletes the events three
// hours after they were last written. The exporter started again reads
// class unknown. Alertmanager must hold the one page, with its labels,
// throughout and nothing else; Prometheus must keep it firing since the
// same time. The fix is the MCO's answer to the admin's new Containerfile
// (updateMachineOSConfig, then deleteOtherBuildsForMachineOSConfig,
// pkg/controller/build/reconciler.go): a new build, the failed one deleted
// with all it owns; the page resolves, once.
func TestPagesSurviveExporterRestart(t *testing.T) {
	states := lifecycleStates(t, expiredLifecycle, failedAt, expiredAt, fixedAt)
	ns := cluster.ExporterNamespace
	s := startDisruptionStack(t, "exporter-restart", bundleObject(t, "Deployment", ns, "ocl-exporter"),
		"ocl-exporter-7d9c5b8f6-k2x9p")

	var last []*unstructured.Unstructured
	t.Cleanup(func() { _ = env.kube.removeAll(context.Background(), last) })
	stage := func(st lifecycle.State) {
		t.Helper()
		if err := env.kube.change(t.Context(), last, st.Objects); err != nil {
			t.Fatalf("minute %d (%s): %v", st.At, st.Note, err)
		}
		last = st.Objects
	}
	stage(states[0])
	key := buildFailedKey(failedClass)
	waitPaged(t, s.pager, key, 3*time.Minute)
	before := waitState(t, s.prom.url, key, "firing")
	w := watchPages(t, s.prom.url, s.amURL)
	w.holdOnly(key)

	killReplica(t, s.prom.url, s.replicas[0])
	stage(states[1])
	s.replicas[0] = s.join(t, "ocl-exporter-6b8f7d5c9-m4t8w")
	poll(t, time.Minute, "the restarted exporter does not read the expired build's class as unknown", func() string {
		return failureClassIs(s.prom.url, "unknown")
	})
	// The assertion is about a span of the incident, so it watches one.
	for end := time.Now().Add(holdMinutes * disruptionTick); time.Now().Before(end); time.Sleep(time.Second) {
		if why := onlyFiring(s.prom.url, key); why != "" {
			t.Fatalf("while the restarted exporter reads class unknown: %s", why)
		}
	}
	if after := waitState(t, s.prom.url, key, "firing"); !after.ActiveAt.Equal(before.ActiveAt) {
		t.Errorf("%s active since %s after the restart, was %s: a new alert", key, after.ActiveAt, before.ActiveAt)
	}
	for _, v := range w.stop() {
		t.Error(v)
	}

	stage(states[2])
	poll(t, time.Minute, "Prometheus does not resolve the page after the fix", func() string {
		if as := alertState(t, s.prom.url, key); as != "" {
			return key + " is " + as
		}
		return ""
	})
	waitResolved(t, s.pager, []string{key})
	checkPages(t, s.pager, []string{key})
	removeAndExpectBaseline(t, nil, last, settle)
}

// lifecycleStates are the objects of the named lifecycle's stages that
// begin at the minutes given, in their order.
func lifecycleStates(t *testing.T, name string, minutes ...int) []lifecycle.State {
	t.Helper()
	l, err := lifecycle.Load(filepath.Join(repoRoot, "testdata", "lifecycles", name))
	if err != nil {
		t.Fatal(err)
	}
	all, err := l.States()
	if err != nil {
		t.Fatal(err)
	}
	var out []lifecycle.State
	for _, m := range minutes {
		i := 0
		for i < len(all) && all[i].At != m {
			i++
		}
		if i == len(all) {
			t.Fatalf("lifecycle %s has no stage at minute %d", name, m)
		}
		out = append(out, all[i])
	}
	return out
}

// failureClassIs says why Prometheus does not read the failed build's
// class as class alone, or "".
func failureClassIs(promURL, class string) string {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
		} `json:"result"`
	}
	expr := fmt.Sprintf(`mosb_failure_class{machineosbuild=%q} == 1`, failedBuild)
	if err := promGet(promURL, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return err.Error()
	}
	var read []string
	for _, r := range data.Result {
		read = append(read, r.Metric["class"])
	}
	if len(read) == 0 || strings.Join(read, ",") != class {
		return fmt.Sprintf("%s reads class %q, want %q", failedBuild, read, class)
	}
	return ""
}

// onlyFiring says why Prometheus does not evaluate key as the one
// OCLMachineOSBuildFailed, firing, or "": one of other labels, even
// pending, is a second page on its way. Other alerts are the watch's.
func onlyFiring(promURL, key string) string {
	as, err := promAlerts(promURL)
	if err != nil {
		return err.Error()
	}
	why := []string{key + " is not active"}
	for _, a := range as {
		switch k := alertKey(a.Labels); {
		case a.Labels["alertname"] != buildFailedAlert:
		case k != key:
			why = append(why, k+" is "+a.State)
		case a.State != "firing":
			why[0] = k + " is " + a.State + ", want firing"
		default:
			why[0] = ""
		}
	}
	if why[0] == "" {
		why = why[1:]
	}
	return strings.Join(why, "; ")
}
