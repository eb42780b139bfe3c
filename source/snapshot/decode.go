package snapshot

// Decoding a snapshot file: documents, Lists and the objects in them,
// each kept or skipped by its kind (kinds, from Resources()). The walk
// and the opening of files are in snapshot.go.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// fileState collects what one file's documents have in common, to log it
// once per file rather than once per object.
type fileState struct {
	ctx            context.Context // ends the load
	name           string
	strayNamespace []string // cluster-scoped objects that named a namespace
	skipped        map[string]int
	older          *olderObjects // shared by every file of a load
	cov            *coverage     // shared by every file of a load
	claims         *claims       // what the file says it holds
	open           *section      // of a capture, being read
	listNoKind     bool          // a List in oc's shape without its kind
	logger         *slog.Logger
}

func newFileState(ctx context.Context, name string, older *olderObjects, cov *coverage, cl *claims, logger *slog.Logger) *fileState {
	return &fileState{ctx: ctx, name: name, skipped: map[string]int{}, older: older, cov: cov, claims: cl, logger: logger}
}

// documents returns a reader of r's documents, one per call, io.EOF after
// the last. A document is kept as bytes until its kind is known: most of
// a must-gather is kinds the exporter skips, and raw bytes cost a fraction
// of the maps they would decode into.
func (st *fileState) documents(r io.Reader) func() ([]runtime.Object, error) {
	// JSON when it starts with "{", as utilyaml.GuessJSONStream decides,
	// whose reader keeps every byte it reads: a second copy of the file.
	stream := bufio.NewReader(r)
	start, _ := stream.Peek(4096) // a shorter file returns what it has
	if bytes.HasPrefix(bytes.TrimLeftFunc(start, unicode.IsSpace), []byte("{")) {
		dec := json.NewDecoder(stream)
		return func() ([]runtime.Object, error) { return st.nextJSON(dec) }
	}
	yr := &documentReader{r: stream}
	return func() ([]runtime.Object, error) { return st.nextYAML(yr) }
}

func notValid(err error) error {
	if errors.Is(err, io.EOF) {
		return err
	}
	return fmt.Errorf("not valid YAML or JSON: %w", err)
}

// maxObjectBytes bounds the text of one object (a document, or an item of
// a List) decoded whole: decoding YAML takes up to 90 times its size (a
// flow sequence of one-digit numbers), and every kind the exporter reads
// whole is far smaller (a build Pod, a MachineConfigPool: tens of
// kilobytes). A larger object of a kind kept as metadata only is cut to
// its apiVersion, kind and metadata first: a rendered MachineConfig
// weighs 0.7 MB in a large cluster, up to the API server's 3 MiB request
// bound, its metadata a few kilobytes (annotations at most 256 KiB).
const maxObjectBytes = 512 << 10

// objectJSON converts one YAML object, or a List's head, to JSON: of a
// kind kept as metadata only its apiVersion, kind and metadata alone,
// whatever its size; anything else whole, up to maxObjectBytes, past it
// an error naming the bound.
func objectJSON(doc []byte) ([]byte, error) {
	if raw, ok := metadataOnlyJSON(doc); ok {
		return raw, nil // whatever its size: most of a MachineConfig's is never read
	}
	if len(doc) > maxObjectBytes {
		return nil, tooLarge(len(doc))
	}
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, notValid(err)
	}
	return raw, nil
}

func tooLarge(n int) error {
	return fmt.Errorf("%d bytes, more than the %d one object may hold: only Nodes, MachineConfigs, Secrets and ConfigMaps, of which the metadata alone is read, may be larger (in the block style oc writes)", n, maxObjectBytes)
}

// keptAsMetadata: raw (JSON) is an object of a kind kept as metadata only.
func keptAsMetadata(raw []byte) bool {
	var tm typeMeta
	return json.Unmarshal(raw, &tm) == nil && tm.Items == nil && keptAsMetadataKind(tm)
}

