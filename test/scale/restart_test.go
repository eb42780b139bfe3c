//go:build scale

package scale

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// TestRestart measures what a restarted exporter costs Prometheus: the
// exporter runs against a synthetic cluster of each of RESTART_SIZES
// (2000,10000) nodes, is stopped as the kubelet stops an evicted pod
// (SIGTERM) and a new process started, RESTART_ROUNDS (5) times. For each
// restart: how long the old process took to exit, and from the new one's
// start, when /readyz first answered 200 and when a scrape first held
// every series the previous process served (the exporter's own
// ocl_exporter_* series aside), which is when the first scrape Prometheus
// makes of the new pod is whole. The machine's load average is logged
// beside each size: the times are wall clock.
func TestRestart(t *testing.T) {
	var sizes []int
	for _, s := range strings.Split(env("RESTART_SIZES", "2000,10000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("RESTART_SIZES: %v", err)
		}
		sizes = append(sizes, n)
	}
	rounds, err := strconv.Atoi(env("RESTART_ROUNDS", "5"))
	if err != nil || rounds < 1 {
		t.Fatalf("RESTART_ROUNDS: want a positive number: %v", err)
	}
	dir := t.TempDir()
	c, k := startCluster(t, dir, os.Getenv("SCALE_ETCD"), os.Getenv("SCALE_KUBE_APISERVER"))
	bin, _ := buildStripped(t, dir)
	for _, nodes := range sizes {
		objs, err := objects(nodes)
		if err != nil {
			t.Fatal(err)
		}
		if err := createAll(t.Context(), k, objs); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d nodes (%d objects), load average before: %s", nodes, len(objs), loadAverages())
		var rs []restart
		p, want, err := startUntilComplete(t.Context(), dir, c, bin, nodes)
		if err != nil {
			t.Fatalf("%d nodes, first start: %v", nodes, err)
		}
		for i := range rounds {
			begin := time.Now()
			p.Stop()
			stopped := time.Since(begin)
			var r restart
			if p, r, err = restartOnce(t.Context(), dir, c, bin, want); err != nil {
				t.Fatalf("%d nodes, restart %d: %v", nodes, i+1, err)
			}
			r.stop = stopped
			t.Logf("%d nodes, restart %d: stop %s, first answer %s (%d of %d series), ready %s, first complete scrape %s",
				nodes, i+1, ms(r.stop), ms(r.answered), r.answeredSeries, len(want), ms(r.ready), ms(r.complete))
			rs = append(rs, r)
		}
		p.Stop()
		t.Logf("%d nodes, %d restarts, min / median / max: stop %s, ready %s, first complete scrape %s; load average after: %s",
			nodes, rounds, spread(rs, func(r restart) time.Duration { return r.stop }),
			spread(rs, func(r restart) time.Duration { return r.ready }),
			spread(rs, func(r restart) time.Duration { return r.complete }), loadAverages())
	}
}

// restart is one restart's times: the old process's exit after SIGTERM,
// and from the new process's start, its first answer to a scrape (and how
// many of the series it held), /readyz answering 200 and the first
// complete scrape.
type restart struct {
	stop, answered, ready, complete time.Duration
	answeredSeries                  int
}

// restartOnce starts the exporter and measures its ready and complete
// times, complete meaning a scrape holding want.
func restartOnce(ctx context.Context, dir string, c *cluster.Cluster, bin string, want []string) (*cluster.Proc, restart, error) {
	var r restart
	addr, err := cluster.FreeAddress()
	if err != nil {
		return nil, r, err
	}
	url := "http://" + addr
	begin := time.Now()
	p, err := cluster.StartProc(dir, Ours, bin, "--kubeconfig", c.AdminKubeconfig, "--web.listen-address", addr)
	if err != nil {
		return nil, r, err
	}
	// /readyz every 20 ms and /metrics every 50 ms: both cost nothing
	// until the exporter is ready (/metrics answers 503), so the first
	// complete scrape is known to 50 ms and a scrape's own time.
	ready := make(chan time.Duration, 1)
	go func() {
		for p.Running() {
			if code, err := status(ctx, url+"/readyz"); err == nil && code == http.StatusOK {
				ready <- time.Since(begin)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	deadline := time.Now().Add(5 * time.Minute)
	for r.complete == 0 {
		body, err := scrape(ctx, http.DefaultClient, url+"/metrics", false)
		last := ""
		if err != nil {
			last = err.Error()
		} else {
			got := clusterLines(body)
			if r.answered == 0 {
				r.answered, r.answeredSeries = time.Since(begin), len(got)
			}
			if slices.Equal(got, want) {
				r.complete = time.Since(begin)
				break
			}
			last = fmt.Sprintf("%d of %d series", len(got), len(want))
		}
		if !p.Running() || time.Now().After(deadline) {
			p.Stop()
			return nil, r, fmt.Errorf("no complete scrape within 5 minutes (last: %s):\n%s", last, p.Tail(20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case r.ready = <-ready:
	case <-time.After(time.Minute):
		p.Stop()
		return nil, r, fmt.Errorf("a complete scrape but /readyz not 200 a minute later:\n%s", p.Tail(20))
	}
	return p, r, nil
}

// startUntilComplete starts the exporter for the first time at this size
// and returns, once it serves every node, what it serves: the reference
// for the restarts.
func startUntilComplete(ctx context.Context, dir string, c *cluster.Cluster, bin string, nodes int) (*cluster.Proc, []string, error) {
	addr, err := cluster.FreeAddress()
	if err != nil {
		return nil, nil, err
	}
	url := "http://" + addr
	p, err := cluster.StartProc(dir, Ours, bin, "--kubeconfig", c.AdminKubeconfig, "--web.listen-address", addr)
	if err != nil {
		return nil, nil, err
	}
	if err := cluster.WaitHTTP(p, http.DefaultClient, url+"/readyz", "", 5*time.Minute); err != nil {
		return nil, nil, err
	}
	if err := complete(ctx, p, url, map[string]int{"node_update_phase{": nodes}); err != nil {
		p.Stop()
		return nil, nil, err
	}
	body, err := scrape(ctx, http.DefaultClient, url+"/metrics", false)
	if err != nil {
		p.Stop()
		return nil, nil, err
	}
	return p, clusterLines(body), nil
}

// clusterLines are the sorted series (name and labels) of the exporter's
// families about the cluster: not its own ocl_exporter_* series, which
// count requests and differ from one process to the next.
func clusterLines(body []byte) []string {
	var out []string
	for l := range strings.Lines(string(body)) {
		name, _, _ := strings.Cut(l, "{")
		name, _, _ = strings.Cut(name, " ")
		if cluster.OwnFamily(name) && !strings.HasPrefix(name, "ocl_exporter_") {
			series := strings.TrimSpace(l)
			out = append(out, series[:strings.LastIndexByte(series, ' ')])
		}
	}
	slices.Sort(out)
	return out
}

// status is the status code of a GET.
func status(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// spread is "min / median / max" of what of each restart.
func spread(rs []restart, what func(restart) time.Duration) string {
	d := make([]time.Duration, len(rs))
	for i, r := range rs {
		d[i] = what(r)
	}
	slices.Sort(d)
	return fmt.Sprintf("%s / %s / %s", ms(d[0]), ms(d[len(d)/2]), ms(d[len(d)-1]))
}

func ms(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }

// loadAverages is /proc/loadavg's 1, 5 and 15 minute averages.
func loadAverages() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
