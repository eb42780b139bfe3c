//go:build scale

package scale

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	"github.com/ocl-exporter/ocl_exporter/test/synth"
)

const repoRoot = "../.."

// subject is an exporter under measurement: how to start it against the
// cluster and when its view of the cluster is complete.
type subject struct {
	name string
	// floor is set for the exporter scraped beside the floor server.
	floor bool
	// agent is the start of the user agent it sends the API server.
	agent string
	start func(dir string, c *cluster.Cluster, addr string) (*cluster.Proc, error)
	// ready returns once the exporter at url serves every object of a
	// cluster with that many nodes.
	ready func(ctx context.Context, p *cluster.Proc, url string, nodes int) error
}

// nodeAnnotations are the MCO's node annotations the exporter reads,
// offered to kube-state-metrics' kube_node_annotations.
var nodeAnnotations = []string{
	analysis.NodeAnnotationCurrentConfig, analysis.NodeAnnotationDesiredConfig, analysis.NodeAnnotationState,
	analysis.NodeAnnotationReason, analysis.NodeAnnotationCurrentImage, analysis.NodeAnnotationDesiredImage,
}

// subjects are the exporter, run with exporterArgs too, and
// kube-state-metrics.
func subjects(exporterBin, ksmBin string, exporterArgs ...string) []subject {
	return []subject{{
		name:  Ours,
		floor: true,
		agent: "ocl_exporter/",
		start: func(dir string, c *cluster.Cluster, addr string) (*cluster.Proc, error) {
			return cluster.StartProc(dir, Ours, exporterBin, append([]string{"--kubeconfig", c.AdminKubeconfig, "--web.listen-address", addr}, exporterArgs...)...)
		},
		ready: func(ctx context.Context, p *cluster.Proc, url string, nodes int) error {
			if err := cluster.WaitHTTP(p, http.DefaultClient, url+"/readyz", "", 5*time.Minute); err != nil {
				return err
			}
			return complete(ctx, p, url, map[string]int{"node_update_phase{": nodes})
		},
	}, {
		name:  KSM,
		agent: "kube-state-metrics",
		start: func(dir string, c *cluster.Cluster, addr string) (*cluster.Proc, error) {
			host, port, _ := strings.Cut(addr, ":")
			telemetry, err := cluster.FreePorts(1)
			if err != nil {
				return nil, err
			}
			return cluster.StartProc(dir, KSM, ksmBin, "--kubeconfig", c.AdminKubeconfig,
				"--host", host, "--port", port, "--telemetry-host", host, "--telemetry-port", telemetry[0],
				"--enable-gzip-encoding", "--resources", "nodes", "--metric-annotations-allowlist", "nodes=["+strings.Join(nodeAnnotations, ",")+"]",
				"--custom-resource-state-config-file", filepath.Join(repoRoot, "hack/kube-state-metrics/crs.yaml"))
		},
		ready: func(ctx context.Context, p *cluster.Proc, url string, nodes int) error {
			return complete(ctx, p, url, map[string]int{
				"kube_node_annotations{":     nodes,
				"ocl_mcn_status_condition{":  7 * nodes,
				"ocl_mosb_status_condition{": 5 * synth.Target.Builds,
			})
		},
	}}
}

