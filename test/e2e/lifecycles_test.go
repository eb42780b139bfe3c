//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	"github.com/ocl-exporter/ocl_exporter/test/lifecycle"
)

// A lifecycle minute lasts replayTick here: the rules' for and the
// Alertmanager fragment's timers are divided by timeScale, so what pages
// after ten minutes pages after five seconds.
const (
	replayTick = 500 * time.Millisecond // one replayed minute
	timeScale  = time.Minute / replayTick
	// Lifecycles longer than this, or with the exporter down, are replayed
	// by promtool only (alerts/tests/lifecycle-*.yaml): the suite must stay
	// within minutes.
	maxReplayMinutes = 120
	// applyMargin is how long a stage after minute 0 may take to apply:
	// four lifecycle minutes, under the shortest for: of the rules (5m),
	// so a half-applied stage cannot page by itself. A stage that creates
	// a MachineOSBuild after another waits up to a second for the next
	// creationTimestamp (applyAll); the replay logs each lifecycle's
	// slowest stage.
	applyMargin = 4 * replayTick
)

// TestLifecycleNotifications replays the lifecycles of testdata/lifecycles
// on the API server, stage by stage at their minute, with an exporter, a
// Prometheus evaluating alerts/*rules.yaml and an Alertmanager running
// deploy/alertmanager/alertmanager.yaml, all with time scaled down. It
// counts what the webhook receivers get: an incident is exactly one
// notification group, each firing alert linking a runbook of this
// repository, and resolved by the end; a healthy lifecycle notifies no one.
// Rules that compare with time() are left out: the API server stamps the
// objects with today's clock, not the lifecycle's.
func TestLifecycleNotifications(t *testing.T) {
	all, err := lifecycle.All(filepath.Join(repoRoot, "testdata", "lifecycles"))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := startExporter(env.dir, env.exporterBin, "ocl_exporter-lifecycles", env.cluster.ExporterKubeconfig, "",
		"--collector.render-interval=100ms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	for _, l := range all {
		t.Run(l.Name, func(t *testing.T) {
			if reason := notReplayed(l); reason != "" {
				t.Skipf("replayed by promtool only (alerts/tests/lifecycle-%s.yaml): %s", l.Name, reason)
			}
			states, err := l.States()
			if err != nil {
				t.Fatal(err)
			}
			p := startPaging(t, strings.TrimPrefix(exp.url, "http://"))
			begin, last := replay(t, l, states)
			p.checkScrapes(t, begin)
			checkNotifications(t, l, p, begin)
			removeAndExpectBaseline(t, nil, last, settle)
		})
	}
}

// notReplayed says why a lifecycle is left to promtool, or "".
func notReplayed(l *lifecycle.Lifecycle) string {
	if l.End > maxReplayMinutes {
		return fmt.Sprintf("%d minutes, over %d", l.End, maxReplayMinutes)
	}
	for _, s := range l.Stages {
		if s.Exporter != lifecycle.ExporterServing {
			return "the exporter itself stops"
		}
		if s.Snapshot != "" && olderRelease.MatchString(filepath.Base(s.Snapshot)) {
			return "its objects are in an older release's shape (" + filepath.Base(s.Snapshot) + "), which the API server's CRDs do not serve"
		}
	}
	if names := pagedAlerts(l); len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return !alertRules[n].UsesTime }) {
		return "its pages (" + strings.Join(names, ", ") + ") compare with time(), and the API server stamps objects with today's clock"
	}
	return ""
}

