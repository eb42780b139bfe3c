package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	dto "github.com/prometheus/client_model/go"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startExporter runs the binary's run() on a free loopback port and waits
// until /readyz answers 200.
func startExporter(t *testing.T, args ...string) string {
	t.Helper()
	return startExporterOver(t, "http", http.DefaultClient, args...)
}

// startExporterOver is startExporter for a scheme (https: the web config
// enables TLS) and the client that speaks it.
func startExporterOver(t *testing.T, scheme string, client *http.Client, args ...string) string {
	t.Helper()
	return startExporterLogging(t, scheme, client, io.Discard, args...)
}

// startExporterLogging is startExporterOver with the exporter's log
// (warnings and errors) written to log.
func startExporterLogging(t *testing.T, scheme string, client *http.Client, log io.Writer, args ...string) string {
	t.Helper()
	addr := freeAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, append(args, "--web.listen-address="+addr, "--log.level=warn"), log)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	base := scheme + "://" + addr
	wait.For(t, 30*time.Second, "the exporter's /readyz to answer 200", func() error {
		select {
		case err := <-errc:
			errc <- err // for the cleanup, which waits for it
			t.Fatalf("exporter exited: %v", err)
		default:
		}
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	})
	return base
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	return getAccepting(t, url, "")
}

// getAccepting is get with an Accept header ("" for none).
func getAccepting(t *testing.T, url, accept string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return families
}

func TestServesTheExampleSnapshot(t *testing.T) {
	base := startExporter(t, "--example")
	families := scrape(t, base)

	if mf := families["ocl_exporter_build_info"]; mf == nil || mf.Metric[0].GetGauge().GetValue() != 1 {
		t.Errorf("ocl_exporter_build_info missing or not 1: %v", mf)
	}
	available := map[string]float64{}
	for _, m := range families["ocl_exporter_resource_available"].GetMetric() {
		available[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	for _, r := range snapshot.Resources() {
		if v, ok := available[r.Name]; !ok || v != 1 {
			t.Errorf("ocl_exporter_resource_available{resource=%q} = %v, %v; want 1", r.Name, v, ok)
		}
	}
	for _, path := range []string{"/", "/healthz", "/readyz"} {
		if code, body := get(t, base+path); code != http.StatusOK {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
}

func TestFullScrapeIsPromlintClean(t *testing.T) {
	base := startExporter(t, "--example")
	_, body := get(t, base+"/metrics")
	problems, err := promlint.New(bytes.NewBufferString(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

func TestConfigurationErrorsFailFast(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Node\nmetadata: {name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "web-fifo.yml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge-web.yml")
	if err := os.WriteFile(huge, bytes.Repeat([]byte("# padding\n"), 200000), 0o600); err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(webConfig, []byte("tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: /nonexistent.key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"malformed snapshot", []string{"--snapshot=" + bad}, "bad.yaml: document 1: not valid YAML or JSON"},
		{"missing snapshot", []string{"--snapshot=" + filepath.Join(dir, "nope")}, "reading snapshot"},
		{"bad web config", []string{"--example", "--web.config.file=" + webConfig}, "--web.config.file"},
		{"missing kubeconfig", []string{"--kubeconfig=" + filepath.Join(dir, "nope")}, "--kubeconfig: open " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"web config that never ends", []string{"--example", "--web.config.file=/dev/zero"}, "--web.config.file: open /dev/zero: a character device, not a regular file"},
		{"web config FIFO", []string{"--example", "--web.config.file=" + fifo}, "a FIFO, not a regular file"},
		{"web config too large", []string{"--example", "--web.config.file=" + huge}, "more than the 1048576 it may hold"},
		{"malformed kubeconfig", []string{"--kubeconfig=" + bad}, "loading --kubeconfig"},
		{"exclusive sources", []string{"--example", "--snapshot=" + dir}, "exclusive"},
		{"unknown flag", []string{"--no-such-flag"}, "unknown long flag"},
		{"kubernetes auth offline (example)", []string{"--example", "--auth.kubernetes"}, "offline mode"},
		{"kubernetes auth offline (snapshot)", []string{"--snapshot=" + dir, "--auth.kubernetes"}, "offline mode"},
		{"kubernetes auth cache TTL", []string{"--example", "--auth.kubernetes.cache-ttl=0s"}, "cache-ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := run(ctx, append(tc.args, "--web.listen-address="+freeAddress(t)), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%v) = %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestDeploymentArgsParse runs the deploy bundle's container arguments
// through the real flag parser, so a renamed flag breaks the test, not the
// rollout.
func TestDeploymentArgsParse(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "base", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(b, &d); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags(d.Spec.Template.Spec.Containers[0].Args, io.Discard)
	if err != nil {
		t.Fatalf("the Deployment's args: %v", err)
	}
	if !o.authKubernetes || *o.web.WebConfigFile == "" || o.example || o.snapshot != "" {
		t.Errorf("the Deployment must watch the cluster with --auth.kubernetes and a --web.config.file: %+v", o)
	}
}

// TestPprofOnlyWhenEnabled: the profiles, and the landing page's links to
// them, only with --web.enable-pprof.
func TestPprofOnlyWhenEnabled(t *testing.T) {
	off := startExporter(t, "--example")
	if code, _ := get(t, off+"/debug/pprof/heap"); code != http.StatusNotFound {
		t.Errorf("pprof off: /debug/pprof/heap answered %d, want 404", code)
	}
	if _, body := get(t, off+"/"); strings.Contains(body, "debug/pprof") {
		t.Errorf("pprof off: the landing page links the profiles, which answer 404:\n%s", body)
	}
	base := startExporter(t, "--example", "--web.enable-pprof")
	if _, body := get(t, base+"/"); !strings.Contains(body, `href="/debug/pprof/heap"`) {
		t.Errorf("pprof on: the landing page does not link the heap profile:\n%s", body)
	}
	if code, body := get(t, base+"/debug/pprof/heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile") {
		t.Errorf("pprof on: /debug/pprof/heap answered %d %.80q", code, body)
	}
	if code, _ := get(t, base+"/metrics"); code != http.StatusOK {
		t.Errorf("pprof on: /metrics answered %d", code)
	}
}
