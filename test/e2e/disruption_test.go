//go:build e2e

package e2e

// Pages through the disruptions an image rollout and an upgrade bring:
// the platform Prometheus restarted, and one of two exporter replicas
// killed, in the middle of an incident.

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// The test's clock: a minute of the cluster's lasts disruptionTick, and
// every duration that decides a page (the rules' for:, Prometheus's
// intervals and restore flags, Alertmanager's timers) is divided by
// disruptionScale. Slower than the lifecycle replays' so that what no
// scale shortens, the seconds a Prometheus takes to stop and start, stays
// small beside the window it must fit in (restartWindow).
const (
	disruptionTick  = 4 * time.Second
	disruptionScale = time.Minute / disruptionTick
)

// restartFlags are the Prometheus flags that decide what survives its
// restart, at Prometheus 3.5's defaults (cmd/prometheus/main.go), which
// the platform Prometheus keeps: the Prometheus Operator passes them only
// when the resource sets spec.rules.alert, and cluster-monitoring-operator
// sets resendDelay to 60s (assets/prometheus-k8s/prometheus.yaml), the
// default. The evaluation and scrape intervals are the operator's
// default, 30s, which the configuration it writes carries.
var restartFlags = map[string]time.Duration{
	"rules.alert.for-outage-tolerance": time.Hour,
	"rules.alert.for-grace-period":     10 * time.Minute,
	"rules.alert.resend-delay":         time.Minute,
	"query.lookback-delta":             5 * time.Minute,
}

// restartWindow is how long a Prometheus may take to stop and start while
// a firing alert stays firing in Alertmanager, for a restart that begins
// right after Prometheus sent it. Prometheus gives each alert it sends an
// end 4 resend delays later (rules/alerting.go, sendAlerts); after a
// restart it restores the alert's start from ALERTS_FOR_STATE once its
// groups have evaluated twice, and sends it at the third evaluation
// (rules/group.go, run and RestoreForState). On the platform's settings,
// 4 minutes less 1.5: a single Prometheus down longer, or one that last
// sent a minute before it stopped and is down more than a minute, lets
// Alertmanager resolve the page (docs/alerts.md, "A restart of
// Prometheus").
var restartWindow = (4*restartFlags["rules.alert.resend-delay"] - 3*30*time.Second) / disruptionScale

// The incident: MachineOSConfig infra of seed000-secrets-missing names two
// secrets. Only rendered-image is missing at first; base-image-pull is
// deleted once that page fires, so that one alert fires and the other is
// pending when the disruptions come.
const (
	disruptionScenario = "seed000-secrets-missing"
	firingSecret       = "rendered-image"
	pendingSecret      = "base-image-pull"
	secretAlert        = "OCLMachineOSConfigSecretMissing"
)

// TestPagesSurviveDisruption runs deploy/overlays/two-replicas as a
// cluster does: two exporters as its pods run them, discovered through
// the Service's EndpointSlices, each slice naming its Pod, and scraped by
// the real Prometheus 3.5 with the configuration the real Prometheus
// Operator writes for the platform Prometheus, which sends to Alertmanager
// with the shipped routing. With one page firing and another pending, it
// restarts Prometheus, then kills one exporter (SIGKILL: its scrapes fail
// until its endpoint goes, as on a lost node) and starts its replacement.
// Throughout, Alertmanager must hold the firing alert; the pending one
// must page once; no alert may carry a replica's labels or page twice,
// and nothing else may page; after the fix both resolve.
func TestPagesSurviveDisruption(t *testing.T) {
	s := startDisruptionStack(t, "disruption", overlayDeployment(t, "two-replicas"),
		"ocl-exporter-5f6d8c9b4-k2x9p", "ocl-exporter-5f6d8c9b4-q7m4z")
	prom, pager := s.prom, s.pager

	createSecret(t, pendingSecret)
	objs, err := cluster.LoadDir(scenario(disruptionScenario))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.removeAll(context.Background(), objs) })
	if err := env.kube.applyAll(t.Context(), objs); err != nil {
		t.Fatal(err)
	}
	firing, pending := secretAlertKey(firingSecret), secretAlertKey(pendingSecret)
	waitPaged(t, pager, firing, 3*time.Minute)
	w := watchPages(t, prom.url, s.amURL, firing)

	deleteSecret(t, pendingSecret)
	waitState(t, prom.url, pending, "pending")
	restartPrometheus(t, prom, s.amURL, firing, pending)
	killReplica(t, prom.url, s.replicas[0])
	s.replicas[0] = s.join(t, "ocl-exporter-5f6d8c9b4-x8w2n")

	waitPaged(t, pager, pending, 3*time.Minute)
	w.hold(pending)
	for _, v := range w.stop() {
		t.Error(v)
	}

	// The fix. The fixture's other objects stay as the incident left them
	// (the operator Degraded, no builder): once the secrets exist, the
	// rules no longer explain them by a missing secret, so the objects go
	// as soon as Prometheus has resolved the pages.
	createSecret(t, firingSecret)
	createSecret(t, pendingSecret)
	keys := []string{firing, pending}
	poll(t, time.Minute, "Prometheus does not resolve the pages after the fix", func() string {
		var open []string
		for _, k := range keys {
			if s := alertState(t, prom.url, k); s != "" {
				open = append(open, k+" is "+s)
			}
		}
		return strings.Join(open, "\n")
	})
	removeAndExpectBaseline(t, nil, objs, settle)
	waitResolved(t, pager, keys)
	checkPages(t, pager, keys)
}

