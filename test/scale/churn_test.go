//go:build scale

package scale

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// TestChurn measures what each exporter costs an hour in a cluster that
// changes as a real one does (plan: node status every 5 minutes and on
// change, the rollout of a pool 10% at a time, a build every 30 minutes,
// events), both against the same API server at once, scraped every 30 s:
// CPU seconds an hour, resident memory over the hour, and the exporter's
// renders. The hour is played CHURN_SPEEDUP (10) times faster, with the
// exporter's render interval (CHURN_RENDER_INTERVAL, its default 1 s)
// and the scrape interval shortened alike, so
// that every write, scrape and render of the hour happens; what runs on
// wall-clock time alone (the Go runtime's periodic collections, watch
// renewals) is measured over CHURN_IDLE (3 minutes) with nothing
// changing and added for the rest of the hour; the exporter's on a second
// one run at the real render interval, whose ticks the played hour
// already holds. Sizes: CHURN_SIZES
// (2000,10000); CHURN_RESULTS writes the results (make bench-churn);
// CHURN_PROFILE, a directory, the exporter's CPU profile over the hour.
func TestChurn(t *testing.T) {
	bins := servers(t, "bench-churn")
	speedup, err := strconv.ParseFloat(env("CHURN_SPEEDUP", "10"), 64)
	if err != nil || speedup < 1 {
		t.Fatalf("CHURN_SPEEDUP=%q: want a number of at least 1", os.Getenv("CHURN_SPEEDUP"))
	}
	idle, err := time.ParseDuration(env("CHURN_IDLE", "3m"))
	if err != nil {
		t.Fatalf("CHURN_IDLE: %v", err)
	}
	// The exporter's --collector.render-interval in real time.
	interval, err := time.ParseDuration(env("CHURN_RENDER_INTERVAL", "1s"))
	if err != nil || float64(interval)/speedup < float64(100*time.Millisecond) {
		t.Fatalf("CHURN_RENDER_INTERVAL=%q over CHURN_SPEEDUP=%v: want a duration of at least 100 ms once divided", os.Getenv("CHURN_RENDER_INTERVAL"), speedup)
	}
	dir := t.TempDir()
	c, k := startCluster(t, dir, bins["SCALE_ETCD"], bins["SCALE_KUBE_APISERVER"])
	fast := rest.CopyConfig(c.Admin)
	fast.QPS = -1 // the churn's pace is the plan's, not a client's limit
	kf, err := cluster.NewKube(fast)
	if err != nil {
		t.Fatal(err)
	}
	exporterBin, _ := buildStripped(t, dir)
	var results []ChurnResult
	for _, nodes := range sizesFrom(t, "CHURN_SIZES", "2000,10000") {
		objs, err := objects(nodes)
		if err != nil {
			t.Fatal(err)
		}
		if err := createAll(t.Context(), k, objs); err != nil {
			t.Fatal(err)
		}
		names, pools := nodesOf(objs)
		if err := parallel(t.Context(), 32, len(names), func(ctx context.Context, i int) error {
			return apply(ctx, kf, change{verb: "status", apiVersion: "v1", res: "Node", name: names[i], body: kubeletStatus(names[i])})
		}); err != nil {
			t.Fatal(err)
		}
		h := &churnHour{dir: dir, c: c, k: kf, speedup: speedup, idle: idle, nodes: nodes, interval: interval,
			changes: plan(names, pools, time.Now(), fmt.Sprintf("n%d-%s", nodes, strings.ReplaceAll(interval.String(), ".", "")))}
		scaled := time.Duration(float64(interval) / speedup).String()
		rs, err := h.measure(t.Context(), subjects(exporterBin, bins["SCALE_KSM"], append([]string{"--collector.render-interval", scaled}, churnProfileArgs()...)...),
			subjects(exporterBin, "", "--collector.render-interval", interval.String())[0])
		if err != nil {
			t.Fatalf("%d nodes: %v", nodes, err)
		}
		for _, r := range rs {
			t.Logf("%+v", r)
		}
		if late := time.Duration(rs[0].LagSeconds * speedup * float64(time.Second)); late > maxLate {
			t.Fatalf("%d nodes: the writes fell %s of the hour behind their schedule, more than %s: the hour was not played (the run lasted %.0f s, not %.0f): lower CHURN_SPEEDUP or run on a quieter machine",
				nodes, late.Round(time.Second), maxLate, rs[0].RunSeconds, hour.Seconds()/speedup)
		}
		results = append(results, rs...)
	}
	t.Logf("results:\n%s", ChurnTable(results))
	if path := os.Getenv("CHURN_RESULTS"); path != "" {
		// Sizes and render intervals not measured now keep their results:
		// each may be run at its own speed.
		kept, _ := ReadResults[ChurnResult](path)
		kept = slices.DeleteFunc(kept, func(k ChurnResult) bool {
			return slices.ContainsFunc(results, func(r ChurnResult) bool {
				return r.Nodes == k.Nodes && r.RenderIntervalSeconds == k.RenderIntervalSeconds
			})
		})
		kept = append(kept, results...)
		slices.SortStableFunc(kept, func(a, b ChurnResult) int {
			return cmp.Or(a.Nodes-b.Nodes, cmp.Compare(a.RenderIntervalSeconds, b.RenderIntervalSeconds))
		})
		if err := WriteResults(path, kept); err != nil {
			t.Fatal(err)
		}
	}
}

