//go:build e2e

package e2e

// The real Alertmanager with the shipped configuration: started for the
// lifecycles, and its inhibition and grouping checked on their own.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// startAlertmanager runs Alertmanager with the shipped fragment, its
// timers divided by scale, its receivers posting to url; it stops with the
// test.
func startAlertmanager(t *testing.T, dir, url string, scale time.Duration) (addr string) {
	t.Helper()
	amConfig, err := scaledAlertmanagerConfig(url, scale)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "alertmanager.yml"), amConfig)
	if addr, err = cluster.FreeAddress(); err != nil {
		t.Fatal(err)
	}
	am, err := startServer(dir, "alertmanager", tools["E2E_ALERTMANAGER"], addr,
		"--config.file", filepath.Join(dir, "alertmanager.yml"), "--storage.path", filepath.Join(dir, "am"),
		"--web.listen-address", addr, "--cluster.listen-address", "")
	if am != nil {
		t.Cleanup(am.Stop)
	}
	if err != nil {
		t.Fatalf("Alertmanager refuses deploy/alertmanager/alertmanager.yaml: %v", err)
	}
	return addr
}

// scaledAlertmanagerConfig is deploy/alertmanager/alertmanager.yaml with
// its timers divided by scale and every receiver a webhook at
// url/<receiver>.
func scaledAlertmanagerConfig(url string, scale time.Duration) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "alertmanager", "alertmanager.yaml"))
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := sigsyaml.UnmarshalStrict(b, &cfg); err != nil {
		return nil, err
	}
	var scaleRoute func(route map[string]any) error
	scaleRoute = func(route map[string]any) error {
		for _, k := range []string{"group_wait", "group_interval", "repeat_interval"} {
			if s, ok := route[k].(string); ok {
				d, err := model.ParseDuration(s)
				if err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				route[k] = model.Duration(time.Duration(d) / scale).String()
			}
		}
		routes, _ := route["routes"].([]any)
		for _, r := range routes {
			if err := scaleRoute(r.(map[string]any)); err != nil {
				return err
			}
		}
		return nil
	}
	route, ok := cfg["route"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no route")
	}
	if err := scaleRoute(route); err != nil {
		return nil, err
	}
	receivers, _ := cfg["receivers"].([]any)
	for _, r := range receivers {
		rcv := r.(map[string]any)
		rcv["webhook_configs"] = []any{map[string]any{"url": url + "/" + rcv["name"].(string), "send_resolved": true}}
	}
	return sigsyaml.Marshal(cfg)
}

