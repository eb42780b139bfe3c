package source

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"
)

// notServed is the API server's answer for a version no CRD serves.
const notServed = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`

// v416Builds are the MachineOSBuilds of a 4.16 scenario, in v1alpha1.
func v416Builds(t *testing.T) []unstructured.Unstructured {
	t.Helper()
	y, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", "v416-build-pod-failed", "machineosbuilds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	var l unstructured.UnstructuredList
	if err := l.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) < 2 {
		t.Fatalf("want two builds in the fixture, have %d", len(l.Items))
	}
	return l.Items
}

// olderAPIServer serves MachineOSBuilds as a 4.16 API server does, in
// v1alpha1 only, until upgraded is set: then in v1 only. Its watch
// stream is the API server's: one JSON WatchEvent per line.
func olderAPIServer(t *testing.T, builds []unstructured.Unstructured, upgraded *atomic.Bool) *Clients {
	t.Helper()
	const v1, v1alpha1 = "/apis/machineconfiguration.openshift.io/v1/machineosbuilds", "/apis/machineconfiguration.openshift.io/v1alpha1/machineosbuilds"
	frame := func(w http.ResponseWriter, typ string, obj any) {
		b, err := json.Marshal(map[string]any{"type": typ, "object": obj})
		if err != nil {
			t.Error(err)
		}
		fmt.Fprintf(w, "%s\n", b)
	}
	return liveClients(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		path, watching := r.URL.Path, r.URL.Query().Get("watch") == "true"
		switch {
		case path == v1 && upgraded.Load() && !watching:
			fmt.Fprint(w, `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineOSBuildList","metadata":{"resourceVersion":"20"},"items":[]}`)
		case path == v1alpha1 && !upgraded.Load() && !watching:
			fmt.Fprintf(w, `{"apiVersion":"machineconfiguration.openshift.io/v1alpha1","kind":"MachineOSBuildList","metadata":{"resourceVersion":"10"},"items":[%s]}`, must(json.Marshal(builds[0].Object)))
		case path == v1alpha1 && !upgraded.Load() && r.URL.Query().Get("resourceVersion") == "10":
			added, modified := builds[1].DeepCopy(), builds[1].DeepCopy()
			added.SetResourceVersion("11")
			modified.SetResourceVersion("12")
			modified.SetLabels(map[string]string{"changed": "true"})
			frame(w, "ADDED", added.Object)
			frame(w, "MODIFIED", modified.Object)
			frame(w, "BOOKMARK", map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1alpha1", "kind": "MachineOSBuild",
				"metadata": map[string]any{"resourceVersion": "13", "annotations": map[string]any{"k8s.io/initial-events-end": "true"}}})
			frame(w, "DELETED", modified.Object)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, notServed)
		}
	}))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestClientsReadAnOlderVersion lists and watches MachineOSBuilds the API
// server serves in v1alpha1 only, as v1 objects, every kind of watch event
// included, and goes back to v1 once v1alpha1 is gone.
func TestClientsReadAnOlderVersion(t *testing.T) {
	builds := v416Builds(t)
	var upgraded atomic.Bool
	c := olderAPIServer(t, builds, &upgraded)
	ctx := context.Background()
	mosbs := resource(t, "machineosbuilds.machineconfiguration.openshift.io")

	list, err := c.List(ctx, mosbs, "", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ml := list.(*mcfgv1.MachineOSBuildList)
	if ml.ResourceVersion != "10" || len(ml.Items) != 1 || ml.Items[0].Name != builds[0].GetName() ||
		ml.Items[0].Spec.MachineOSConfig.Name != "layered" || ml.Items[0].Spec.MachineConfig.Name == "" {
		t.Fatalf("the v1alpha1 list read as v1: %+v", ml)
	}

	w, err := c.Watch(ctx, mosbs, "", metav1.ListOptions{ResourceVersion: "10", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	want := []struct {
		typ watch.EventType
		rv  string
	}{{watch.Added, "11"}, {watch.Modified, "12"}, {watch.Bookmark, "13"}, {watch.Deleted, "12"}}
	for _, e := range want {
		got, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("the watch ended before its %s event", e.typ)
		}
		m, isBuild := got.Object.(*mcfgv1.MachineOSBuild)
		if got.Type != e.typ || !isBuild || m.ResourceVersion != e.rv {
			t.Fatalf("want a %s MachineOSBuild at resourceVersion %s, got %s %#v", e.typ, e.rv, got.Type, got.Object)
		}
		if e.typ != watch.Bookmark && (m.Name != builds[1].GetName() || m.Spec.MachineOSConfig.Name != "layered") {
			t.Errorf("%s event: %s of %q, not the v1alpha1 build read as v1", e.typ, m.Name, m.Spec.MachineOSConfig.Name)
		}
	}

	upgraded.Store(true)
	list, err = c.List(ctx, mosbs, "", metav1.ListOptions{})
	if err != nil {
		t.Fatalf("after the upgrade: %v", err)
	}
	if ml := list.(*mcfgv1.MachineOSBuildList); ml.ResourceVersion != "20" {
		t.Errorf("after the upgrade the list is not v1's: %+v", ml)
	}
	if _, ok := c.older.get(mosbs); ok {
		t.Error("after the upgrade the older version is still remembered")
	}
}