// maxLate is how far behind their schedule the writes may fall, in the
// hour's time, for the run to stand for the hour: a scrape interval.
// Later, the run lasts longer than the hour played and each exporter is
// scraped more often than in an hour.
const maxLate = 30 * time.Second

// sizesFrom reads node counts from $name, def when unset.
func sizesFrom(t *testing.T, name, def string) []int {
	var out []int
	for _, s := range strings.Split(env(name, def), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, n)
	}
	return out
}

// nodesOf is the names of the nodes among objs and their pools (the
// node-role label test/synth gives each).
func nodesOf(objs []*unstructured.Unstructured) ([]string, map[string]string) {
	var names []string
	pools := map[string]string{}
	for _, o := range objs {
		if o.GetKind() != "Node" {
			continue
		}
		names = append(names, o.GetName())
		for l := range o.GetLabels() {
			if p, ok := strings.CutPrefix(l, "node-role.kubernetes.io/"); ok {
				pools[o.GetName()] = p
			}
		}
	}
	return names, pools
}

// kubeletStatus is a node's status as a kubelet of a cloud node writes
// it, about 8 KB with its 40 images: what kube-state-metrics decodes at
// every status update (the exporter watches nodes' metadata only).
func kubeletStatus(node string) []byte {
	var images []any
	for i := range 40 {
		repo := fmt.Sprintf("quay.io/openshift-release-dev/ocp-v4.0-art-dev-%02d", i)
		images = append(images, map[string]any{"names": []string{repo + "@sha256:" + fmt.Sprintf("%064x", i*7919), repo + ":4.21"}, "sizeBytes": 400_000_000 + i})
	}
	resources := map[string]any{"cpu": "4", "memory": "16101096Ki", "pods": "250", "ephemeral-storage": "125293548Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
	return mustJSON(map[string]any{"status": map[string]any{
		"conditions":      nodeConditions(time.Now().UTC().Format(time.RFC3339), true),
		"addresses":       []any{map[string]any{"type": "InternalIP", "address": "10.0.1.1"}, map[string]any{"type": "Hostname", "address": node}, map[string]any{"type": "InternalDNS", "address": node}},
		"capacity":        resources,
		"allocatable":     resources,
		"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": 10250}},
		"nodeInfo": map[string]any{"machineID": "ec2a3b", "systemUUID": "ec2a3b", "bootID": "5f1c", "kernelVersion": "5.14.0-570.el9_6.x86_64",
			"osImage": "Red Hat Enterprise Linux CoreOS 9.6", "containerRuntimeVersion": "cri-o://1.34.1", "kubeletVersion": "v1.34.1",
			"kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"},
		"images": images,
	}})
}

