package sourcetest

// `oc adm inspect` run alone, as support asks for it (openshift/oc
// pkg/cli/admin/inspect/, release-4.16 ... release-5.0): of the MCO's
// namespace, or of its ClusterOperator, which inspect follows to the
// operator's relatedObjects.

import (
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What support asks to inspect.
const (
	InspectMCONamespace    = "ns/" + snapshot.DefaultNamespace
	InspectClusterOperator = "co/machine-config"
)

// inspectDir is the directory inspect writes into without --dest-dir
// (inspect.go Complete: "inspect.local.%06d" of rand.Int63()).
const inspectDir = "inspect.local.6129484611666145821"

// imageDir is where the objects go: the must-gather image's directory, or
// inspect's own.
func (o MustGatherOptions) imageDir() string {
	if o.Inspect != "" {
		return inspectDir
	}
	return mustGatherImageDir
}

// related are the objects the machine-config ClusterOperator among objs
// names in its status.relatedObjects, which inspect follows and gathers
// one file per object (resource.go gatherRelatedObjects): "<group>/
// <resource>" to the name named, "" for every object. The MCO writes
// them (pkg/operator/status.go syncRelatedObjects, release-4.16 ...
// main: its namespace, machineconfigpools, controllerconfigs,
// kubeletconfigs, containerruntimeconfigs, machineconfigs, nodes), and
// the scenarios' ClusterOperator copies them: no MachineOSConfig,
// MachineOSBuild or MachineConfigNode in any release.
func related(objs []*unstructured.Unstructured) map[string][]string {
	out := map[string][]string{}
	for _, u := range objs {
		if u.GetKind() != "ClusterOperator" || u.GetName() != snapshot.ClusterOperatorName {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(u.Object, "status", "relatedObjects")
		for _, ref := range refs {
			m, _ := ref.(map[string]any)
			group, _ := m["group"].(string)
			resource, _ := m["resource"].(string)
			name, _ := m["name"].(string)
			out[group+"/"+resource] = append(out[group+"/"+resource], name)
		}
	}
	return out
}

// gathers says whether what w writes holds u, of resource r.
func (w *mgWriter) gathers(u *unstructured.Unstructured, r snapshot.Resource) bool {
	switch w.o.Inspect {
	case "":
		return w.o.Release.Gathers(u.GetKind())
	case InspectMCONamespace:
		return u.GetNamespace() == snapshot.DefaultNamespace
	}
	names, isRelated := w.related[r.GVR.Group+"/"+r.GVR.Resource]
	return u.GetNamespace() == snapshot.DefaultNamespace ||
		(isRelated && (slices.Contains(names, "") || slices.Contains(names, u.GetName()))) ||
		(u.GetKind() == "ClusterOperator" && u.GetName() == snapshot.ClusterOperatorName)
}

// namespaces are the namespaces o gathers whole (namespace.go
// gatherNamespaceData and namespaceResourcesToCollect).
func (o MustGatherOptions) namespaces() []string {
	if o.Inspect != "" {
		return []string{snapshot.DefaultNamespace}
	}
	return gatheredNamespaces
}

// inspectNoise is what inspect writes besides the objects: its
// timestamp (logTimestamp, at start and end), the event page
// (CreateEventFilterPage), the discovery documents from release-4.18
// (discovery.go inspectDiscovery). For the ClusterOperator also every
// config.openshift.io resource as a List (inspect.go
// gatherConfigResourceData: clusteroperators.yaml among them) beside
// the operator's own file (resource.go gatherClusterOperatorResource,
// written by object: cluster-scoped-resources/config.openshift.io/
// clusteroperators/machine-config.yaml).
func (w *mgWriter) inspectNoise() error {
	at := w.o.At
	stamp := func(t time.Time, mono string) string {
		return t.UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST") + " m=+" + mono + "\n"
	}
	files := map[string]string{
		"timestamp":         stamp(at.Add(-40*time.Second), "0.051927410") + stamp(at, "40.337811094"),
		"event-filter.html": "<!DOCTYPE html>\n<html lang=\"en\"><head><title>Events</title></head><body><table></table></body></html>\n",
	}
	if w.o.Release >= 18 {
		files["aggregated-discovery-api.yaml"] = "apiVersion: apidiscovery.k8s.io/v2\nitems: []\nkind: APIGroupDiscoveryList\nmetadata: {}\n"
		files["aggregated-discovery-apis.yaml"] = "apiVersion: apidiscovery.k8s.io/v2\nitems: []\nkind: APIGroupDiscoveryList\nmetadata: {}\n"
	}
	for p, body := range files {
		if err := w.writeText(p, body); err != nil {
			return err
		}
	}
	if w.o.Inspect != InspectClusterOperator {
		return nil
	}
	cos := w.clusterOperators
	if cos == nil {
		cos = []any{}
	}
	config := map[string]map[string]any{
		"clusteroperators": {"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperatorList", "items": cos},
		"clusterversions": {"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersionList", "items": []any{map[string]any{
			"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "version"},
			"spec": map[string]any{"channel": fmt.Sprintf("stable-4.%d", w.o.Release)},
		}}},
		"featuregates": {"apiVersion": "config.openshift.io/v1", "kind": "FeatureGateList", "items": []any{map[string]any{
			"apiVersion": "config.openshift.io/v1", "kind": "FeatureGate", "metadata": map[string]any{"name": "cluster"}, "spec": map[string]any{},
		}}},
	}
	for name, list := range config {
		list["metadata"] = map[string]any{"resourceVersion": "4123789"}
		if err := w.write(path.Join("cluster-scoped-resources", "config.openshift.io", name+".yaml"), list); err != nil {
			return err
		}
	}
	return nil
}