// convertEach converts the n items of a List that item(i) returns as JSON,
// naming the item in errors.
func (st *fileState) convertEach(n int, item func(i int) ([]byte, error)) ([]runtime.Object, error) {
	var out []runtime.Object
	for i := range n {
		if err := st.ctx.Err(); err != nil {
			return nil, err
		}
		raw, err := item(i)
		if err == nil {
			var objs []runtime.Object
			objs, err = st.convert(raw, true)
			out = append(out, objs...)
		}
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
	}
	return out, nil
}

func (st *fileState) log(logger *slog.Logger) {
	if n := len(st.strayNamespace); n > 0 {
		logger.Warn("cluster-scoped objects in a snapshot file carry metadata.namespace; ignoring it, as the API server would",
			"file", st.name, "objects", n, "first", st.strayNamespace[0])
	}
	if len(st.skipped) > 0 {
		logger.Debug("skipped kinds the exporter does not use", "file", st.name, "kinds", st.skipped)
	}
}

// typeMeta is all that is read of a document before its kind is known.
type typeMeta struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Items      json.RawMessage `json:"items"`
	Metadata   json.RawMessage `json:"metadata"`
}

// errNotAnObject is a file's first document that is no Kubernetes object
// at all (a list, a scalar, a map without apiVersion, kind or metadata): a
// must-gather's Prometheus answers, etcd member lists, discovery
// documents. The file is skipped, where an object document that is
// malformed is an error.
var errNotAnObject = errors.New("not a Kubernetes object")

// convert reads one document, or one item of a List.
func (st *fileState) convert(raw json.RawMessage, item bool) ([]runtime.Object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return nil, nil // an empty document, e.g. a trailing ---
	}
	if raw[0] != '{' {
		if !item {
			return nil, fmt.Errorf("a %s: %w", jsonType(raw), errNotAnObject)
		}
		return nil, fmt.Errorf("a %s, not a Kubernetes object", jsonType(raw))
	}
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	if !item && tm.APIVersion == "" && tm.Kind == "" && tm.Metadata == nil {
		return nil, fmt.Errorf("no apiVersion and no kind: %w", errNotAnObject)
	}
	if tm.Items != nil {
		if st.unreadList(tm) {
			return nil, nil
		}
		st.claims.list(tm)
		return st.convertList(tm)
	}
	if gv, err := schema.ParseGroupVersion(tm.APIVersion); err == nil && gv.Group == CaptureRecordGroup && tm.Kind == CaptureRecordKind {
		return nil, st.captureRecord(raw)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if tm.Kind == "" || tm.APIVersion == "" || err != nil {
		return nil, errors.New("no apiVersion or kind: this is not a Kubernetes object")
	}
	gvk := gv.WithKind(tm.Kind)
	k, known := kinds[gvk.GroupKind()]
	if !known {
		st.skipped[gvk.String()]++
		return nil, nil
	}
	switch {
	case k.new == nil:
		// its metadata alone, whatever its size
		if raw, err = metadataJSON(tm); err != nil || len(raw) > maxObjectBytes {
			return nil, tooLarge(len(raw))
		}
	case len(raw) > maxObjectBytes:
		return nil, tooLarge(len(raw))
	}
	return st.convertObject(raw, gvk, k)
}

// metadataJSON is the object tm was read from, but its apiVersion, kind
// and metadata.
func metadataJSON(tm typeMeta) ([]byte, error) {
	return json.Marshal(struct {
		APIVersion string          `json:"apiVersion"`
		Kind       string          `json:"kind"`
		Metadata   json.RawMessage `json:"metadata,omitempty"`
	}{tm.APIVersion, tm.Kind, tm.Metadata})
}