// apply makes one change of the plan.
func apply(ctx context.Context, k *cluster.Kube, ch change) error {
	if ch.res == "Node" {
		var sub []string
		if ch.verb == "status" {
			sub = []string{"status"}
		}
		_, err := k.CS.CoreV1().Nodes().Patch(ctx, ch.name, types.StrategicMergePatchType, ch.body, metav1.PatchOptions{}, sub...)
		return err
	}
	u := &unstructured.Unstructured{}
	if ch.verb == "create" {
		if err := json.Unmarshal(ch.body, &u.Object); err != nil {
			return err
		}
		return k.Create(ctx, u)
	}
	u.SetAPIVersion(ch.apiVersion)
	u.SetKind(ch.res)
	u.SetNamespace(ch.namespace)
	ri, err := k.Resource(u)
	if err != nil {
		return err
	}
	switch ch.verb {
	case "delete":
		background := metav1.DeletePropagationBackground
		return ri.Delete(ctx, ch.name, metav1.DeleteOptions{PropagationPolicy: &background})
	case "status":
		_, err = ri.Patch(ctx, ch.name, types.MergePatchType, ch.body, metav1.PatchOptions{}, "status")
	default:
		_, err = ri.Patch(ctx, ch.name, types.MergePatchType, ch.body, metav1.PatchOptions{})
	}
	return err
}

// churnHour is one size's hour.
type churnHour struct {
	dir     string
	c       *cluster.Cluster
	k       *cluster.Kube
	speedup float64
	idle    time.Duration
	nodes   int
	changes []change
	// interval is the exporter's render interval in real time; it runs
	// with interval / speedup, so that a render gathers the changes of as
	// long a part of the hour as it would in real time.
	interval time.Duration
}

// real is d of the simulated hour on the wall clock.
func (h *churnHour) real(d time.Duration) time.Duration {
	return time.Duration(float64(d) / h.speedup)
}

// running is an exporter under measurement.
type running struct {
	subject
	p   *cluster.Proc
	url string
	r   ChurnResult
	rss []float64
}

// measure starts every subject, measures their idle CPU, then plays the
// hour while scraping them. idle is ocl_exporter at its real render
// interval, run beside them until the idle CPU is measured: the one
// played ticks Speedup times as often, for every second of the hour the
// run leaves out if its idle rate stood for them.
func (h *churnHour) measure(ctx context.Context, subjects []subject, idle subject) ([]ChurnResult, error) {
	var all []*running
	defer func() {
		for _, e := range all {
			e.p.Stop()
		}
	}()
	for _, s := range subjects {
		e, err := h.start(ctx, s, h.dir)
		if err != nil {
			return nil, err
		}
		all = append(all, e)
	}
	idleDir := filepath.Join(h.dir, "idle")
	if err := os.MkdirAll(idleDir, 0o755); err != nil {
		return nil, err
	}
	twin, err := h.start(ctx, idle, idleDir)
	if err != nil {
		return nil, err
	}
	defer twin.p.Stop()
	// Past the start's transients (the first renders' garbage, the
	// scavenger returning the first lists' pages), which a real hour
	// does not repeat.
	time.Sleep(churnSettle)
	if err := h.measureIdle(append(all, twin)); err != nil {
		return nil, err
	}
	twin.p.Stop()
	for _, e := range all {
		if e.name == Ours {
			e.r.IdleCPUPerSecondPlayed, e.r.IdleCPUPerSecond = e.r.IdleCPUPerSecond, twin.r.IdleCPUPerSecond
		}
	}
	if err := h.play(ctx, all); err != nil {
		return nil, err
	}
	var out []ChurnResult
	for _, e := range all {
		out = append(out, e.r)
	}
	return out, nil
}

// start starts s, its log in dir, and waits until it is ready.
func (h *churnHour) start(ctx context.Context, s subject, dir string) (*running, error) {
	addr, err := cluster.FreeAddress()
	if err != nil {
		return nil, err
	}
	p, err := s.start(dir, h.c, addr)
	if err != nil {
		return nil, err
	}
	e := &running{subject: s, p: p, url: "http://" + addr,
		r: ChurnResult{Exporter: s.name, Nodes: h.nodes, Speedup: h.speedup, RenderIntervalSeconds: h.interval.Seconds()}}
	if err := s.ready(ctx, p, e.url, h.nodes); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return e, nil
}

// churnSettle is how long the exporters run after ready before their
// idle CPU is measured.
const churnSettle = time.Minute

// measureIdle is each exporter's CPU time a second while nothing changes
// and nothing scrapes it.
func (h *churnHour) measureIdle(all []*running) error {
	before := make([]time.Duration, len(all))
	for i, e := range all {
		var err error
		if before[i], err = cpuTime(e.p.Cmd.Process.Pid); err != nil {
			return err
		}
	}
	time.Sleep(h.idle)
	for i, e := range all {
		after, err := cpuTime(e.p.Cmd.Process.Pid)
		if err != nil {
			return err
		}
		e.r.IdleCPUPerSecond = (after - before[i]).Seconds() / h.idle.Seconds()
	}
	return nil
}