// complete polls url's metrics until each prefix starts want lines.
func complete(ctx context.Context, p *cluster.Proc, url string, want map[string]int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for {
		body, err := scrape(ctx, http.DefaultClient, url+"/metrics", false)
		got := map[string]int{}
		done := err == nil
		for prefix, n := range want {
			got[prefix] = countLines(body, prefix)
			done = done && got[prefix] == n
		}
		if done {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("%s exited:\n%s", p.Name, p.Tail(40))
		case <-ctx.Done():
			return fmt.Errorf("%s incomplete after 5 minutes: have %v, want %v (last error: %s)", p.Name, got, want, fmt.Sprint(err))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// servers are the binaries the scale runs start, from $SCALE_ETCD,
// $SCALE_KUBE_APISERVER and $SCALE_KSM, which make target sets.
func servers(t *testing.T, target string) map[string]string {
	t.Helper()
	bins := map[string]string{}
	for _, name := range []string{"SCALE_ETCD", "SCALE_KUBE_APISERVER", "SCALE_KSM"} {
		bins[name] = os.Getenv(name)
		if _, err := os.Stat(bins[name]); err != nil {
			t.Fatalf("$%s=%q: %v; run make %s, which builds and sets it", name, bins[name], err, target)
		}
	}
	return bins
}

// env is $name, or def when it is unset or empty.
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func TestScale(t *testing.T) {
	bins := servers(t, "bench-scale")
	nodeCounts := sizesFrom(t, "SCALE_SIZES", "100,500,2000")
	scrapes, err := strconv.Atoi(env("SCALE_SCRAPES", "200"))
	if err != nil {
		t.Fatalf("SCALE_SCRAPES: %v", err)
	}

	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(filepath.Join(dir, "audit-policy.yaml"), []byte(auditPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	c, k := startCluster(t, dir, bins["SCALE_ETCD"], bins["SCALE_KUBE_APISERVER"],
		"--audit-policy-file", filepath.Join(dir, "audit-policy.yaml"), "--audit-log-path", audit)
	exporterBin, binBytes := buildStripped(t, dir)
	if binBytes > maxBinaryBytes {
		t.Errorf("the stripped binary is %.1f MB, over %.0f MB: what does it link that it did not? (go tool nm -size -sort size on an unstripped build)",
			float64(binBytes)/1e6, float64(maxBinaryBytes)/1e6)
	}

	var results []Result
	for _, nodes := range nodeCounts {
		objs, err := objects(nodes)
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		if err := createAll(t.Context(), k, objs); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d nodes: %d objects in the API server after %s", nodes, len(objs), time.Since(begin).Round(time.Second))
		for _, s := range subjects(exporterBin, bins["SCALE_KSM"]) {
			rs, err := measure(t.Context(), dir, c, audit, s, nodes, scrapes)
			if err != nil {
				t.Fatalf("%s at %d nodes: %v", s.name, nodes, err)
			}
			r := &rs[0]
			r.Objects = len(objs)
			if s.name == Ours {
				r.BinaryBytes = binBytes
			}
			for _, r := range rs {
				t.Logf("%+v", r)
			}
			results = append(results, rs...)
			if r.StartupRequests == 0 {
				t.Errorf("%s at %d nodes: no request from user agent %q in the audit log: the filter is wrong", s.name, nodes, s.agent)
			}
			if r.ScrapeRequests != 0 {
				t.Errorf("%s at %d nodes: %d API requests during %d scrapes, want 0", s.name, nodes, r.ScrapeRequests, scrapes)
			}
		}
	}
	t.Logf("results:\n%s", Table(results))
	if path := os.Getenv("SCALE_RESULTS"); path != "" {
		if err := WriteResults(path, results); err != nil {
			t.Fatal(err)
		}
	}
}

// buildStripped builds the exporter into dir as make build and the image
// build it, stripped, and returns its path and size.
func buildStripped(t *testing.T, dir string) (string, int64) {
	t.Helper()
	bin := filepath.Join(dir, Ours)
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/ocl_exporter")
	build.Dir, build.Env = repoRoot, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	return bin, st.Size()
}

// maxBinaryBytes bounds the stripped binary: 26 MB once it linked only the
// API groups it reads, 75 MB with the generated clientsets
// (cmd/ocl_exporter's TestBinaryLinksOnlyWhatItUses names the packages).
const maxBinaryBytes = 40e6

// settle is how long an exporter runs after it is ready before its memory
// is read: past its first renders and the garbage collections they cause.
const settle = 5 * time.Second

// measure starts s, waits until it is ready, lets it settle, then scrapes
// it n times back to back, in turn with the floor server serving its
// bytes when s.floor: its result, then the floor's.
func measure(ctx context.Context, dir string, c *cluster.Cluster, audit string, s subject, nodes, n int) ([]Result, error) {
	r := Result{Exporter: s.name, Nodes: nodes}
	addr, err := cluster.FreeAddress()
	if err != nil {
		return nil, err
	}
	url := "http://" + addr
	begin := time.Now()
	p, err := s.start(dir, c, addr)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	if err := s.ready(ctx, p, url, nodes); err != nil {
		return nil, err
	}
	ready := time.Now()
	r.ReadySeconds = ready.Sub(begin).Seconds()
	time.Sleep(settle)
	pid := p.Cmd.Process.Pid
	if r.RSSMiB, r.AnonMiB, _, err = memory(pid); err != nil {
		return nil, err
	}

	text, err := scrape(ctx, http.DefaultClient, url+"/metrics", false)
	if err != nil {
		return nil, err
	}
	r.TextBytes = len(text)
	for l := range strings.Lines(string(text)) {
		if !strings.HasPrefix(l, "#") {
			r.Series++
		}
	}
	targets := []*target{{url: url, pid: pid}}
	if s.floor {
		body, err := scrape(ctx, http.DefaultClient, url+"/metrics", true)
		if err != nil {
			return nil, err
		}
		floor, floorURL, err := startFloor(dir, body)
		if err != nil {
			return nil, err
		}
		defer floor.Stop()
		targets = append(targets, &target{url: floorURL, pid: floor.Cmd.Process.Pid})
	}
	from := time.Now()
	if err := scrapeRounds(ctx, targets, n); err != nil {
		return nil, err
	}
	to := time.Now()
	load := loadAverage()
	if _, _, r.PeakRSSMiB, err = memory(pid); err != nil {
		return nil, err
	}
	targets[0].record(&r)
	r.LoadAverage = load

	// The audit log is written before each response: every request
	// received until now is in it.
	if r.StartupRequests, err = requests(audit, s.agent, begin, ready); err != nil {
		return nil, err
	}
	if r.ScrapeRequests, err = requests(audit, s.agent, from, to); err != nil {
		return nil, err
	}
	rs := []Result{r}
	if s.floor {
		f := Result{Exporter: Floor, Nodes: nodes, LoadAverage: load}
		targets[1].record(&f)
		rs = append(rs, f)
	}
	return rs, nil
}

// startCluster starts etcd and a kube-apiserver in dir, stopped when the
// test ends, and installs the CRDs.
func startCluster(t *testing.T, dir, etcd, apiserver string, args ...string) (*cluster.Cluster, *cluster.Kube) {
	t.Helper()
	c, err := cluster.Start(dir, etcd, apiserver, args...)
	t.Cleanup(func() {
		if c != nil {
			c.Stop()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	k, err := cluster.NewKube(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.InstallCRDs(t.Context(), repoRoot); err != nil {
		t.Fatal(err)
	}
	return c, k
}
