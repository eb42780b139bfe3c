package sourcetest

// A must-gather generator: the objects of a flat snapshot (a scenario of
// testdata/scenarios) written as a release's must-gather image writes
// them, so every scenario runs through each layout. What each path
// follows is in testdata/must-gathers/README.md.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/test/scenario"
)

// Release is a must-gather image's minor release: 16 for 4.16.
type Release int

// Gathers says whether the must-gather image of r gathers kind, of the
// kinds the exporter reads (snapshot.Resource.GatheredFrom): a namespaced
// kind is gathered with its namespace.
func (r Release) Gathers(kind string) bool {
	for _, res := range snapshot.Resources() {
		if res.Kind == kind && res.GatheredFrom != 0 {
			return int(r) >= res.GatheredFrom
		}
	}
	return true
}

// Lacks are the kinds no cluster has none of (snapshot.Resource.NeverNone)
// that the flat snapshot at dir holds no object of: a must-gather that
// gathers them and holds none lost them, and reads them as not captured.
// A scenario that lacks one is not a whole cluster.
func Lacks(dir string) ([]string, error) {
	objs, err := readObjects(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, res := range snapshot.Resources() {
		if res.NeverNone && !slices.ContainsFunc(objs, func(u *unstructured.Unstructured) bool { return u.GetKind() == res.Kind }) {
			out = append(out, res.Kind)
		}
	}
	return out, nil
}

// MustGatherOptions shape a generated must-gather.
type MustGatherOptions struct {
	Release Release
	// At is the capture time its timestamp files end with.
	At time.Time
	// NoTerminationMessages empties the build pods' image-build
	// termination messages, as releases before FallbackToLogsOnError
	// left them: only the container log holds the cause.
	NoTerminationMessages bool
	// WithoutNamespaces are left out, as a must-gather that could not
	// read them.
	WithoutNamespaces []string
	// Extra are objects (YAML documents) added to the scenario's.
	Extra string
	// Logs replace the log of a container ("<pod>/<container>"), its
	// lines without their times.
	Logs map[string]string
	// Inspect writes what `oc adm inspect <Inspect>` alone writes instead
	// of the must-gather image's gather (inspect.go; forms in
	// inspect.go here): "ns/openshift-machine-config-operator" or
	// "co/machine-config".
	Inspect string
	// InsecureLogs writes the containers' logs as inspect does when the
	// kubelet's certificate fails (insecureLogs).
	InsecureLogs bool
	// Edit changes each object before it is written, or drops it
	// (false): a state of the MCO the scenarios do not hold.
	Edit func(u *unstructured.Unstructured) bool
}

// mustGatherImageDir is the directory `oc adm must-gather` names after
// the image's ID (pkg/cli/admin/mustgather/mustgather.go: the ImageID
// with every run of non-alphanumerics replaced by "-").
const mustGatherImageDir = "must-gather.local.5343592370436366488/quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-0c1e8f3f9c2b7a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5"

// WriteMustGather writes the objects of the flat snapshot at from under
// dir as the must-gather image of o.Release lays them out, with the
// files a real one carries around them. It returns the must-gather's
// root (dir/must-gather.local.<n>).
func WriteMustGather(from, dir string, o MustGatherOptions) (string, error) {
	objs, err := readObjects(from)
	if err != nil {
		return "", err
	}
	extra, err := decodeObjects([]byte(o.Extra), "Extra")
	if err != nil {
		return "", err
	}
	objs = slices.DeleteFunc(append(objs, extra...), func(u *unstructured.Unstructured) bool { return o.Edit != nil && !o.Edit(u) })
	w := &mgWriter{root: filepath.Join(dir, o.imageDir()), o: o, lists: map[string][]map[string]any{}, related: related(objs)}
	for _, u := range objs {
		if err := w.object(u); err != nil {
			return "", err
		}
	}
	if err := w.finish(); err != nil {
		return "", err
	}
	return filepath.Join(dir, strings.Split(o.imageDir(), "/")[0]), nil
}

// readObjects reads every object of the flat snapshot (a seed scenario
// whole: test/scenario), Lists expanded.
func readObjects(dir string) (out []*unstructured.Unstructured, _ error) {
	return out, scenario.With(dir, func(dir string) error {
		var err error
		out, err = readFlat(dir)
		return err
	})
}

func readFlat(dir string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(p)) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		objs, err := decodeObjects(b, p)
		out = append(out, objs...)
		return err
	})
	return out, err
}

