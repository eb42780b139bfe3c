package snapshot

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
