//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// monitoring is a Prometheus scraping the exporter with the rules of
// alerts/, an Alertmanager it sends alerts to, and the webhook receiver
// Alertmanager notifies: the alerts an on-call engineer would get. Each
// test starts its own once the exporter shows the test's objects whole
// (play), so no rule ever evaluates a half-applied fixture: Alertmanager
// notifies once per alert and keeps the annotations of that first
// notification, so an alert fired from 7 of 8 objects would say "7" for
// good.
type monitoring struct {
	promURL, amURL string
	mu             sync.Mutex
	firing         map[string]alert // by seriesKey of the labels
}

// rule is what the suite needs to know of an alerting rule.
type rule struct {
	For model.Duration
	// UsesTime: the expression compares with time(), so its outcome
	// depends on when the fixture was captured, not only on its objects.
	UsesTime bool
}

type alert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// alertRules are alerts/'s alerting rules by name, and rulesDir the same
// files with every for: at 0s (the rules wait minutes to hours; the tests
// check what fires once they have waited), which every test's Prometheus
// reads; prepareRules writes both once.
var (
	alertRules map[string]rule
	rulesDir   string
)

// prepareRules checks alerts/*rules.yaml with the same release's promtool
// and writes their for: 0s copies into dir/rules.
func prepareRules(dir string) error {
	files, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "*rules.yaml"))
	if err != nil {
		return fmt.Errorf("alerts/*rules.yaml: %w", err)
	}
	if len(files) == 0 {
		return errors.New("no alerts/*rules.yaml")
	}
	if out, err := exec.Command(tools["E2E_PROMTOOL"], append([]string{"check", "rules"}, files...)...).CombinedOutput(); err != nil {
		return fmt.Errorf("promtool check rules (Prometheus 2.42) refuses alerts/: %w\n%s", err, out)
	}
	alertRules = map[string]rule{}
	rulesDir = filepath.Join(dir, "rules")
	if err := os.MkdirAll(rulesDir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := rewriteRules(f, filepath.Join(rulesDir, filepath.Base(f)), alertRules); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

// startMonitoring starts Alertmanager, the webhook and a Prometheus that
// scrapes the exporter every second with rulesDir's rules; they stop with
// the test. Their logs go to the suite's directory, kept when it fails.
func startMonitoring(t *testing.T) *monitoring {
	t.Helper()
	dir, err := os.MkdirTemp(env.dir, "monitoring-"+strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+"-")
	if err != nil {
		t.Fatal(err)
	}
	m := &monitoring{firing: map[string]alert{}}
	webhook, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(m.receive)}
	go func() { _ = srv.Serve(webhook) }()
	t.Cleanup(func() { _ = srv.Close() })

	amAddr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	amConfig := fmt.Sprintf(`route:
  receiver: test
  group_by: ['...']
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: test
    webhook_configs:
      - url: http://%s/
        send_resolved: true
`, webhook.Addr())
	writeFile(t, filepath.Join(dir, "alertmanager.yml"), []byte(amConfig))
	am, err := startServer(dir, "alertmanager", tools["E2E_ALERTMANAGER"], amAddr,
		"--config.file", filepath.Join(dir, "alertmanager.yml"), "--storage.path", filepath.Join(dir, "alertmanager"),
		"--web.listen-address", amAddr, "--cluster.listen-address", "")
	if am != nil {
		t.Cleanup(am.Stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	m.amURL = "http://" + amAddr

	promAddr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	promConfig := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
alerting:
  alertmanagers:
    - static_configs: [{targets: [%q]}]
scrape_configs:
  - job_name: ocl-exporter
    static_configs: [{targets: [%q]}]
`, filepath.Join(rulesDir, "*.yaml"), amAddr, strings.TrimPrefix(env.exporter.url, "http://"))
	writeFile(t, filepath.Join(dir, "prometheus.yml"), []byte(promConfig))
	m.promURL = "http://" + promAddr
	prom, err := startServer(dir, "prometheus", tools["E2E_PROMETHEUS"], promAddr,
		"--config.file", filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path", filepath.Join(dir, "prometheus"),
		"--web.listen-address", promAddr, "--rules.alert.resend-delay", "1s")
	if prom != nil {
		t.Cleanup(prom.Stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// rewriteRules copies a rule file with every for: set to 0s, noting each
// alert's original for and whether it reads time() in rules.
func rewriteRules(from, to string, rules map[string]rule) error {
	return editRules(from, to, func(name string, r map[string]any) (bool, error) {
		var d model.Duration
		if s, ok := r["for"].(string); ok {
			var err error
			if d, err = model.ParseDuration(s); err != nil {
				return false, fmt.Errorf("for: %w", err)
			}
		}
		expr, _ := r["expr"].(string)
		rules[name] = rule{For: d, UsesTime: strings.Contains(expr, "time()")}
		r["for"] = "0s"
		return true, nil
	})
}

// editRules copies the rule file from to to, passing each alerting rule
// to edit, which may change it and says whether to keep it.
func editRules(from, to string, edit func(alert string, r map[string]any) (keep bool, err error)) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	var doc struct {
		Groups []struct {
			Name  string           `json:"name"`
			Rules []map[string]any `json:"rules"`
		} `json:"groups"`
	}
	if err := sigsyaml.UnmarshalStrict(b, &doc); err != nil {
		return err
	}
	for i, g := range doc.Groups {
		var kept []map[string]any
		for _, r := range g.Rules {
			if name, _ := r["alert"].(string); name != "" {
				keep, err := edit(name, r)
				if err != nil {
					return fmt.Errorf("alert %s: %w", name, err)
				}
				if !keep {
					continue
				}
			}
			kept = append(kept, r)
		}
		doc.Groups[i].Rules = kept
	}
	out, err := sigsyaml.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(to, out, 0o644)
}

// startServer starts a Prometheus or Alertmanager and waits until it
// answers /-/ready on addr.
func startServer(dir, name, bin, addr string, args ...string) (*cluster.Proc, error) {
	p, err := cluster.StartProc(dir, name, bin, args...)
	if err != nil {
		return nil, err
	}
	if err := cluster.WaitHTTP(p, http.DefaultClient, "http://"+addr+"/-/ready", "", time.Minute); err != nil {
		return p, fmt.Errorf("%s: %w\n%s", name, err, p.Tail(20))
	}
	return p, nil
}

// receive is the webhook: it keeps the alerts Alertmanager reports firing.
func (m *monitoring) receive(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		Alerts []alert `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range msg.Alerts {
		k := seriesKey("ALERTS", a.Labels)
		if a.Status == "firing" {
			m.firing[k] = a
		} else {
			delete(m.firing, k)
		}
	}
}

func (m *monitoring) snapshot() map[string]alert {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.firing)
}

// promtoolTest is the part of alerts/tests/scenario-<name>.yaml the suite
// reads: the alerts expected at each eval_time.
type promtoolTest struct {
	Tests []struct {
		AlertRuleTest []struct {
			EvalTime  string `json:"eval_time"`
			Alertname string `json:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `json:"exp_labels"`
				ExpAnnotations map[string]string `json:"exp_annotations"`
			} `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// expectedAlerts are the alerts the promtool test of the scenario expects
// at its last eval_time, with their labels and annotations, and the alert
// names they decide: those whose for: has passed by then and whose
// expression does not read time() (the live cluster's clock is not the
// fixture's). ok is false when the scenario has no promtool test.
func expectedAlerts(t *testing.T, name string) (want map[string]alert, decided []string, ok bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "alerts", "tests", "scenario-"+name+".yaml"))
	if os.IsNotExist(err) {
		return nil, nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc promtoolTest
	if err := sigsyaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var last model.Duration
	for _, g := range doc.Tests {
		for _, a := range g.AlertRuleTest {
			d, err := model.ParseDuration(a.EvalTime)
			if err != nil {
				t.Fatal(err)
			}
			last = max(last, d)
		}
	}
	want = map[string]alert{}
	for _, g := range doc.Tests {
		for _, a := range g.AlertRuleTest {
			r, known := alertRules[a.Alertname]
			if d, _ := model.ParseDuration(a.EvalTime); d != last || !known || r.UsesTime || r.For > last {
				continue
			}
			decided = append(decided, a.Alertname)
			for _, e := range a.ExpAlerts {
				labels := maps.Clone(e.ExpLabels)
				labels["alertname"] = a.Alertname
				want[seriesKey("ALERTS", labels)] = alert{Status: "firing", Labels: labels, Annotations: e.ExpAnnotations}
			}
		}
	}
	return want, decided, true
}

// expectAlerts waits until the alerts Alertmanager delivered to the
// webhook and still reports firing, among the names decided, are exactly
// want, with their annotations as Alertmanager holds them now (Prometheus
// resends every firing alert each second with its annotations evaluated
// again; a notification keeps the ones it was sent with), and every
// firing alert's runbook exists.
func (m *monitoring) expectAlerts(t *testing.T, want map[string]alert, decided []string) {
	t.Helper()
	t.Logf("alerts: want %d firing, checking %d alert names", len(want), len(decided))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var diff []string
	var firing map[string]alert
	for {
		firing, diff = m.current(ctx)
		if diff == nil {
			diff = alertDiff(firing, want, decided)
		}
		if len(diff) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the alerts Alertmanager delivered differ from alerts/tests/scenario-*.yaml (alerts %v):\n  %s\n--- firing (webhook, annotations from Alertmanager's API):\n%s--- Prometheus /api/v1/alerts:\n%s",
				decided, strings.Join(diff, "\n  "), formatAlerts(firing), m.prometheusAlerts())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// current is what the webhook was notified of and Alertmanager still
// holds active, with the annotations Alertmanager holds now; problem is
// why that could not be read.
func (m *monitoring) current(ctx context.Context) (firing map[string]alert, problem []string) {
	delivered := m.snapshot()
	held, err := amAlerts(ctx, m.amURL, "active=true&silenced=false&inhibited=false")
	if err != nil {
		return delivered, []string{err.Error()}
	}
	firing = map[string]alert{}
	for _, a := range held {
		k := seriesKey("ALERTS", a.Labels)
		if d, ok := delivered[k]; ok {
			d.Annotations = a.Annotations
			firing[k] = d
		}
	}
	// Delivered but no longer held: resolved, the notification saying so
	// is on its way; still firing for the comparison until it arrives.
	for k, d := range delivered {
		if _, ok := firing[k]; !ok {
			firing[k] = d
		}
	}
	return firing, nil
}

func alertDiff(firing, want map[string]alert, decided []string) []string {
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		got, ok := firing[k]
		if !ok {
			diff = append(diff, "not firing: "+k)
			continue
		}
		for _, a := range slices.Sorted(maps.Keys(want[k].Annotations)) {
			if got.Annotations[a] != want[k].Annotations[a] {
				diff = append(diff, fmt.Sprintf("%s: annotation %s is %q, want %q", k, a, got.Annotations[a], want[k].Annotations[a]))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(firing)) {
		a := firing[k]
		if _, ok := want[k]; !ok && (decided == nil || slices.Contains(decided, a.Labels["alertname"])) {
			diff = append(diff, "unexpected: "+k)
		}
		if p := runbookPath(a.Annotations["runbook_url"]); p == "" {
			diff = append(diff, fmt.Sprintf("%s: runbook_url %q is not a runbooks/ file of this repository", k, a.Annotations["runbook_url"]))
		} else if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
			diff = append(diff, fmt.Sprintf("%s: runbook_url names %s: %v", k, p, err))
		}
	}
	return diff
}

// runbookPath is the repository path a runbook_url points at.
func runbookPath(url string) string {
	_, p, ok := strings.Cut(url, "/blob/main/")
	if !ok || !strings.HasPrefix(p, "runbooks/") {
		return ""
	}
	return p
}

func formatAlerts(as map[string]alert) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(as)) {
		fmt.Fprintf(&b, "%s\n    %v\n", k, as[k].Annotations)
	}
	return b.String()
}

// prometheusAlerts is what Prometheus itself evaluates, for failures.
func (m *monitoring) prometheusAlerts() string {
	resp, err := http.Get(m.promURL + "/api/v1/alerts")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, a := range body.Data.Alerts {
		fmt.Fprintf(&b, "%s %s\n", a.State, seriesKey("ALERTS", a.Labels))
	}
	return b.String()
}
