//go:build scale

package scale

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// TestStatusUnderLoad measures the scrape while /status is hammered (issue
// 25): an exporter reading a synthetic snapshot of STATUS_NODES nodes
// (5,000), STATUS_CLIENTS clients (50) asking for /status without pause
// for 20 s, and /metrics timed ten times a second for 20 s before and
// during. With
// taskset the exporter runs on CPU 0, and make bench-status runs this
// process on CPU 1: a pod's CPU is not its clients'. It reports; it
// asserts only that the scrape kept answering.
func TestStatusUnderLoad(t *testing.T) {
	nodes, err := strconv.Atoi(env("STATUS_NODES", "5000"))
	if err != nil {
		t.Fatal(err)
	}
	clients, err := strconv.Atoi(env("STATUS_CLIENTS", "50"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	objs, err := objects(nodes)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "---\n%s", b)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, Ours)
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/ocl_exporter")
	build.Dir, build.Env = repoRoot, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	addr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	name, args := bin, []string{"--snapshot=" + filepath.Join(dir, "cluster.yaml"), "--web.listen-address=" + addr}
	if taskset, err := exec.LookPath("taskset"); err == nil {
		name, args = taskset, append([]string{"-c", "0", bin}, args...)
	}
	p, err := cluster.StartProc(dir, Ours, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	base := "http://" + addr
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if code, _ := get(base + "/readyz"); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 2 minutes; see %s", p.Log)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// As long as the loaded run: a percentile of fewer samples reads lower.
	idle := scrapes(t, base, 20*time.Second)
	var stop atomic.Bool
	var pages, busy atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for !stop.Load() {
				switch code, _ := get(base + "/status"); code {
				case http.StatusOK:
					pages.Add(1)
				default:
					busy.Add(1)
				}
			}
		})
	}
	loaded := scrapes(t, base, 20*time.Second)
	stop.Store(true)
	wg.Wait()
	rss, _, peak, err := memory(p.Cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d nodes, %d clients on /status for 20 s: /metrics idle p50 %v p99 %v; loaded p50 %v p99 %v max %v; /status %d pages, %d turned away; RSS %.0f MiB (peak %.0f)",
		nodes, clients, pct(idle, 0.5), pct(idle, 0.99), pct(loaded, 0.5), pct(loaded, 0.99), loaded[len(loaded)-1], pages.Load(), busy.Load(), rss, peak)
}

// scrapes times /metrics every 100 ms for d, sorted.
func scrapes(t *testing.T, base string, d time.Duration) []time.Duration {
	t.Helper()
	var out []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		start := time.Now()
		if code, err := get(base + "/metrics"); code != http.StatusOK {
			t.Fatalf("/metrics answered %d: %v", code, err)
		}
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out
}

func pct(s []time.Duration, p float64) time.Duration {
	return s[int(float64(len(s)-1)*p)].Round(100 * time.Microsecond)
}

func get(url string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	// The page a browser reads, the largest of the formats.
	req.Header.Set("Accept", "text/html")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer r.Body.Close()
	_, err = io.Copy(io.Discard, r.Body)
	return r.StatusCode, err
}
