package source

import (
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSplitYAMLList(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		items     int // -1: not split
	}{
		{"oc get -o yaml", "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Node\n  metadata: {name: b}\nkind: List\nmetadata:\n  resourceVersion: \"\"\n", 2},
		{"comments and blank lines", "kind: List\nitems:\n# first\n\n- kind: Node\n\n  apiVersion: v1\n", 1},
		{"block scalar inside an item", "kind: List\nitems:\n- kind: Pod\n  data: |\n    - not an item\n    items:\n", 1},
		{"flow style", "kind: List\nitems: [{kind: Node}]\n", -1},
		{"indented items", "kind: List\nitems:\n  - kind: Node\n", -1},
		{"no items", "kind: Node\nmetadata: {name: a}\n", -1},
		{"empty items", "kind: List\nitems:\n", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, items, ok := splitYAMLList([]byte(tc.doc))
			if got := len(items); (tc.items < 0 && ok) || (tc.items >= 0 && got != tc.items) {
				t.Errorf("split into %d items (ok %v), want %d", got, ok, tc.items)
			}
		})
	}
}

// TestSplitListsLoadAsWhole: a List read item by item loads the same
// objects as read whole, and one whose items do not stand alone (an alias
// to an anchor in another item) is read whole.
func TestSplitListsLoadAsWhole(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nitems:\n" +
		"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n    labels: &l {node-role.kubernetes.io/worker: \"\"}\n" +
		"- apiVersion: v1\n  kind: Service\n  metadata: {name: s, namespace: x}\n" +
		"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n2\n    labels: *l\n"
	objs, err := Load(fstest.MapFS{"l.yaml": {Data: []byte(list)}}, ".", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, key(o))
	}
	if got := strings.Join(keys, " "); got != "Node//n1 Node//n2" {
		t.Errorf("loaded %s", got)
	}
}