// pagedAlerts are the names of the alerts a lifecycle expects to fire.
func pagedAlerts(l *lifecycle.Lifecycle) []string {
	var names []string
	for _, e := range l.Expect {
		for _, f := range e.Firing {
			name, _, _ := strings.Cut(f, "{")
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// replay applies each stage's changes a stage's length after the previous
// stage was in place, waits out the last stage and returns when minute 0
// was and the last stage's objects, which are deleted when the test ends.
// Counting each stage from the previous one, not from minute 0, keeps a
// slow API server from shortening the next stage; what remains is the
// time a stage takes to apply, when the cluster is half in one stage and
// half in the next. Over applyMargin that can move an alert across its
// for:, so the test stops there and says the machine was too slow rather
// than report a wrong page.
func replay(t *testing.T, l *lifecycle.Lifecycle, states []lifecycle.State) (time.Time, []*unstructured.Unstructured) {
	t.Helper()
	var begin, applied time.Time
	var slowest time.Duration
	var prev []*unstructured.Unstructured
	t.Cleanup(func() { _ = env.kube.removeAll(context.Background(), prev) })
	for i, st := range states {
		if i > 0 {
			time.Sleep(time.Until(applied.Add(time.Duration(st.At-states[i-1].At) * replayTick)))
		}
		start := time.Now()
		if err := env.kube.change(t.Context(), prev, st.Objects); err != nil {
			t.Fatalf("minute %d (%s): the API server refuses the stage: %v", st.At, st.Note, err)
		}
		prev = st.Objects
		applied = time.Now()
		if i == 0 {
			begin = applied // minute 0 is when the first stage's objects are in
			continue
		}
		took := applied.Sub(start)
		slowest = max(slowest, took)
		if took > applyMargin {
			t.Fatalf("too slow to replay: minute %d (%s) took %s to apply, over the margin of %s (%g lifecycle minutes); the alerts' for: windows would no longer match the lifecycle's; rerun on a less loaded machine",
				st.At, st.Note, took.Round(time.Millisecond), applyMargin, float64(applyMargin)/float64(replayTick))
		}
	}
	t.Logf("the slowest stage took %s to apply (margin %s)", slowest.Round(time.Millisecond), applyMargin)
	time.Sleep(time.Until(applied.Add(time.Duration(l.End+1-states[len(states)-1].At) * replayTick)))
	return begin, prev
}

// change turns the cluster from the objects of one stage into the next:
// creates, updates where an object differs, deletes.
func (k *kube) change(ctx context.Context, from, to []*unstructured.Unstructured) error {
	key := func(u *unstructured.Unstructured) string { return u.GetKind() + "/" + objectName(u) }
	old := map[string]*unstructured.Unstructured{}
	for _, u := range from {
		old[key(u)] = u
	}
	var create []*unstructured.Unstructured
	for _, u := range to {
		o, ok := old[key(u)]
		delete(old, key(u))
		switch {
		case !ok:
			create = append(create, u)
		case o.GetUID() != "" && u.GetUID() != "" && o.GetUID() != u.GetUID():
			// Another uid under the same name is a new incarnation (a
			// build the MCO deleted and created again), not an update.
			if err := k.Remove(ctx, o); err != nil {
				return fmt.Errorf("delete %s %s: %w", o.GetKind(), objectName(o), err)
			}
			create = append(create, u)
		case !reflect.DeepEqual(cluster.Sanitize(o).Object, cluster.Sanitize(u).Object):
			if err := k.Update(ctx, u, statusOnlyChange(o, u)); err != nil {
				return fmt.Errorf("update %s %s: %w", u.GetKind(), objectName(u), err)
			}
		}
	}
	if err := k.applyAll(ctx, create); err != nil {
		return err
	}
	var gone []*unstructured.Unstructured
	for _, u := range from {
		if _, ok := old[key(u)]; ok {
			gone = append(gone, u)
		}
	}
	return k.removeAll(ctx, gone)
}

// statusOnlyChange: a and b differ in their status alone.
func statusOnlyChange(a, b *unstructured.Unstructured) bool {
	a, b = cluster.Sanitize(a), cluster.Sanitize(b)
	delete(a.Object, "status")
	delete(b.Object, "status")
	return reflect.DeepEqual(a.Object, b.Object)
}

// paging is a Prometheus and an Alertmanager for one lifecycle, and what
// Alertmanager's webhook receivers got.
type paging struct {
	promURL       string
	mu            sync.Mutex
	notifications []notification
}

// notification is what Alertmanager's webhook posts.
type notification struct {
	Receiver string  `json:"receiver"`
	Status   string  `json:"status"`
	GroupKey string  `json:"groupKey"`
	Alerts   []alert `json:"alerts"`
	at       time.Time
}

// startPaging starts Alertmanager with the shipped fragment and Prometheus
// with the rules, both scaled, scraping target; they stop with the test.
func startPaging(t *testing.T, target string) *paging {
	t.Helper()
	dir := t.TempDir()
	p, url := startWebhook(t)
	amAddr := startAlertmanager(t, dir, url, timeScale)

	rulesDir := filepath.Join(dir, "rules")
	if err := os.MkdirAll(rulesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "*rules.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no alerts/*rules.yaml: %v", err)
	}
	for _, f := range files {
		if err := scaleRules(f, filepath.Join(rulesDir, filepath.Base(f)), timeScale); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	// One scrape per lifecycle minute, as the promtool replays assume, and
	// the whole of it to answer: a scrape that times out on a busy machine
	// marks every series stale and restarts every for.
	interval := replayTick / 2
	promConfig := fmt.Sprintf(`global:
  scrape_interval: %s
  scrape_timeout: %s
  evaluation_interval: %s
rule_files: [%q]
alerting:
  alertmanagers:
    - static_configs: [{targets: [%q]}]
scrape_configs:
  - job_name: ocl-exporter
    static_configs: [{targets: [%q]}]
`, model.Duration(replayTick), model.Duration(replayTick), model.Duration(interval), filepath.Join(rulesDir, "*.yaml"), amAddr, target)
	writeFile(t, filepath.Join(dir, "prometheus.yml"), []byte(promConfig))
	promAddr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	prom, err := startServer(dir, "prometheus", tools["E2E_PROMETHEUS"], promAddr,
		"--config.file", filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path", filepath.Join(dir, "prometheus"),
		"--web.listen-address", promAddr, "--rules.alert.resend-delay", model.Duration(interval).String())
	if prom != nil {
		t.Cleanup(prom.Stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	p.promURL = "http://" + promAddr
	return p
}

// checkScrapes stops the test when a scrape of the replay failed: a scrape
// that times out (a lifecycle minute on a busy machine) marks every series
// stale and restarts every for:, so the pages would be wrong through no
// fault of the rules.
func (p *paging) checkScrapes(t *testing.T, begin time.Time) {
	t.Helper()
	window := model.Duration(time.Since(begin).Round(time.Second) + time.Second)
	q := fmt.Sprintf(`count_over_time(up{job="ocl-exporter"}[%s]) - sum_over_time(up{job="ocl-exporter"}[%s])`, window, window)
	resp, err := http.Get(p.promURL + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("asking Prometheus for failed scrapes: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("asking Prometheus for failed scrapes: %v", err)
	}
	if len(body.Data.Result) != 1 {
		t.Fatalf("too slow to replay: Prometheus has no scrape of the exporter over the replay (%s)", q)
	}
	if failed, _ := body.Data.Result[0].Value[1].(string); failed != "0" {
		t.Fatalf("too slow to replay: %s of the exporter's scrapes failed or timed out (timeout %s, one lifecycle minute); each marks every series stale and restarts every for:, so the pages would not be the lifecycle's; rerun on a less loaded machine", failed, replayTick)
	}
}

// snapshot is what the receivers were notified of until now.
func (p *paging) snapshot() []notification {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.notifications)
}

// startWebhook records what Alertmanager posts to it; it stops with the
// test.
func startWebhook(t *testing.T) (p *paging, url string) {
	t.Helper()
	p = &paging{}
	hook, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n notification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n.at = time.Now()
		p.mu.Lock()
		p.notifications = append(p.notifications, n)
		p.mu.Unlock()
	})}
	go func() { _ = srv.Serve(hook) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p, "http://" + hook.Addr().String()
}

// rangeSelector is a PromQL range, [1h], in an expression.
var rangeSelector = regexp.MustCompile(`\[(\d+[smhdw])\]`)

// scaleRules copies a rule file with every for and every range of an
// alert's expression (changes(x[1h]) counts an hour of the lifecycle)
// divided by scale, and the alerts that compare with time() left out.
func scaleRules(from, to string, scale time.Duration) error {
	return editRules(from, to, func(_ string, r map[string]any) (bool, error) {
		expr, _ := r["expr"].(string)
		if strings.Contains(expr, "time()") {
			return false, nil
		}
		var rangeErr error
		r["expr"] = rangeSelector.ReplaceAllStringFunc(expr, func(m string) string {
			d, err := model.ParseDuration(m[1 : len(m)-1])
			rangeErr = cmp.Or(rangeErr, err)
			return "[" + model.Duration(time.Duration(d)/scale).String() + "]"
		})
		if rangeErr != nil {
			return false, fmt.Errorf("expr: %w", rangeErr)
		}
		for _, k := range []string{"for", "keep_firing_for"} {
			if s, ok := r[k].(string); ok {
				d, err := model.ParseDuration(s)
				if err != nil {
					return false, fmt.Errorf("%s: %w", k, err)
				}
				r[k] = model.Duration(time.Duration(d) / scale).String()
			}
		}
		return true, nil
	})
}

// checkNotifications waits until every group Alertmanager notified about is
// resolved (an incident's page stops after its fix), then checks the
// count: one group for an incident, none for a healthy lifecycle, and no
// alert paging again once resolved.
func checkNotifications(t *testing.T, l *lifecycle.Lifecycle, p *paging, begin time.Time) {
	t.Helper()
	deadline := time.Now().Add(settle)
	var ns []notification
	for {
		ns = p.snapshot()
		if allResolved(ns) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var log strings.Builder
	groups := map[string]bool{}
	status := map[string]string{} // by alert: what the last notification said
	for _, n := range ns {
		groups[n.GroupKey] = true
		for _, a := range n.Alerts {
			k := seriesKey("ALERTS", a.Labels)
			if status[k] == "resolved" && a.Status == "firing" {
				t.Errorf("%s paged again after it resolved", k)
			}
			status[k] = a.Status
		}
		fmt.Fprintf(&log, "  minute %.1f %s %s %s\n", float64(n.at.Sub(begin))/float64(replayTick), n.Receiver, n.Status, n.GroupKey)
		for _, a := range n.Alerts {
			fmt.Fprintf(&log, "    %s %s\n", a.Status, seriesKey("ALERTS", a.Labels))
			if a.Status != "firing" {
				continue
			}
			if path := runbookPath(a.Annotations["runbook_url"]); path == "" {
				t.Errorf("%s: runbook_url %q is not a runbooks/ file of this repository", a.Labels["alertname"], a.Annotations["runbook_url"])
			} else if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
				t.Errorf("%s: runbook_url names %s: %v", a.Labels["alertname"], path, err)
			}
		}
	}
	t.Logf("%d notification(s) in %d group(s):\n%s", len(ns), len(groups), log.String())
	switch {
	case l.Healthy && len(ns) > 0:
		t.Errorf("a healthy lifecycle notified someone")
	case !l.Healthy && len(groups) != 1:
		t.Errorf("an incident is one notification group, got %d", len(groups))
	case !allResolved(ns):
		t.Errorf("the page did not stop: the last notification of a group is not resolved")
	}
}

// allResolved: the last notification of every group says resolved.
func allResolved(ns []notification) bool {
	last := map[string]string{}
	for _, n := range ns {
		last[n.GroupKey] = n.Status
	}
	for _, s := range last {
		if s != "resolved" {
			return false
		}
	}
	return true
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
