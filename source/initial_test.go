package source

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

const mcnPath = "/apis/machineconfiguration.openshift.io/v1/machineconfignodes"

// mcnJSON is a MachineConfigNode as the API server sends it, with what the
// exporter trims away: managedFields, the message of a condition it reads
// no cause from.
func mcnJSON(name string) map[string]any {
	return map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
		"metadata": map[string]any{"name": name, "resourceVersion": "5",
			"managedFields": []any{map[string]any{"manager": "machine-config-daemon", "operation": "Update"}}},
		"spec": map[string]any{"node": map[string]any{"name": name}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Updated", "status": "True", "reason": "Updated",
			"message": "Node has completed update", "lastTransitionTime": "2025-10-01T00:00:00Z"}}},
	}
}

// firstListServer plays an API server for MachineConfigNodes that streams
// lists (stream "ok"), refuses to as Kubernetes 1.33 does (422, WatchList
// off) or as 1.34 does on etcd 3.4 (an error event: etcd cannot report
// watch progress), serving pages of two items instead. It records each
// request's query.
type firstListServer struct {
	t       *testing.T
	stream  string
	mu      sync.Mutex
	queries []url.Values
}

func (f *firstListServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != mcnPath {
		f.t.Errorf("unexpected request %s", r.URL)
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	switch {
	case q.Get("sendInitialEvents") == "true" && f.stream == "ok":
		for _, n := range []string{"n1", "n2", "n3"} {
			_ = enc.Encode(map[string]any{"type": "ADDED", "object": mcnJSON(n)})
		}
		_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{
			"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
			"metadata": map[string]any{"resourceVersion": "42", "annotations": map[string]any{metav1.InitialEventsAnnotationKey: "true"}}}})
	case q.Get("sendInitialEvents") == "true" && f.stream == "error event":
		_ = enc.Encode(map[string]any{"type": "ERROR", "object": map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "InternalError", "code": 500,
			"message": "a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled"}})
	case q.Get("sendInitialEvents") == "true":
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = enc.Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Invalid", "code": 422,
			"message": `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`})
	case q.Get("continue") == "":
		_ = enc.Encode(map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNodeList",
			"metadata": map[string]any{"resourceVersion": "43", "continue": "page2"}, "items": []any{mcnJSON("n1"), mcnJSON("n2")}})
	default:
		_ = enc.Encode(map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNodeList",
			"metadata": map[string]any{"resourceVersion": "43"}, "items": []any{mcnJSON("n3")}})
	}
}

// requests sums up the requests: "stream", or "list limit=N continue=C".
func (f *firstListServer) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, q := range f.queries {
		if q.Get("sendInitialEvents") == "true" {
			out = append(out, fmt.Sprintf("stream rv=%q match=%s", q.Get("resourceVersion"), q.Get("resourceVersionMatch")))
			continue
		}
		out = append(out, fmt.Sprintf("list rv=%q limit=%s continue=%s", q.Get("resourceVersion"), q.Get("limit"), q.Get("continue")))
	}
	return out
}

// firstList runs the informer's first list (resourceVersion "0", as the
// reflector asks) of MachineConfigNodes on srv and checks what it returns:
// every object, trimmed, at the list's resourceVersion.
func firstList(t *testing.T, s *Source, wantRV string) {
	t.Helper()
	i := slices.IndexFunc(s.watched, func(w *watched) bool { return w.Name == "machineconfignodes.machineconfiguration.openshift.io" })
	obj, err := s.listWatch(s.watched[i]).(*cache.ListWatch).ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	list := obj.(*mcfgv1.MachineConfigNodeList)
	var names []string
	for _, m := range list.Items {
		names = append(names, m.Name)
		if len(m.ManagedFields) != 0 || m.Status.Conditions[0].Message != "" {
			t.Errorf("%s not trimmed: %+v", m.Name, m)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"n1", "n2", "n3"}) || list.ResourceVersion != wantRV {
		t.Errorf("first list: %v at resourceVersion %q, want n1 to n3 at %q", names, list.ResourceVersion, wantRV)
	}
}

// TestFirstListIsStreamed: an API server that serves WatchList sends the
// first list as a stream of objects, and no list is asked for.
func TestFirstListIsStreamed(t *testing.T) {
	srv := &firstListServer{t: t, stream: "ok"}
	s := New(liveClients(t, srv), snapshot.DefaultNamespace, slog.New(slog.DiscardHandler), nil)
	firstList(t, s, "42")
	if got := srv.requests(); !slices.Equal(got, []string{`stream rv="" match=NotOlderThan`}) {
		t.Errorf("requests %q, want one stream at the most recent state", got)
	}
}

// TestFirstListIsPagedWhenNotStreamed: an API server that refuses to
// stream is read in pages of pageSize at the most recent state (the watch
// cache answers resourceVersion "0" whole), and asked to stream once only.
func TestFirstListIsPagedWhenNotStreamed(t *testing.T) {
	for _, refusal := range []string{"422", "error event"} {
		t.Run(refusal, func(t *testing.T) {
			srv := &firstListServer{t: t, stream: refusal}
			s := New(liveClients(t, srv), snapshot.DefaultNamespace, slog.New(slog.DiscardHandler), nil)
			firstList(t, s, "43")
			firstList(t, s, "43")
			page := fmt.Sprintf(`list rv="" limit=%d continue=`, pageSize)
			want := []string{`stream rv="" match=NotOlderThan`, page, page + "page2", page, page + "page2"}
			if got := srv.requests(); !slices.Equal(got, want) {
				t.Errorf("requests\n%q\nwant\n%q", got, want)
			}
		})
	}
}
