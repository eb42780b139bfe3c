// Package sourcetest runs the informers of package source on a snapshot
// for tests, so fixtures go through the same loader, informers and
// transforms as a real run, and writes the snapshots tests read:
// must-gathers of a scenario as each release lays them out, their
// archives and altered forms, large MachineConfig lists.
package sourcetest

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/test/scenario"
)

// Now is the fixed evaluation time of test views.
var Now = time.Date(2025, 10, 17, 13, 0, 0, 0, time.UTC)

// Source loads dir (a seed scenario whole: test/scenario), starts the
// informers and waits until they have synced.
func Source(t testing.TB, dir string) *source.Source {
	t.Helper()
	objs, err := snapshot.Load(os.DirFS(scenario.Dir(t, dir)), ".", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return FromObjects(t, objs)
}

// FromUnstructured runs the offline source (the --snapshot loader,
// informers and transforms) on objects as a file would hold them, such as
// a lifecycle stage's.
func FromUnstructured(t testing.TB, objs []*unstructured.Unstructured) *source.Source {
	t.Helper()
	var b bytes.Buffer
	for _, u := range objs {
		y, err := sigsyaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	loaded, err := snapshot.Load(fstest.MapFS{"objects.yaml": {Data: b.Bytes()}}, ".", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return FromObjects(t, loaded)
}

// FromObjects serves objs through the offline backend and the real
// informers, and waits until they have synced.
func FromObjects(t testing.TB, objs []runtime.Object) *source.Source {
	t.Helper()
	mem, err := snapshot.NewMemory(objs)
	if err != nil {
		t.Fatal(err)
	}
	return FromBackend(t, mem)
}

// Snapshot opens dir as --snapshot does, kinds it does not capture
// included, and waits until the informers have synced.
func Snapshot(t testing.TB, dir string) *source.Source {
	t.Helper()
	mem, err := snapshot.OpenSnapshot(t.Context(), scenario.Dir(t, dir), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return FromBackend(t, mem)
}

// FromBackend runs the real informers on backend and waits until they have
// synced.
func FromBackend(t testing.TB, backend source.Backend) *source.Source {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := source.New(backend, snapshot.DefaultNamespace, slog.New(slog.DiscardHandler), nil)
	s.Run(ctx)
	wait, done := context.WithTimeout(ctx, 30*time.Second)
	defer done()
	if err := s.WaitReady(wait); err != nil {
		t.Fatalf("objects did not sync: %v: %+v", err, s.Status())
	}
	return s
}

// Cluster is the view of dir at Now.
func Cluster(t testing.TB, dir string) *analysis.Cluster {
	t.Helper()
	return Source(t, dir).Cluster(Now)
}

// FlatAs runs the flat snapshot at dir with the resources like leaves not
// captured not captured, with the same reasons: a must-gather's report
// compared with the flat one of the same objects, given the same
// knowledge of what was captured.
func FlatAs(t testing.TB, dir string, like *source.Source) *source.Source {
	t.Helper()
	objs, err := snapshot.Load(os.DirFS(scenario.Dir(t, dir)), ".", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := snapshot.NewMemory(objs)
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]error{}
	for _, st := range like.Status() {
		if st.Problem != snapshot.ProblemNotCaptured {
			continue
		}
		err := &snapshot.NotCapturedError{Resource: st.Resource, Why: strings.TrimPrefix(st.Reason, "the snapshot did not capture "+st.Resource+": ")}
		if err.Error() != st.Reason {
			err = &snapshot.NotCapturedError{Resource: st.Resource, Namespace: snapshot.DefaultNamespace}
		}
		if err.Error() != st.Reason {
			t.Fatalf("%s: cannot reproduce %q", st.Resource, st.Reason)
		}
		errs[st.Resource] = err
	}
	return FromBackend(t, notCaptured{mem, errs})
}

type notCaptured struct {
	*snapshot.Memory
	errs map[string]error
}

func (n notCaptured) NotCaptured(r snapshot.Resource) error { return n.errs[r.Name] }
