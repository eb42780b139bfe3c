package source_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// TestCaptureRoundTrips writes what the informers hold of the example with
// the capture writer and reads it back with the snapshot reader: the same
// objects of every resource, the capture's time, and a resource the
// capture could not read read back as not captured, with its reason.
func TestCaptureRoundTrips(t *testing.T) {
	from := sourcetest.Snapshot(t, "../examples/snapshot")
	status := map[string]snapshot.ResourceStatus{}
	for _, st := range from.Status() {
		status[st.Resource] = st
	}
	const lost, why = "secrets", `secrets is forbidden: User "alice" cannot list resource "secrets"`
	status[lost] = snapshot.ResourceStatus{Resource: lost, Seen: true, Problem: snapshot.ProblemForbidden, Reason: why}
	at := time.Date(2025, 10, 17, 12, 30, 0, 0, time.UTC)
	files, err := snapshot.CaptureFiles(from.Cached(), status, at, "https://api.example.test:6443", snapshot.DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "capture")
	if err := snapshot.WriteCapture(dir+"/", files, false); err != nil {
		t.Fatal(err)
	}

	back := sourcetest.Snapshot(t, dir)
	if got := back.CapturedAt(); !got.Equal(at) {
		t.Errorf("captured at %s, want %s", got, at)
	}
	want, got := objects(from.Cached()), objects(back.Cached())
	want[lost] = nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("objects read back differ from those written (-written +read):\n%s", d)
	}
	for _, st := range back.Status() {
		wantAvailable := status[st.Resource].Available && st.Resource != lost
		if st.Available != wantAvailable {
			t.Errorf("%s read back available=%t, want %t: %s", st.Resource, st.Available, wantAvailable, st.Reason)
		}
		if st.Resource == lost && (st.Problem != snapshot.ProblemNotCaptured || !strings.Contains(st.Reason, why)) {
			t.Errorf("%s read back as %s (%s), want not captured because %q", lost, st.Problem, st.Reason, why)
		}
	}
}

// objects are each resource's objects as YAML-comparable values, ordered,
// without the type meta a decoder sets and a cache may not keep.
func objects(cached []snapshot.Cached) map[string][]runtime.Object {
	out := map[string][]runtime.Object{}
	for _, c := range cached {
		var objs []runtime.Object
		for _, o := range c.Objects {
			o = o.DeepCopyObject()
			o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			objs = append(objs, o)
		}
		slices.SortFunc(objs, func(x, y runtime.Object) int {
			mx, my := x.(metav1.Object), y.(metav1.Object)
			return strings.Compare(mx.GetNamespace()+"/"+mx.GetName(), my.GetNamespace()+"/"+my.GetName())
		})
		out[c.Resource.Name] = objs
	}
	return out
}

// TestCaptureWritesWholeOrNothing: when files fail half way, nothing is
// left at the output, and every failure is named.
func TestCaptureWritesWholeOrNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "snap")
	files := map[string][]byte{"a.yaml": []byte("a"), "no/such/b.yaml": []byte("b"), "no/such/c.yaml": []byte("c")}
	err := snapshot.WriteCapture(out+"/", files, false)
	if err == nil || !strings.Contains(err.Error(), "b.yaml") || !strings.Contains(err.Error(), "c.yaml") {
		t.Errorf("error %v, want both failed files named", err)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Error("a failed capture left a partial directory")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".capture-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
