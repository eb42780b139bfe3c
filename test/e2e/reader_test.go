//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// readerRole reads what diagnose reads but Secrets, as OpenShift's
// cluster-reader does.
var readerRole = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "configmaps", "events"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"machineconfiguration.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
}

// bindReader grants cluster.ReaderUser readerRole until the test ends.
func bindReader(t *testing.T) {
	t.Helper()
	rbac := env.kube.CS.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-reader-without-secrets"}, Rules: readerRole}
	if _, err := rbac.ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cluster.ReaderUser}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := t.Context()
		_ = rbac.ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
	})
}

// runAs runs the binary with args and its default log level, returning
// standard output, standard error and the exit status.
func runAs(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), env.exporterBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", env.exporterBin, args, err)
	}
	return stdout.String(), stderr.String(), 0
}

// TestDiagnoseAsAReaderWithoutSecrets runs diagnose and capture as a
// person whose role reads everything diagnose reads but Secrets (as
// cluster-reader): diagnose names that person (SelfSubjectReview), not
// the exporter's service account, in one warning line and in
// exporter.access; Secrets are not captured, and no Secret reads
// missing; capture records them as forbidden.
func TestDiagnoseAsAReaderWithoutSecrets(t *testing.T) {
	play(t, scenario("seed004-build-failed"))
	bindReader(t)
	kubeconfig := "--kubeconfig=" + env.cluster.ReaderKubeconfig

	out, logs, code := runAs(t, "diagnose", kubeconfig, "-o", "json", diagnoseAt)
	var r diagnose.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, %v:\n%s\n%s", code, err, out, logs)
	}
	warnings := strings.Count(logs, "level=WARN")
	if warnings != 1 || !strings.Contains(logs, `as="user alice"`) || !strings.Contains(logs, "forbidden=secrets") || strings.Contains(logs, "serviceaccount") {
		t.Errorf("diagnose logs %d warnings, want one naming user alice and secrets:\n%s", warnings, logs)
	}
	access := r.Cluster[slices.IndexFunc(r.Cluster, func(c diagnose.Check) bool { return c.ID == diagnose.CheckExporterAccess })]
	if access.Status != diagnose.NotCaptured || len(access.Findings) != 1 {
		t.Fatalf("exporter.access: %+v, want secrets not captured", access)
	}
	f := access.Findings[0]
	if f.Object.Name != "secrets" || !strings.Contains(f.Message, "user alice may not list secrets") ||
		f.Commands[0] != "oc auth can-i list secrets -n "+snapshot.DefaultNamespace {
		t.Errorf("exporter.access finding: %+v", f)
	}
	for _, p := range r.Pools {
		for _, s := range p.Stages {
			for _, c := range s.Checks {
				if c.ID == diagnose.CheckSecrets && c.Status != diagnose.NotCaptured {
					t.Errorf("pool %s: mosc.secrets %s, want not_captured: %+v", p.Name, c.Status, c.Findings)
				}
			}
		}
	}
	if strings.Contains(out, "does not exist in") {
		t.Errorf("a Secret reads missing:\n%s", out)
	}

	dir := filepath.Join(t.TempDir(), "capture") + "/"
	if _, logs, code := runAs(t, "capture", kubeconfig, "--output="+dir); code != 0 || strings.Count(logs, "level=WARN") != 1 {
		t.Fatalf("capture as alice exits %d, logs:\n%s", code, logs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "captured: false") || !strings.Contains(string(b), "problem: forbidden") {
		t.Errorf("secrets.yaml does not record that Secrets were forbidden:\n%s", b)
	}
}
