//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// diagnoseAt is far after every fixture's and every live timestamp, so
// that waits that depend on creationTimestamp (set by the API server when
// the test creates an object) are decided the same way live and offline.
const diagnoseAt = "--time=2100-01-01T00:00:00Z"

// runBinary runs the exporter binary with args and returns its standard
// output and exit status.
func runBinary(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), env.exporterBin, append(args, "--log.level=warn")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v\n%s", env.exporterBin, args, err, stderr.String())
	}
	return stdout.String(), 0
}

// diagnoseLive checks, on a played fixture, that diagnose reads the live
// cluster (as the exporter's ServiceAccount) as it reads the fixture's
// files, that a capture of the cluster reads back as the cluster itself,
// and that the exporter serves the capture's metrics as the live ones.
func diagnoseLive(t *testing.T, dir string) {
	t.Helper()
	kubeconfig := "--kubeconfig=" + env.cluster.ExporterKubeconfig
	live, liveCode := runBinary(t, "diagnose", kubeconfig, "-o", "json", diagnoseAt)
	files, filesCode := runBinary(t, "diagnose", "--snapshot="+whole(t, dir), "-o", "json", diagnoseAt)
	if liveCode != filesCode {
		t.Errorf("diagnose exits %d live, %d on the files", liveCode, filesCode)
	}
	t.Logf("diagnose live: exit status %d, %d bytes of JSON", liveCode, len(live))
	// "since" of objects the test created is the API server's
	// creationTimestamp, not the fixture's.
	if d := cmp.Diff(withoutSince(t, files), withoutSince(t, live)); d != "" {
		t.Errorf("diagnose live differs from diagnose of the files (-files +live):\n%s", d)
	}

	capture := filepath.Join(t.TempDir(), "capture") + "/"
	if out, code := runBinary(t, "capture", kubeconfig, "--output="+capture); code != 0 {
		t.Fatalf("capture exits %d: %s", code, out)
	}
	captured, capturedCode := runBinary(t, "diagnose", "--snapshot="+capture, "-o", "json", diagnoseAt)
	if capturedCode != liveCode {
		t.Errorf("diagnose exits %d on the capture, %d live", capturedCode, liveCode)
	}
	if d := cmp.Diff(live, captured); d != "" {
		t.Errorf("diagnose of the capture differs from diagnose live (-live +capture):\n%s", d)
	}
	scrape, err := env.exporter.scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(clusterSeries(scrape), clusterSeries(offline(t, capture))); d != "" {
		t.Errorf("the exporter's metrics of the capture differ from the live scrape (-live +capture):\n%s", d)
	}
}

// withoutSince decodes a JSON report and drops every "since".
func withoutSince(t *testing.T, report string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(report), &v); err != nil {
		t.Fatalf("%v:\n%s", err, report)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "since")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	return v
}

// whole copies a fixture directory and records every resource as
// captured: a fixture models a whole cluster, where a kind it holds
// nothing of is empty, as the cluster it is played into shows it. Read
// as is, such a kind is "not captured" (issue 24).
func whole(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range snapshot.Resources() {
		y, err := yaml.Marshal(snapshot.CaptureRecord{
			APIVersion: snapshot.CaptureRecordAPIVersion, Kind: snapshot.CaptureRecordKind, Resource: r.Name, Captured: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	if err := os.WriteFile(filepath.Join(out, "zz-captured.yaml"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCaptureOfAForbiddenKind captures the cluster as an identity that may
// not list Jobs: capture succeeds, records jobs.batch as not captured and
// why, and diagnose of the capture reports it not captured rather than
// concluding anything from the Jobs it could not see.
func TestCaptureOfAForbiddenKind(t *testing.T) {
	const jobs = "jobs.batch"
	play(t, scenario("seed004-build-failed"))
	revokeJobs(t)

	dir := filepath.Join(t.TempDir(), "capture") + "/"
	if out, code := runBinary(t, "capture", "--kubeconfig="+env.cluster.ExporterKubeconfig, "--output="+dir); code != 0 {
		t.Fatalf("capture exits %d: %s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, jobs+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if f := string(b); !strings.Contains(f, "captured: false") || !strings.Contains(f, "problem: forbidden") || strings.Contains(f, "kind: Job\n") {
		t.Errorf("%s.yaml does not record that Jobs were forbidden:\n%s", jobs, f)
	}
	report, _ := runBinary(t, "diagnose", "--snapshot="+dir, "-o", "json", diagnoseAt)
	var r diagnose.Report
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("%v:\n%s", err, report)
	}
	access := r.Cluster[slices.IndexFunc(r.Cluster, func(c diagnose.Check) bool { return c.ID == diagnose.CheckExporterAccess })]
	if access.Status != diagnose.NotCaptured || len(access.Findings) != 1 || access.Findings[0].Object.Name != jobs {
		t.Errorf("exporter.access of the capture: %+v, want not_captured naming %s only", access, jobs)
	}
}

// revokeJobs takes the exporter's permission on Jobs away until restore
// or the end of the test.
func revokeJobs(t *testing.T) (restore func(context.Context) error) {
	t.Helper()
	roles := env.kube.CS.RbacV1().Roles(snapshot.DefaultNamespace)
	set := func(ctx context.Context, rules []rbacv1.PolicyRule) error {
		r, err := roles.Get(ctx, "ocl-exporter", metav1.GetOptions{})
		if err != nil {
			return err
		}
		r.Rules = rules
		_, err = roles.Update(ctx, r, metav1.UpdateOptions{})
		return err
	}
	role, err := roles.Get(t.Context(), "ocl-exporter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	granted := role.Rules
	revoked := slices.DeleteFunc(slices.Clone(granted), func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "jobs") })
	if len(revoked) == len(granted) {
		t.Fatalf("deploy/'s Role ocl-exporter grants nothing on jobs: %+v", granted)
	}
	if err := set(t.Context(), revoked); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := set(context.Background(), granted); err != nil {
			t.Errorf("restoring the Role: %v", err)
		}
	})
	return func(ctx context.Context) error { return set(ctx, granted) }
}