// TestAlertmanagerInhibition posts alerts straight to a real Alertmanager
// running the shipped fragment and checks which reach the receivers: the
// inhibition rules, which the replayed incidents rarely need (the rules
// already exclude each other), each silence what they should and only in
// the pool they should.
func TestAlertmanagerInhibition(t *testing.T) {
	for _, tc := range []struct {
		name        string
		post, heard []map[string]string
	}{
		{
			name:  "the exporter down silences the rest of the bundle, not the MCO's own OCL alerts",
			post:  []map[string]string{{"alertname": "OCLExporterDown"}, {"alertname": "OCLNodeUpdateFailing", "pool": "infra", "node": "n1", "class": "image_not_found"}, {"alertname": "OCLBuildFailed"}},
			heard: []map[string]string{{"alertname": "OCLExporterDown"}, {"alertname": "OCLBuildFailed"}},
		},
		{
			name: "a missing secret silences the builder alert, and its pool's rollout, not another pool's",
			post: []map[string]string{
				{"alertname": "OCLMachineOSConfigSecretMissing", "machineosconfig": "infra", "pool": "infra", "field": "renderedImagePushSecret", "secret": "push"},
				{"alertname": "OCLMachineOSBuilderNotReady"},
				{"alertname": "OCLRolloutStalled", "pool": "infra"},
				{"alertname": "OCLRolloutStalled", "pool": "worker"},
			},
			heard: []map[string]string{
				{"alertname": "OCLMachineOSConfigSecretMissing", "machineosconfig": "infra", "pool": "infra", "field": "renderedImagePushSecret", "secret": "push"},
				{"alertname": "OCLRolloutStalled", "pool": "worker"},
			},
		},
		{
			// Without OCLMachineOSBuilderNotReady: a builder that is down
			// explains every pool's build not starting, and an inhibited
			// alert still inhibits others in Alertmanager.
			name: "a missing secret silences its pool's build start, not another pool's",
			post: []map[string]string{
				{"alertname": "OCLMachineOSConfigSecretMissing", "machineosconfig": "infra", "pool": "infra", "field": "renderedImagePushSecret", "secret": "push"},
				{"alertname": "OCLMachineOSBuildNotStarted", "machineosconfig": "infra", "pool": "infra"},
				{"alertname": "OCLMachineOSBuildNotStarted", "machineosconfig": "worker", "pool": "worker"},
			},
			heard: []map[string]string{
				{"alertname": "OCLMachineOSConfigSecretMissing", "machineosconfig": "infra", "pool": "infra", "field": "renderedImagePushSecret", "secret": "push"},
				{"alertname": "OCLMachineOSBuildNotStarted", "machineosconfig": "worker", "pool": "worker"},
			},
		},
		{
			name: "a failed build silences its pool's rollout, ImageBuildDegraded and the MCO's build alerts only",
			post: []map[string]string{
				{"alertname": "OCLMachineOSBuildFailed", "machineosbuild": "layered-1", "machineosconfig": "layered", "pool": "layered", "class": "containerfile_command_failed"},
				{"alertname": "OCLPoolDegraded", "pool": "layered", "condition": "ImageBuildDegraded"},
				{"alertname": "OCLPoolDegraded", "pool": "layered", "condition": "RenderDegraded"},
				{"alertname": "OCLNodeNotOnDesiredImage", "pool": "layered", "node": "n1"},
				{"alertname": "OCLNodeNotOnDesiredImage", "pool": "infra", "node": "n2"},
				{"alertname": "OCLBuildFailed", "pool": "layered"},
				{"alertname": "OCLBuildFailed", "pool": "infra"},
			},
			heard: []map[string]string{
				{"alertname": "OCLMachineOSBuildFailed", "machineosbuild": "layered-1", "machineosconfig": "layered", "pool": "layered", "class": "containerfile_command_failed"},
				{"alertname": "OCLPoolDegraded", "pool": "layered", "condition": "RenderDegraded"},
				{"alertname": "OCLNodeNotOnDesiredImage", "pool": "layered", "node": "n1"},
				{"alertname": "OCLNodeNotOnDesiredImage", "pool": "infra", "node": "n2"},
				{"alertname": "OCLBuildFailed", "pool": "infra"},
			},
		},
		{
			// The builds of a pool recreated in a loop: its pool gets no
			// image, so its rollout and a build's TooLong are the loop's.
			name: "a build loop silences its pool's rollout and build duration only",
			post: []map[string]string{
				{"alertname": "OCLMachineOSBuildLoop", "machineosconfig": "layered", "pool": "layered"},
				{"alertname": "OCLRolloutStalled", "pool": "layered"},
				{"alertname": "OCLMachineOSBuildTooLong", "machineosbuild": "layered-1", "machineosconfig": "layered", "pool": "layered"},
				{"alertname": "OCLRolloutStalled", "pool": "infra"},
			},
			heard: []map[string]string{
				{"alertname": "OCLMachineOSBuildLoop", "machineosconfig": "layered", "pool": "layered"},
				{"alertname": "OCLRolloutStalled", "pool": "infra"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, url := startWebhook(t)
			addr := startAlertmanager(t, t.TempDir(), url, timeScale)
			var alerts []map[string]any
			for _, l := range tc.post {
				labels := map[string]string{"severity": "warning", "namespace": "openshift-machine-config-operator"}
				for k, v := range l {
					labels[k] = v
				}
				alerts = append(alerts, map[string]any{"labels": labels, "annotations": map[string]string{"summary": "test"}})
			}
			postAlerts(t, addr, alerts)
			var want []string
			for _, l := range tc.heard {
				want = append(want, l["alertname"]+" "+l["pool"]+" "+l["node"])
			}
			slices.Sort(want)
			// Done when every alert to hear was heard and Alertmanager holds
			// every other one suppressed, so that it never notifies it: no
			// fixed wait that a slow machine could outlast.
			var heard []string
			deadline := time.Now().Add(settle)
			for {
				heard = heard[:0]
				p.mu.Lock()
				for _, n := range p.notifications {
					for _, a := range n.Alerts {
						heard = append(heard, a.Labels["alertname"]+" "+a.Labels["pool"]+" "+a.Labels["node"])
					}
				}
				p.mu.Unlock()
				slices.Sort(heard)
				pending := notHeardOrSuppressed(t, addr, want, heard)
				if len(pending) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after %s: %s (notified %q)", settle, strings.Join(pending, "; "), heard)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if !slices.Equal(heard, want) {
				t.Errorf("notified %q, want %q", heard, want)
			}
		})
	}
}

// notHeardOrSuppressed lists what keeps an inhibition check from its
// verdict: an alert to hear not heard yet, or one Alertmanager holds
// neither suppressed nor to hear.
func notHeardOrSuppressed(t *testing.T, addr string, want, heard []string) []string {
	t.Helper()
	var pending []string
	for _, w := range want {
		if !slices.Contains(heard, w) {
			pending = append(pending, "not heard yet: "+w)
		}
	}
	held, err := amAlerts(t.Context(), "http://"+addr, "")
	if err != nil {
		return append(pending, err.Error())
	}
	for _, a := range held {
		k := a.Labels["alertname"] + " " + a.Labels["pool"] + " " + a.Labels["node"]
		if !slices.Contains(want, k) && a.Status.State != "suppressed" {
			pending = append(pending, fmt.Sprintf("%s is %s, not suppressed", k, a.Status.State))
		}
	}
	return pending
}

// TestAlertmanagerGroupsOneCause posts the alert a shared cause (an expired
// push secret all MachineOSConfigs use) raises in each of 100 pools and
// checks the shipped routing sends it as one notification listing every
// pool, not one page per pool.
func TestAlertmanagerGroupsOneCause(t *testing.T) {
	const pools = 100
	p, url := startWebhook(t)
	addr := startAlertmanager(t, t.TempDir(), url, timeScale)
	var alerts []map[string]any
	for i := range pools {
		pool := fmt.Sprintf("pool-%03d", i)
		labels := map[string]string{
			"alertname": "OCLMachineOSConfigSecretMissing", "severity": "warning", "namespace": "openshift-machine-config-operator",
			"machineosconfig": pool, "pool": pool, "field": "renderedImagePushSecret", "secret": "push",
		}
		alerts = append(alerts, map[string]any{"labels": labels, "annotations": map[string]string{"summary": "test"}})
	}
	postAlerts(t, addr, alerts)
	// Each alert belongs to one group of its route: once every pool is
	// listed, no later notification can add a group of these alerts.
	groups := map[string]bool{}
	listed := map[string]bool{}
	for deadline := time.Now().Add(settle); len(listed) < pools && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		p.mu.Lock()
		for _, n := range p.notifications {
			groups[n.GroupKey] = true
			for _, a := range n.Alerts {
				listed[a.Labels["pool"]] = true
			}
		}
		p.mu.Unlock()
	}
	if len(groups) != 1 {
		t.Errorf("one cause in %d pools notified %d groups, want 1", pools, len(groups))
	}
	if len(listed) != pools {
		t.Errorf("the notifications list %d pools, want %d", len(listed), pools)
	}
}

// postAlerts sends alerts to Alertmanager's v2 API, as Prometheus does.
func postAlerts(t *testing.T, addr string, alerts []map[string]any) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/api/v2/alerts", "application/json", strings.NewReader(string(mustJSON(t, alerts))))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts: %s", resp.Status)
	}
}

// amAlert is an alert as Alertmanager's /api/v2/alerts reports it.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	UpdatedAt   time.Time         `json:"updatedAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

// amAlerts are the alerts Alertmanager at amURL holds that are not
// resolved, filtered by query (its API's "active=true&silenced=false",
// say; empty: all of them).
func amAlerts(ctx context.Context, amURL, query string) ([]amAlert, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, amURL+"/api/v2/alerts?"+query, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("Alertmanager's API: %w", err)
	}
	defer resp.Body.Close()
	var as []amAlert
	if err := json.NewDecoder(resp.Body).Decode(&as); err != nil {
		return nil, fmt.Errorf("Alertmanager's API: %w", err)
	}
	return as, nil
}