// decodeObjects reads the objects of a YAML or JSON stream, Lists
// expanded.
func decodeObjects(b []byte, name string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var m map[string]any
		if err := r.Decode(&m); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		u := &unstructured.Unstructured{Object: m}
		if items, ok := m["items"].([]any); ok {
			for _, it := range items {
				if im, ok := it.(map[string]any); ok {
					out = append(out, &unstructured.Unstructured{Object: im})
				}
			}
			continue
		}
		if u.GetKind() != "" && u.GetKind() != snapshot.CaptureRecordKind {
			out = append(out, u)
		}
	}
}

type mgWriter struct {
	root  string
	o     MustGatherOptions
	lists map[string][]map[string]any // namespaces/<ns>/<group>/<resource>.yaml -> items
	// clusterOperators are every ClusterOperator, for an inspect of one.
	clusterOperators []any
	// related are what an inspect of the ClusterOperator follows.
	related map[string][]string
}

// resourceOf is the resource the exporter reads a kind as.
func resourceOf(kind string) (snapshot.Resource, bool) {
	for _, r := range snapshot.Resources() {
		if r.Kind == kind && r.Part == "" {
			return r, true
		}
	}
	return snapshot.Resource{}, false
}

func groupDir(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

// object places u: a cluster-scoped object in its own file
// (cluster-scoped-resources/<group>/<resource>/<name>.yaml, inspect
// util.go dirPathForInfo, filenameForInfo for a flattened Info), a
// namespaced one in its namespace's <Kind>List of the resource, a pod
// also in pods/<pod>/<pod>.yaml beside its containers' logs
// (namespace.go gatherNamespaceData, pod.go gatherPodData).
func (w *mgWriter) object(u *unstructured.Unstructured) error {
	if w.o.Inspect == InspectClusterOperator && u.GetKind() == "ClusterOperator" {
		w.clusterOperators = append(w.clusterOperators, u.Object)
	}
	r, ok := resourceOf(u.GetKind())
	if !ok || !w.gathers(u, r) || slices.Contains(w.o.WithoutNamespaces, u.GetNamespace()) {
		return nil
	}
	if u.GetKind() == "Secret" {
		elideSecret(u)
	}
	var logs map[string]string
	if u.GetKind() == "Pod" {
		logs = containerLogs(u, w.o.Logs) // before the messages go: the log holds them
		if w.o.NoTerminationMessages {
			stripTerminationMessages(u)
		}
	}
	if !r.Namespaced {
		return w.write(path.Join("cluster-scoped-resources", groupDir(r.GVR.Group), r.GVR.Resource, u.GetName()+".yaml"), u.Object)
	}
	list := path.Join("namespaces", u.GetNamespace(), groupDir(r.GVR.Group), r.GVR.Resource+".yaml")
	w.lists[list] = append(w.lists[list], u.Object)
	if u.GetKind() == "Pod" {
		return w.pod(u, logs)
	}
	return nil
}

// pod writes pods/<pod>/<pod>.yaml and, for each container,
// <container>/<container>/logs/current.log (the log, each line prefixed
// with its time, PodLogOptions.Timestamps) and previous.log (empty when
// the container never restarted: the file is created before the request
// fails).
func (w *mgWriter) pod(u *unstructured.Unstructured, logs map[string]string) error {
	dir := path.Join("namespaces", u.GetNamespace(), "pods", u.GetName())
	if err := w.write(path.Join(dir, u.GetName()+".yaml"), u.Object); err != nil {
		return err
	}
	for _, c := range containerNames(u) {
		base := path.Join(dir, c, c, "logs")
		for name, body := range w.o.logFiles(logs[c]) {
			if err := w.writeText(path.Join(base, name), body); err != nil {
				return err
			}
		}
	}
	return nil
}

func containerNames(u *unstructured.Unstructured) []string {
	var out []string
	for _, f := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", f)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// containerLogs are the logs each container's termination message was
// read from (FallbackToLogsOnError keeps the log's end), else one line.
func containerLogs(u *unstructured.Unstructured, given map[string]string) map[string]string {
	out := map[string]string{}
	at := u.GetCreationTimestamp().UTC()
	for _, f := range []string{"initContainerStatuses", "containerStatuses"} {
		ss, _, _ := unstructured.NestedSlice(u.Object, "status", f)
		for _, s := range ss {
			m, _ := s.(map[string]any)
			name, _ := m["name"].(string)
			msg, _, _ := unstructured.NestedString(m, "state", "terminated", "message")
			if g, ok := given[u.GetName()+"/"+name]; ok {
				msg = g
			}
			if msg == "" {
				msg = "starting " + name
			}
			var b strings.Builder
			for i, line := range strings.Split(strings.TrimRight(msg, "\n"), "\n") {
				fmt.Fprintf(&b, "%s %s\n", at.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), line)
			}
			out[name] = b.String()
		}
	}
	return out
}

// stripTerminationMessages empties the image-build container's
// termination message.
func stripTerminationMessages(u *unstructured.Unstructured) {
	for _, f := range []string{"initContainerStatuses", "containerStatuses"} {
		ss, _, _ := unstructured.NestedSlice(u.Object, "status", f)
		for _, s := range ss {
			if m, ok := s.(map[string]any); ok && m["name"] == "image-build" {
				unstructured.RemoveNestedField(m, "state", "terminated", "message")
			}
		}
		if ss != nil {
			_ = unstructured.SetNestedSlice(u.Object, ss, "status", f)
		}
	}
}

// elideSecret is what inspect writes of a Secret (secret.go elideSecret):
// each value but tls.crt, ca.crt and service-ca.crt replaced by its
// length, the token and last-applied annotations emptied.
func elideSecret(u *unstructured.Unstructured) {
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	for k, v := range data {
		if k == "tls.crt" || k == "ca.crt" || k == "service-ca.crt" {
			continue
		}
		raw, _ := base64.StdEncoding.DecodeString(v)
		data[k] = base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%d bytes long", len(raw)))
	}
	if data != nil {
		_ = unstructured.SetNestedStringMap(u.Object, data, "data")
	}
	ann := u.GetAnnotations()
	for _, k := range []string{"openshift.io/token-secret.value", "kubectl.kubernetes.io/last-applied-configuration"} {
		if _, ok := ann[k]; ok {
			ann[k] = ""
		}
	}
	if ann != nil {
		u.SetAnnotations(ann)
	}
}

// namespaceLists are the resources inspect writes a <Kind>List of for
// every namespace it inspects (namespace.go namespaceResourcesToCollect:
// "all", configmaps, events, secrets, ...), empty ones included.
var namespaceLists = []struct{ group, resource, kind string }{
	{"core", "configmaps", "ConfigMapList"}, {"core", "events", "EventList"}, {"core", "secrets", "SecretList"},
	{"core", "pods", "PodList"}, {"core", "services", "ServiceList"}, {"apps", "deployments", "DeploymentList"},
	{"apps", "daemonsets", "DaemonSetList"}, {"apps", "replicasets", "ReplicaSetList"}, {"batch", "jobs", "JobList"},
	{"batch", "cronjobs", "CronJobList"},
}

// gatheredNamespaces: the MCO's (the ClusterOperator's relatedObjects),
// default and openshift-etcd (gather's named_resources, which also names
// kube-system, openshift and openshift-cluster-version).
var gatheredNamespaces = []string{snapshot.DefaultNamespace, "default", "openshift-etcd"}

func (w *mgWriter) finish() error {
	for _, ns := range w.o.namespaces() {
		if slices.Contains(w.o.WithoutNamespaces, ns) {
			continue
		}
		if err := w.write(path.Join("namespaces", ns, ns+".yaml"), map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}, "spec": map[string]any{"finalizers": []any{"kubernetes"}},
			"status": map[string]any{"phase": "Active"},
		}); err != nil {
			return err
		}
		for _, l := range namespaceLists {
			p := path.Join("namespaces", ns, l.group, l.resource+".yaml")
			if _, ok := w.lists[p]; !ok {
				w.lists[p] = []map[string]any{}
			}
		}
	}
	names := make([]string, 0, len(w.lists))
	for p := range w.lists {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		version := "v1"
		if g := strings.Split(p, "/")[2]; g != "core" {
			version = g + "/v1"
		}
		items := make([]any, 0, len(w.lists[p]))
		for _, it := range w.lists[p] {
			items = append(items, it)
		}
		if err := w.write(p, map[string]any{"apiVersion": version, "kind": listKind(p), "items": items,
			"metadata": map[string]any{"resourceVersion": "4123789"}}); err != nil {
			return err
		}
	}
	return w.noise()
}

