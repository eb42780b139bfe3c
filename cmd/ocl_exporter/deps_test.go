package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// forbidden are packages the exporter binary must not link, by import path
// prefix. The generated clientsets register every kind of every API group
// at init and link a typed client and apply configuration for each: with
// them the stripped binary was 75 MB and 38 MiB of its resident memory were
// its own pages, without them (kubeapi) 26 MB. Fakes belong in tests; the
// Prometheus server module doubles the module graph.
var forbidden = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/applyconfigurations",
	"k8s.io/client-go/testing",
	"k8s.io/client-go/metadata/fake",
	"k8s.io/client-go/dynamic",
	"github.com/openshift/client-go",
	"github.com/prometheus/prometheus",
}

// kubeAPIGroups are the only k8s.io/api packages linked: the kinds kubeapi
// decodes. Each one costs its generated protobuf and deep-copy code.
var kubeAPIGroups = []string{
	"k8s.io/api/apps/v1",
	"k8s.io/api/authentication/v1",
	"k8s.io/api/authorization/v1",
	"k8s.io/api/batch/v1",
	"k8s.io/api/core/v1",
}

// TestBinaryLinksOnlyWhatItUses fails when a dependency brings a
// clientset, a fake or another API group back into the binary. The scale
// run (test/scale) checks the stripped binary's size.
func TestBinaryLinksOnlyWhatItUses(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var groups []string
	for _, p := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if p == f || strings.HasPrefix(p, f+"/") {
				t.Errorf("the binary links %s: build API clients with kubeapi, keep fakes in _test.go files", p)
			}
		}
		if strings.HasPrefix(p, "k8s.io/api/") {
			groups = append(groups, p)
		}
	}
	slices.Sort(groups)
	if !slices.Equal(groups, kubeAPIGroups) {
		t.Errorf("the binary links the API groups %v, want %v: a new kind read belongs in kubeapi's groups and in this list", groups, kubeAPIGroups)
	}
}
