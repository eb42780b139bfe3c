package snapshot

import (
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot/snapshottest"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	mosc       = snapshottest.MachineOSConfig
	secretList = snapshottest.SecretList
)

func TestLoadShapes(t *testing.T) {
	fsys := fstest.MapFS{
		"single.yaml":  {Data: []byte(mosc)},
		"dir/list.yml": {Data: []byte(secretList)},
		"dir/multi.yaml": {Data: []byte("---\n" + `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {node-role.kubernetes.io/worker: ""}}
---
apiVersion: v1
kind: Service
metadata: {name: skipped, namespace: x}
---
`)},
		"dir/deeper/pool.json": {Data: []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfigPool","metadata":{"name":"infra"}}`)},
		"dir/README.md":        {Data: []byte("not read")},
	}
	objs, err := Load(fsys, ".", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, key(o))
		if m, ok := o.(*metav1.PartialObjectMetadata); ok && m.Kind == "Secret" && m.Name == "push" {
			// Data never survives loading; annotations are dropped later by the
			// informer transform, like live.
			if m.Annotations == nil {
				t.Error("annotations should reach the transform")
			}
		}
	}
	// Files are read in lexical order: dir/deeper/pool.json, dir/list.yml, dir/multi.yaml, single.yaml.
	want := "MachineConfigPool.machineconfiguration.openshift.io//infra Secret/openshift-machine-config-operator/push Secret/openshift-machine-config-operator/pull Node//n1 MachineOSConfig.machineconfiguration.openshift.io//infra"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("loaded\n %s\nwant\n %s", got, want)
	}
	if _, ok := objs[4].(*mcfgv1.MachineOSConfig); !ok {
		t.Errorf("MachineOSConfig decoded as %T", objs[4])
	}
}

func TestLoadDuplicateLastWins(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml": {Data: []byte(mosc)},
		"b.yaml": {Data: []byte(strings.Replace(mosc, "os:latest", "os:newer", 1))},
	}
	objs, err := Load(fsys, ".", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].(*mcfgv1.MachineOSConfig).Spec.RenderedImagePushSpec != "quay.io/example/os:newer" {
		t.Errorf("got %v", objs)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, data, want string
	}{
		{"malformed yaml", "bad.yaml", mosc + "---\nkind: [unclosed\n", "bad.yaml: document 2: not valid YAML or JSON"},
		{"truncated json", "cut.json", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n`, "cut.json: document 1: not valid YAML or JSON"},
		{"unknown apiVersion", "new.yaml", strings.Replace(mosc, "/v1\n", "/v2\n", 1), `new.yaml: document 1: MachineOSConfig "infra" has apiVersion machineconfiguration.openshift.io/v2, but only machineconfiguration.openshift.io/v1 is supported`},
		{"no kind", "x.yaml", "metadata: {name: a}\n", "x.yaml: document 1: no apiVersion or kind"},
		{"no name", "x.yaml", "apiVersion: v1\nkind: Node\nmetadata: {}\n", "x.yaml: document 1: Node has no metadata.name"},
		{"no namespace", "x.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n", `x.yaml: document 1: Secret "s" has no metadata.namespace`},
		{"schema mismatch", "x.yaml", "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineOSBuild\nmetadata: {name: b}\nspec: {machineConfig: 3}\n", `x.yaml: document 1: MachineOSBuild "b" does not match the machineconfiguration.openshift.io/v1 schema`},
		{"bad list item", "l.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {}\n", "l.yaml: document 1: item 0: Node has no metadata.name"},
		{"items not a list", "l.yaml", "apiVersion: v1\nkind: List\nitems: notalist\n", "l.yaml: document 1: List: items is a string, not a list of objects"},
		{"items a map", "l.json", `{"apiVersion":"v1","kind":"NodeList","items":{"a":1}}`, "l.json: document 1: NodeList: items is a map, not a list of objects"},
		{"numeric name", "x.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: 12345}\n", "x.yaml: document 1: Node metadata.name is 12345 (a int64), not a string: quote it"},
		{"numeric namespace", "x.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: 7}\n", "metadata.namespace is 7 (a int64), not a string"},
		{"a scalar after an object", "x.yaml", mosc + "---\njust text\n", "x.yaml: document 2: a string: not a Kubernetes object"},
		{"no apiVersion or kind after an object", "x.yaml", mosc + "---\n{a: 1}\n", "x.yaml: document 2: no apiVersion and no kind"},
		{"nothing to read", "notes.txt", "hello", `no .yaml, .yml or .json files`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{tc.file: {Data: []byte(tc.data)}}, ".", slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