// disruptionStack is what the disruption tests run: exporters as pods of
// a Deployment, scraped by the real Prometheus with the configuration the
// real Prometheus Operator writes for the platform Prometheus (its
// intervals and restart flags, every duration divided by
// disruptionScale), which sends to Alertmanager with the shipped routing
// and its webhook receiver.
type disruptionStack struct {
	dir      string
	dep      *unstructured.Unstructured
	client   *http.Client
	replicas []*replica
	pager    *paging
	amURL    string
	prom     *prometheusProc
}

// startDisruptionStack runs one exporter pod of dep per name, under
// env.dir/<name>, emptied first, and waits until Prometheus scrapes them all.
func startDisruptionStack(t *testing.T, name string, dep *unstructured.Unstructured, pods ...string) *disruptionStack {
	t.Helper()
	s := &disruptionStack{dir: filepath.Join(env.dir, name), dep: dep}
	openshiftPriorityClass(t)
	// A fresh storage: with -count, the last run's samples would be this
	// run's history (the build created again looks like a loop).
	if err := os.RemoveAll(s.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	serviceCA, err := cluster.NewCA("openshift-service-serving-signer")
	if err != nil {
		t.Fatal(err)
	}
	s.client = tlsClient(serviceCA, servingCertificate(t, serviceCA))
	for _, pod := range pods {
		s.replicas = append(s.replicas, startReplica(t, s.dir, dep, pod, s.client))
	}

	pager, hook := startWebhook(t)
	amAddr := startAlertmanager(t, s.dir, hook, disruptionScale)
	s.pager, s.amURL = pager, "http://"+amAddr
	platformPrometheus(t, serviceCA, map[string]any{"scrapeInterval": "30s", "evaluationInterval": "30s"})
	op := startOperator(t, s.dir)
	ns := cluster.ExporterNamespace
	g := waitGenerated(t, op, []string{ns + "/ocl-exporter"}, []string{ns + "/ocl-exporter"})
	var args []string
	for flag, d := range restartFlags {
		args = append(args, "--"+flag+"="+model.Duration(d/disruptionScale).String())
	}
	s.prom = startGenerated(t, s.dir, g, generatedOptions{
		rules:  func(from, to string) error { return scaleRules(from, to, disruptionScale) },
		config: scaledConfig(disruptionScale, amAddr),
		args:   args,
	})
	waitTargets(t, s.prom.url, s.replicas)
	return s
}

// join starts the ReplicaSet's new pod name and waits until Prometheus
// scrapes it.
func (s *disruptionStack) join(t *testing.T, name string) *replica {
	t.Helper()
	r := startReplica(t, s.dir, s.dep, name, s.client)
	waitTargets(t, s.prom.url, []*replica{r})
	return r
}

// secretAlertKey is the alert of a missing secret of MachineOSConfig
// infra, keyed by its identity: the labels the rule gives it.
func secretAlertKey(secret string) string {
	return secretAlert + "/" + secret
}

// identityLabels tell the disruption tests' pages apart, in the order
// of their keys.
var identityLabels = []string{"secret", "machineosbuild", "class"}

// alertKey is an alert's key: its name and the identity labels it has, as
// secretAlertKey and buildFailedKey write it.
func alertKey(labels map[string]string) string {
	parts := []string{labels["alertname"]}
	for _, l := range identityLabels {
		if v, ok := labels[l]; ok {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, "/")
}

// scaledConfig divides the operator's intervals by scale, times each
// scrape out at its interval (as the lifecycle replays do: a scrape that
// times out on a busy machine marks every series stale) and sends alerts
// to the test's Alertmanager at am, in place of alertmanager-main's
// endpoints.
func scaledConfig(scale time.Duration, am string) func(cfg map[string]any) {
	div := func(m map[string]any, k string) {
		if s, ok := m[k].(string); ok {
			if d, err := model.ParseDuration(s); err == nil {
				m[k] = model.Duration(time.Duration(d) / scale).String()
			}
		}
	}
	return func(cfg map[string]any) {
		global, _ := cfg["global"].(map[string]any)
		for _, k := range []string{"scrape_interval", "scrape_timeout", "evaluation_interval"} {
			div(global, k)
		}
		scrapes, _ := cfg["scrape_configs"].([]any)
		for _, s := range scrapes {
			job := s.(map[string]any)
			div(job, "scrape_interval")
			if job["scrape_timeout"] = job["scrape_interval"]; job["scrape_timeout"] == nil {
				job["scrape_timeout"] = global["scrape_interval"]
			}
		}
		alerting, _ := cfg["alerting"].(map[string]any)
		if alerting == nil {
			alerting = map[string]any{}
			cfg["alerting"] = alerting
		}
		alerting["alertmanagers"] = []any{map[string]any{"api_version": "v2", "static_configs": []any{map[string]any{"targets": []any{am}}}}}
	}
}

// deleteSecret deletes a secret createSecret made.
func deleteSecret(t *testing.T, name string) {
	t.Helper()
	zero := int64(0)
	if err := env.kube.CS.CoreV1().Secrets(snapshot.DefaultNamespace).Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}

// restartPrometheus stops Prometheus right after Alertmanager received
// the firing alert from it again, with the pending one pending, starts it
// on the same storage, and wants the firing alert back from
// ALERTS_FOR_STATE: firing, active since the same second (the series holds
// whole seconds). Alertmanager holds the alert restartWindow after that
// send at least, so a restart that takes longer proves nothing.
func restartPrometheus(t *testing.T, prom *prometheusProc, amURL, firing, pending string) {
	t.Helper()
	before := waitState(t, prom.url, firing, "firing")
	received := func() time.Time {
		as, _ := amAlerts(t.Context(), amURL, "")
		for _, a := range as {
			if alertKey(a.Labels) == firing {
				return a.UpdatedAt
			}
		}
		return time.Time{}
	}
	last, sent := received(), time.Time{}
	for deadline := time.Now().Add(time.Minute); sent.IsZero(); time.Sleep(50 * time.Millisecond) {
		if r := received(); r.After(last) {
			sent = r
		} else if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not send %s again within a minute (last received %s)", firing, last)
		}
	}
	if s := alertState(t, prom.url, pending); s != "pending" {
		t.Fatalf("too slow to judge: %s is %q at the restart, not pending", pending, s)
	}
	prom.stop()
	if err := prom.start(); err != nil {
		t.Fatalf("Prometheus restarted on its storage: %v", err)
	}
	took := time.Since(sent)
	t.Logf("Prometheus stopped and ready again %s after Alertmanager last received %s (window %s)", took.Round(time.Millisecond), firing, restartWindow)
	if took > restartWindow {
		t.Fatalf("too slow to judge: Prometheus was ready again %s after it last sent %s, over the %s after which Alertmanager may resolve it (%s on the platform's settings); rerun on a less loaded machine",
			took.Round(time.Millisecond), firing, restartWindow, restartWindow*disruptionScale)
	}
	after := waitState(t, prom.url, firing, "firing")
	if d := after.ActiveAt.Sub(before.ActiveAt.Truncate(time.Second)); d < 0 || d >= time.Second {
		t.Errorf("%s restored active since %s, was %s: not from ALERTS_FOR_STATE", firing, after.ActiveAt, before.ActiveAt)
	}
}