// convertObject decodes raw, an object of a kind the exporter reads.
func (st *fileState) convertObject(raw json.RawMessage, gvk schema.GroupVersionKind, k kind) ([]runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(raw, &u.Object); err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	if err := checkMetadata(u); err != nil {
		return nil, fmt.Errorf("%s %w", gvk.Kind, err)
	}
	if gvk.Version != k.version {
		if known, readable := st.older.upgrade(u, k.version, st.logger); known {
			if !readable {
				return nil, nil
			}
			gvk = u.GroupVersionKind()
		}
	}
	if gvk.Version != k.version {
		return nil, fmt.Errorf("%s %q has apiVersion %s, but only %s/%s is supported (current OpenShift serves that one)",
			gvk.Kind, u.GetName(), u.GetAPIVersion(), gvk.Group, k.version)
	}
	if u.GetName() == "" {
		return nil, fmt.Errorf("%s has no metadata.name", gvk.Kind)
	}
	if k.namespaced && u.GetNamespace() == "" {
		return nil, fmt.Errorf("%s %q has no metadata.namespace", gvk.Kind, u.GetName())
	}
	if !k.namespaced && u.GetNamespace() != "" {
		// Stored under its namespace, the object would exist twice when
		// another copy has none, and every render would fail on the
		// duplicate series.
		st.strayNamespace = append(st.strayNamespace, gvk.Kind+" "+u.GetName())
		unstructured.RemoveNestedField(u.Object, "metadata", "namespace")
	}
	st.claims.object(gvk.GroupKind(), u.GetNamespace())
	var obj runtime.Object
	if k.new == nil {
		meta := &metav1.PartialObjectMetadata{}
		if md, ok := u.Object["metadata"].(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &meta.ObjectMeta); err != nil {
				return nil, fmt.Errorf("%s %q: reading metadata: %w", gvk.Kind, u.GetName(), err)
			}
		}
		obj = meta
	} else {
		obj = k.new()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return nil, fmt.Errorf("%s %q does not match the %s schema: %w", gvk.Kind, u.GetName(), gvk.GroupVersion(), err)
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return []runtime.Object{obj}, nil
}

// unreadList: a typed List of a kind the exporter does not read (an
// APIGroupDiscoveryList, whose items carry no apiVersion or kind; a
// PodMetricsList) is skipped whole, its items unread.
func (st *fileState) unreadList(tm typeMeta) bool {
	if tm.Kind == "List" || tm.Kind == "" {
		return false
	}
	if _, known := listOf(tm); known {
		return false
	}
	st.skipped[tm.APIVersion+", Kind="+tm.Kind]++
	return true
}

// convertList reads the items of a List one at a time, each as raw bytes
// until its kind is known.
func (st *fileState) convertList(tm typeMeta) ([]runtime.Object, error) {
	items := bytes.TrimSpace(tm.Items)
	if string(items) == "null" {
		return nil, nil
	}
	if items[0] != '[' {
		return nil, fmt.Errorf("%s: items is a %s, not a list of objects", orList(tm.Kind), jsonType(items))
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(items, &raws); err != nil {
		return nil, fmt.Errorf("%s: reading items: %w", orList(tm.Kind), err)
	}
	return st.convertEach(len(raws), func(i int) ([]byte, error) {
		raw := raws[i]
		raws[i] = nil // let the bytes go as soon as they are read
		return raw, nil
	})
}

func orList(kind string) string {
	if kind == "" {
		return "List"
	}
	return kind
}

// checkMetadata rejects a name or namespace that is not a string, which
// would otherwise read as missing.
func checkMetadata(u *unstructured.Unstructured) error {
	md := u.Object["metadata"]
	if md == nil {
		return nil
	}
	m, ok := md.(map[string]any)
	if !ok {
		return fmt.Errorf("metadata is a %T, not a map", md)
	}
	for _, f := range []string{"name", "namespace"} {
		if v, found := m[f]; found {
			if _, ok := v.(string); !ok {
				return fmt.Errorf("metadata.%s is %v (a %T), not a string: quote it", f, v, v)
			}
		}
	}
	return nil
}

// jsonType names the JSON type of a value from its first byte.
func jsonType(raw []byte) string {
	switch raw[0] {
	case '{':
		return "map"
	case '[':
		return "list"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
