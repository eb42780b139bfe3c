package deploy_test

import (
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

// TestExecNamesTheBundlesDeployment: the runbooks' first command execs
// into the Deployment the bundle installs, by its namespace and name.
func TestExecNamesTheBundlesDeployment(t *testing.T) {
	got, err := deploy.Exec("ocl_exporter")
	if err != nil {
		t.Fatal(err)
	}
	d := build(t, ".").deployments[0]
	if want := "oc -n " + d.Namespace + " exec deploy/" + d.Name + " -- ocl_exporter"; got != want {
		t.Errorf("Exec = %q, the bundle's Deployment is %s/%s: want %q", got, d.Namespace, d.Name, want)
	}
}