// play makes the hour's changes on their schedule, scrapes every
// exporter every 30 s and reads its memory every minute of the hour, and
// fills in their results.
func (h *churnHour) play(ctx context.Context, all []*running) error {
	cpu := make([]time.Duration, len(all))
	renders := make([]float64, len(all))
	for i, e := range all {
		var err error
		if cpu[i], err = cpuTime(e.p.Cmd.Process.Pid); err != nil {
			return err
		}
		if e.name == Ours {
			if renders[i], err = rendersOf(ctx, e.url); err != nil {
				return err
			}
		}
	}
	begin := time.Now()
	running, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(all))
	for i, e := range all {
		// Apart by half the interval: their scrapes do not meet.
		wg.Go(func() { errs <- h.observe(running, e, begin.Add(h.real(time.Duration(i)*15*time.Second))) })
		wg.Go(func() { errs <- h.profileHour(ctx, e) })
	}
	lag, err := h.drive(running, begin)
	run := time.Since(begin)
	stop()
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	if err != nil {
		return err
	}
	load := loadAverage()
	for i, e := range all {
		end, err := cpuTime(e.p.Cmd.Process.Pid)
		if err != nil {
			return err
		}
		r := &e.r
		r.Changes, r.RunSeconds, r.LagSeconds, r.LoadAverage = len(h.changes), run.Seconds(), lag.Seconds(), load
		r.RunCPUSeconds = (end - cpu[i]).Seconds()
		// The run is the hour's changes, scrapes and renders; the rest of a
		// real hour is idle.
		r.CPUSecondsPerHour = r.RunCPUSeconds + r.IdleCPUPerSecond*(hour.Seconds()-run.Seconds())
		r.RSSMedianMiB, r.RSSMaxMiB = median(e.rss), slices.Max(e.rss)
		if e.name == Ours {
			n, err := rendersOf(ctx, e.url)
			if err != nil {
				return err
			}
			r.RendersPerHour = n - renders[i]
		}
	}
	return nil
}

// drive makes the changes on time with parallel writers, and returns how
// far behind their schedule they fell at most.
func (h *churnHour) drive(ctx context.Context, begin time.Time) (time.Duration, error) {
	work := make(chan change, 256)
	var lag time.Duration
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range 48 {
		wg.Go(func() {
			for ch := range work {
				due := begin.Add(h.real(ch.at))
				err := apply(ctx, h.k, ch)
				mu.Lock()
				lag = max(lag, time.Since(due))
				if err != nil && first == nil {
					first = fmt.Errorf("%s %s %s: %w", ch.verb, ch.res, ch.name, err)
				}
				mu.Unlock()
			}
		})
	}
	for _, ch := range h.changes {
		time.Sleep(time.Until(begin.Add(h.real(ch.at))))
		work <- ch
	}
	time.Sleep(time.Until(begin.Add(h.real(hour))))
	close(work)
	wg.Wait()
	return lag, first
}

// observe scrapes e from at every 30 s of the hour and reads its RSS every
// minute, until ctx ends.
func (h *churnHour) observe(ctx context.Context, e *running, at time.Time) error {
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(at.Add(h.real(time.Duration(i) * 30 * time.Second)))):
		}
		if _, err := scrape(ctx, http.DefaultClient, e.url+"/metrics", true); err != nil && ctx.Err() == nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		e.r.Scrapes++
		if i%2 == 0 {
			rss, _, _, err := memory(e.p.Cmd.Process.Pid)
			if err != nil {
				return err
			}
			e.rss = append(e.rss, rss)
		}
	}
}

// rendersOf is ocl_exporter_renders_total at url.
func rendersOf(ctx context.Context, url string) (float64, error) {
	families, err := cluster.Scrape(ctx, url)
	if err != nil {
		return 0, fmt.Errorf("reading the renders: %w", err)
	}
	f := families["ocl_exporter_renders_total"]
	if f == nil || len(f.GetMetric()) != 1 {
		return 0, fmt.Errorf("reading the renders: %s/metrics has no ocl_exporter_renders_total", url)
	}
	return f.GetMetric()[0].GetCounter().GetValue(), nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}
