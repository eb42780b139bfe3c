//go:build fleet

// Package fleet runs the bundle the way a user with many clusters does:
// two exporters on two different snapshots stand for two clusters, each
// scraped by its own Prometheus (external_labels {cluster: ...}, the rules
// of alerts/) with a Thanos sidecar, and one Thanos Query federating both
// sidecars over gRPC. `make e2e-fleet` builds Thanos and runs it; see
// CONTRIBUTING.md, "Integration tests".
package fleet

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

const repoRoot = "../.."

// member is one cluster of the fleet: its exporter, Prometheus and sidecar.
type member struct {
	name     string
	snapshot string // relative to the repository root
	promURL  string
	grpcAddr string // the sidecar's Store API
	procs    []*cluster.Proc
}

// fleet is what every test shares. The two snapshots share the pool names
// master and worker with different machines, so an answer that mixes the
// clusters differs from either cluster's own.
var fleet = struct {
	dir      string
	members  []*member
	queryURL string
	query    *cluster.Proc
}{
	members: []*member{
		{name: "a", snapshot: "examples/snapshot"},
		{name: "b", snapshot: "testdata/scenarios/stage3-rollout-in-progress"},
	},
}

var tools = map[string]string{}

func TestMain(m *testing.M) {
	code, err := setUpAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		code = 1
	}
	os.Exit(code)
}

func setUpAndRun(m *testing.M) (code int, err error) {
	for _, name := range []string{"E2E_THANOS", "E2E_PROMETHEUS"} {
		tools[name] = os.Getenv(name)
		if _, err := os.Stat(tools[name]); err != nil {
			return 1, fmt.Errorf("$%s=%q: %w; run the suite with make e2e-fleet, which builds and sets it", name, tools[name], err)
		}
	}
	if fleet.dir, err = os.MkdirTemp("", "ocl-exporter-fleet-"); err != nil {
		return 1, err
	}
	defer func() {
		if code == 0 && err == nil {
			os.RemoveAll(fleet.dir)
		} else {
			fmt.Fprintf(os.Stderr, "fleet: server logs and configuration kept in %s\n", fleet.dir)
		}
	}()
	defer stopAll()
	begin := time.Now()
	bin := filepath.Join(fleet.dir, "ocl_exporter")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ocl_exporter")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("go build ./cmd/ocl_exporter: %w\n%s", err, out)
	}
	rules, err := filepath.Abs(filepath.Join(repoRoot, "alerts"))
	if err != nil {
		return 1, err
	}
	for _, c := range fleet.members {
		if err := c.start(bin, filepath.Join(rules, "*rules.yaml")); err != nil {
			return 1, fmt.Errorf("cluster %s: %w", c.name, err)
		}
	}
	if err := startQuery(); err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "fleet: %d clusters behind Thanos Query at %s in %s\n", len(fleet.members), fleet.queryURL, time.Since(begin).Round(time.Second))
	return m.Run(), nil
}

func stopAll() {
	if fleet.query != nil {
		fleet.query.Stop()
	}
	for _, c := range fleet.members {
		for i := len(c.procs) - 1; i >= 0; i-- {
			c.procs[i].Stop()
		}
	}
}

// start runs the cluster's exporter on its snapshot, a Prometheus scraping
// it every second with the bundle's rules, and a Thanos sidecar in front
// of that Prometheus: what a cluster of the fleet runs.
func (c *member) start(bin, rules string) error {
	dir := filepath.Join(fleet.dir, c.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	addrs, err := cluster.FreePorts(4)
	if err != nil {
		return err
	}
	exporterAddr, promAddr, grpcAddr, sidecarHTTP := "127.0.0.1:"+addrs[0], "127.0.0.1:"+addrs[1], "127.0.0.1:"+addrs[2], "127.0.0.1:"+addrs[3]

	exporter, err := cluster.StartProc(dir, "ocl_exporter", bin,
		"--snapshot", filepath.Join(repoRoot, c.snapshot), "--web.listen-address", exporterAddr)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, exporter)
	if err := cluster.WaitHTTP(exporter, http.DefaultClient, "http://"+exporterAddr+"/readyz", "", time.Minute); err != nil {
		return err
	}

	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
  external_labels:
    cluster: %q
rule_files: [%q]
scrape_configs:
  - job_name: ocl-exporter
    static_configs: [{targets: [%q]}]
`, c.name, rules, exporterAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		return err
	}
	// The sidecar wants local compaction off (equal block durations) and
	// reads the external labels from the running configuration.
	tsdb := filepath.Join(dir, "prometheus")
	prom, err := cluster.StartProc(dir, "prometheus", tools["E2E_PROMETHEUS"],
		"--config.file", filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path", tsdb,
		"--storage.tsdb.min-block-duration", "2h", "--storage.tsdb.max-block-duration", "2h",
		"--web.enable-lifecycle", "--web.listen-address", promAddr)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, prom)
	c.promURL = "http://" + promAddr
	if err := cluster.WaitHTTP(prom, http.DefaultClient, c.promURL+"/-/ready", "", time.Minute); err != nil {
		return err
	}

	sidecar, err := cluster.StartProc(dir, "thanos-sidecar", tools["E2E_THANOS"], "sidecar",
		"--tsdb.path", tsdb, "--prometheus.url", c.promURL,
		"--grpc-address", grpcAddr, "--http-address", sidecarHTTP)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, sidecar)
	c.grpcAddr = grpcAddr
	return cluster.WaitHTTP(sidecar, http.DefaultClient, "http://"+sidecarHTTP+"/-/ready", "", time.Minute)
}

// startQuery runs Thanos Query over every sidecar and waits until it
// answers with the series of every cluster.
func startQuery() error {
	addrs, err := cluster.FreePorts(2)
	if err != nil {
		return err
	}
	var endpoints strings.Builder
	endpoints.WriteString("endpoints:\n")
	for _, c := range fleet.members {
		endpoints.WriteString("  - address: " + c.grpcAddr + "\n")
	}
	fleet.query, err = cluster.StartProc(fleet.dir, "thanos-query", tools["E2E_THANOS"], "query",
		"--http-address", "127.0.0.1:"+addrs[0], "--grpc-address", "127.0.0.1:"+addrs[1], "--endpoint.sd-config", endpoints.String())
	if err != nil {
		return err
	}
	fleet.queryURL = "http://127.0.0.1:" + addrs[0]
	if err := cluster.WaitHTTP(fleet.query, http.DefaultClient, fleet.queryURL+"/-/ready", "", time.Minute); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var last string
	for {
		got, err := instant(ctx, fleet.queryURL, "count by (cluster) (ocl_exporter_build_info)", time.Now())
		if err == nil && len(got) == len(fleet.members) {
			return nil
		}
		last = fmt.Sprint(got, err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("thanos query did not see every cluster within 2m (last: %s):\n%s", last, fleet.query.Tail(30))
		case <-time.After(time.Second):
		}
	}
}

func names() string {
	var out []string
	for _, c := range fleet.members {
		out = append(out, c.name)
	}
	return strings.Join(out, ", ")
}
