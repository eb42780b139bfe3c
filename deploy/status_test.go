package deploy_test

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/deploy"
	"github.com/ocl-exporter/ocl_exporter/server"
)

const statusReader = "ocl-exporter-status-reader"

// TestStatusReaderOpensThePage: the bundle ships the ClusterRole a person
// needs to open /status (and the metrics) through --auth.kubernetes,
// exactly that, and binds it to no one: who sees the page is the
// installer's choice.
func TestStatusReaderOpensThePage(t *testing.T) {
	b := build(t, ".")
	role, ok := b.clusterRoles[statusReader]
	if !ok {
		t.Fatalf("no ClusterRole %s", statusReader)
	}
	var got []string
	for _, r := range role.Rules {
		if len(r.APIGroups)+len(r.Resources)+len(r.ResourceNames) > 0 {
			t.Errorf("%s grants resources %v: the page needs non-resource URLs only", statusReader, r.Resources)
		}
		for _, u := range r.NonResourceURLs {
			for _, v := range r.Verbs {
				got = append(got, u+" "+v)
			}
		}
	}
	want := []string{server.StatusPath + " get", telemetryPath(t, b.deployments[0]) + " get"}
	if d := diff(got, want); d != "" {
		t.Errorf("%s:%s", statusReader, d)
	}
	for _, crb := range b.clusterRoleBindings {
		if crb.RoleRef.Name == statusReader {
			t.Errorf("ClusterRoleBinding %s binds %s to %v: the bundle binds it to no one", crb.Name, statusReader, crb.Subjects)
		}
	}
}

// TestOnCallNamesTheBundlesDeployment: the runbooks' first command
// port-forwards to the Deployment the bundle installs, by its namespace
// and name, on the port of the exporter's --web.port-forward-address, a
// loopback address.
func TestOnCallNamesTheBundlesDeployment(t *testing.T) {
	o, err := deploy.BundleOnCall()
	if err != nil {
		t.Fatal(err)
	}
	d := build(t, ".").deployments[0]
	if o.Namespace != d.Namespace || o.Deployment != d.Name {
		t.Errorf("on-call path %+v, the bundle's Deployment is %s/%s", o, d.Namespace, d.Name)
	}
	want := "--web.port-forward-address=127.0.0.1:" + o.Port
	if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, want) {
		t.Errorf("the Deployment's arguments %v do not hold %s", d.Spec.Template.Spec.Containers[0].Args, want)
	}
	if got, want := o.Command("<pool>"), "oc -n "+d.Namespace+" port-forward deploy/"+d.Name+" "+o.Port+" >/dev/null & "+
		"curl -sS --retry 5 --retry-connrefused 'localhost:"+o.Port+"/status?pool=<pool>'; kill $!"; got != want {
		t.Errorf("Command(<pool>) = %q, want %q", got, want)
	}
}

// TestResponderRoleIsThePortForwardAlone: the Role a responder is bound
// to grants exactly what oc port-forward deploy/ocl-exporter needs, in
// the exporter's namespace, and the bundle binds it to no one: no Secret,
// no exec, attach or ephemeral container, no write.
func TestResponderRoleIsThePortForwardAlone(t *testing.T) {
	b := build(t, ".")
	role, ok := b.roles[namespace+"/"+deploy.ResponderRole]
	if !ok {
		t.Fatalf("no Role %s/%s", namespace, deploy.ResponderRole)
	}
	var got []string
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					got = append(got, fmt.Sprintf("%s %s %s %s", cmp.Or(g, "core"), res, cmp.Or(strings.Join(r.ResourceNames, ","), "*"), v))
				}
			}
		}
		if len(r.NonResourceURLs) > 0 {
			t.Errorf("%s grants non-resource URLs %v", deploy.ResponderRole, r.NonResourceURLs)
		}
	}
	o, err := deploy.BundleOnCall()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"apps deployments " + o.Deployment + " get", "core pods * get", "core pods * list", "core pods * watch",
		"core pods/portforward * create", "core pods/portforward * get"}
	if d := diff(got, want); d != "" {
		t.Errorf("%s:%s", deploy.ResponderRole, d)
	}
	for _, rb := range b.roleBindings {
		if rb.RoleRef.Name == deploy.ResponderRole {
			t.Errorf("RoleBinding %s binds %s to %v: the bundle binds it to no one", rb.Name, deploy.ResponderRole, rb.Subjects)
		}
	}
}

// execInto is a documented step that runs something in the exporter's
// pod: oc exec, rsh, attach or debug naming its namespace or Deployment.
var execInto = regexp.MustCompile(`\b(oc|kubectl)\b[^|;&]*\s(exec|rsh|attach|debug)\s[^|;&]*ocl-exporter`)

// TestNoDocumentedStepExecsIntoTheExporter: no runbook, README or doc asks
// anyone to run a command in the exporter's pod, which would be its
// service account's power (every Secret of the MCO namespace, its token):
// the on-call path is the port-forward (TestOnCallNamesTheBundlesDeployment).
func TestNoDocumentedStepExecsIntoTheExporter(t *testing.T) {
	var files []string
	for _, pattern := range []string{"README.md", "CONTRIBUTING.md", "docs/*.md", "runbooks/*.md", "deploy/*/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 30 {
		t.Fatalf("%d files found: run from deploy/", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if execInto.MatchString(line) {
				t.Errorf("%s:%d: %q runs a command as the exporter's service account; give the on-call path instead", f, i+1, line)
			}
		}
	}
	if !execInto.MatchString("oc -n ocl-exporter exec deploy/ocl-exporter -- ocl_exporter diagnose") ||
		!execInto.MatchString("kubectl exec -it -n ocl-exporter deploy/ocl-exporter -- sh") ||
		execInto.MatchString(deploy.OnCall{Namespace: "ocl-exporter", Deployment: "ocl-exporter", Port: "29101"}.Command("<pool>")) {
		t.Error("the check itself does not tell exec from the on-call path")
	}
}
