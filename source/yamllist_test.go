package source

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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

// TestDocumentReaderSplitsAsYAMLReader: the loader's document reader cuts
// a stream where utilyaml.YAMLReader does, document for document, errors
// included.
func TestDocumentReaderSplitsAsYAMLReader(t *testing.T) {
	long := strings.Repeat("x", 10000)
	for _, in := range []string{
		"", "\n", "a: 1", "a: 1\n", "---\na: 1\n", "a: 1\n---\nb: 2\n", "---\n---\n---\n", "a: 1\r\nb: 2\r\n---\r\nc: 3",
		"--- # c\na: 1\n--- \nb: 2\n", "---x\n", "a: 1\n--- {b: 2}\n", "a: |\n  ---\n  x\n", "k: " + long + "\n---\nv: " + long,
		"a: 1\n...\n---\nb: 2\n", "\r\n", "a: 1\r", "----\n",
	} {
		want, wantErr := allDocuments(utilyaml.NewYAMLReader(bufio.NewReaderSize(strings.NewReader(in), 16)))
		got, gotErr := allDocuments(&documentReader{r: bufio.NewReaderSize(strings.NewReader(in), 16)})
		if !slices.Equal(got, want) || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%.40q: got %q, %v; want %q, %v", in, got, gotErr, want, wantErr)
		}
	}
}

func allDocuments(r interface{ Read() ([]byte, error) }) ([]string, error) {
	var out []string
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(doc))
	}
}