func listKind(p string) string {
	res := strings.TrimSuffix(path.Base(p), ".yaml")
	for _, l := range namespaceLists {
		if l.resource == res {
			return l.kind
		}
	}
	return "List"
}

// noise is what a must-gather holds besides objects: the timestamp
// (inspect.go and mustgather.go logTimestamp: time.Now() printed with
// %v, at start and end), the version (gather), the event page, the
// discovery documents (inspect discovery.go, from release-4.18), etcd's
// JSON arrays (gather_etcd), Prometheus answers (gather_monitoring),
// service logs, and other namespaces' and kinds' objects.
func (w *mgWriter) noise() error {
	if w.o.Inspect != "" {
		return w.inspectNoise()
	}
	at := w.o.At
	files := map[string]string{
		"timestamp": fmt.Sprintf("%s m=+0.043719245\n%s m=+181.512094117\n", at.Add(-3*time.Minute).UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST"), at.Add(-6*time.Second).UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST")),
		// oc adm must-gather's own, around the image's: its end is the
		// newest time, the capture's
		"../timestamp":                                  fmt.Sprintf("%s m=+0.012781993\n%s m=+190.204480012\n", at.Add(-4*time.Minute).UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST"), at.UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST")),
		"version":                                       fmt.Sprintf("openshift/must-gather\n4.%d.0-202510140932.p0.g3a1c7e2.assembly.stream.el9\n", w.o.Release),
		"event-filter.html":                             "<!DOCTYPE html>\n<html lang=\"en\"><head><title>Events</title></head><body><table></table></body></html>\n",
		"../event-filter.html":                          "<!DOCTYPE html>\n<html lang=\"en\"><head><title>Events</title></head><body><table></table></body></html>\n",
		"../must-gather.logs":                           "[must-gather      ] OUT 2025-10-17T12:56:01.123456Z Using must-gather plug-in image: quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0c1e\n",
		"etcd_info/endpoint_status.json":                `[{"Endpoint":"https://10.0.12.34:2379","Status":{"header":{"cluster_id":1,"member_id":2,"revision":4123789,"raft_term":9},"version":"3.5.21","dbSize":123654144,"leader":2}}]` + "\n",
		"etcd_info/member_list.json":                    `{"header":{"cluster_id":1,"member_id":2,"raft_term":9},"members":[{"ID":2,"name":"ip-10-0-12-34","peerURLs":["https://10.0.12.34:2380"]}]}` + "\n",
		"monitoring/prometheus/rules.json":              `{"status":"success","data":{"groups":[]}}` + "\n",
		"monitoring/prometheus/status/tsdb.json":        `{"status":"success","data":{"headStats":{"numSeries":812345}}}` + "\n",
		"monitoring/alertmanager/status.json":           `{"cluster":{"status":"ready"},"versionInfo":{"version":"0.28.1"}}` + "\n",
		"host_service_logs/masters/kubelet_service.log": "Oct 17 12:58:01 ip-10-0-12-34 kubenswrapper[2145]: I1017 12:58:01.000000    2145 kubelet.go:2435] \"SyncLoop UPDATE\"\n",
		"cluster-scoped-resources/config.openshift.io/clusterversions/version.yaml":    "apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nmetadata:\n  name: version\nspec:\n  channel: stable-4." + strconv.Itoa(int(w.o.Release)) + "\n",
		"cluster-scoped-resources/storage.k8s.io/storageclasses/gp3-csi.yaml":          "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gp3-csi\nprovisioner: ebs.csi.aws.com\n",
		"namespaces/openshift-etcd/core/secrets.yaml":                                  "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    tls.key: NDA5NiBieXRlcyBsb25n\n  kind: Secret\n  metadata:\n    name: etcd-client\n    namespace: openshift-etcd\n  type: kubernetes.io/tls\nkind: SecretList\nmetadata:\n  resourceVersion: \"4123789\"\n",
		"namespaces/openshift-etcd/pods/etcd-ip-10-0-12-34/etcd/etcd/logs/current.log": "2025-10-17T12:58:01.000000000Z {\"level\":\"info\",\"msg\":\"apply request took too long\"}\n",
	}
	if w.o.Release >= 18 {
		files["aggregated-discovery-api.yaml"] = "apiVersion: apidiscovery.k8s.io/v2\nitems:\n- metadata:\n    creationTimestamp: null\n  versions:\n  - freshness: Current\n    resources:\n    - resource: pods\n      responseKind:\n        group: \"\"\n        kind: Pod\n        version: \"\"\n      scope: Namespaced\n      verbs: [get, list, watch]\n    version: v1\nkind: APIGroupDiscoveryList\nmetadata: {}\n"
		files["aggregated-discovery-apis.yaml"] = "apiVersion: apidiscovery.k8s.io/v2\nitems:\n- metadata:\n    creationTimestamp: null\n    name: machineconfiguration.openshift.io\n  versions:\n  - freshness: Current\n    resources:\n    - resource: machineosconfigs\n      responseKind:\n        group: \"\"\n        kind: MachineOSConfig\n        version: \"\"\n      scope: Cluster\n      verbs: [get, list, watch]\n    version: v1\nkind: APIGroupDiscoveryList\nmetadata: {}\n"
	}
	for p, body := range files {
		if err := w.writeText(p, body); err != nil {
			return err
		}
	}
	return nil
}

func (w *mgWriter) write(p string, obj map[string]any) error {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	return w.writeText(p, string(b))
}

func (w *mgWriter) writeText(p, body string) error {
	full := filepath.Join(w.root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	return os.WriteFile(full, []byte(body), 0o644)
}
