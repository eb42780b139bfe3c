package source

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
	l := v416Objects(t, "machineosbuilds.yaml")
	if len(l) < 2 {
		t.Fatalf("want two builds in the fixture, have %d", len(l))
	}
	return l
}

// v416Objects are the objects of one file of a 4.16 scenario, in
// v1alpha1.
func v416Objects(t *testing.T, file string) []unstructured.Unstructured {
	t.Helper()
	y, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", "v416-build-pod-failed", file))
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	if !u.IsList() {
		return []unstructured.Unstructured{u}
	}
	l, err := u.ToList()
	if err != nil {
		t.Fatal(err)
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

// TestClientsLeaveOutAnotherKind: on the v1alpha1 fallback, a
// MachineOSBuild among MachineOSConfigs, in a list or a watch, is left out
// and logged, never read as a MachineOSConfig without a pool; so is an
// object of another version; a list of another kind fails naming it. The
// MachineOSConfigs around them are read.
func TestClientsLeaveOutAnotherKind(t *testing.T) {
	const v1alpha1 = "/apis/machineconfiguration.openshift.io/v1alpha1/machineosconfigs"
	mosc, mosb := v416Objects(t, "machineosconfigs.yaml")[0], v416Builds(t)[0]
	mosbV1 := mosb.DeepCopy()
	mosbV1.SetAPIVersion("machineconfiguration.openshift.io/v1")
	moscV1 := mosc.DeepCopy()
	moscV1.SetAPIVersion("machineconfiguration.openshift.io/v1")
	var listKind atomic.Value
	listKind.Store("MachineOSConfigList")
	c := liveClients(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == v1alpha1 && r.URL.Query().Get("watch") != "true":
			fmt.Fprintf(w, `{"apiVersion":"machineconfiguration.openshift.io/v1alpha1","kind":%q,"metadata":{"resourceVersion":"10"},"items":[%s,%s,%s]}`,
				listKind.Load(), must(json.Marshal(mosb.Object)), must(json.Marshal(moscV1.Object)), must(json.Marshal(mosc.Object)))
		case r.URL.Path == v1alpha1:
			for _, obj := range []*unstructured.Unstructured{&mosb, mosbV1, moscV1, &mosc} {
				fmt.Fprintf(w, "%s\n", must(json.Marshal(map[string]any{"type": "ADDED", "object": obj.Object})))
			}
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, notServed)
		}
	}))
	var logs strings.Builder
	c.logger = slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.Background()
	moscs := resource(t, "machineosconfigs.machineconfiguration.openshift.io")

	list, err := c.List(ctx, moscs, "", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ml := list.(*mcfgv1.MachineOSConfigList); len(ml.Items) != 1 || ml.Items[0].Spec.MachineConfigPool.Name != "layered" {
		t.Errorf("the list read %d MachineOSConfig(s), want the one of pool layered: %+v", len(ml.Items), ml.Items)
	}
	w, err := c.Watch(ctx, moscs, "", metav1.ListOptions{ResourceVersion: "10"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if e := <-w.ResultChan(); e.Type != watch.Added || e.Object.(*mcfgv1.MachineOSConfig).Spec.MachineConfigPool.Name != "layered" {
		t.Errorf("the watch's first event: %s %#v, want the MachineOSConfig of pool layered", e.Type, e.Object)
	}
	for _, want := range []string{
		"in=list want=\"MachineOSConfig machineconfiguration.openshift.io/v1alpha1\" got=\"MachineOSBuild machineconfiguration.openshift.io/v1alpha1\" name=" + mosb.GetName(),
		"in=list want=\"MachineOSConfig machineconfiguration.openshift.io/v1alpha1\" got=\"MachineOSConfig machineconfiguration.openshift.io/v1\"",
		"in=watch want=\"MachineOSConfig machineconfiguration.openshift.io/v1alpha1\" got=\"MachineOSBuild machineconfiguration.openshift.io/v1alpha1\" name=" + mosb.GetName(),
		"in=watch want=\"MachineOSConfig machineconfiguration.openshift.io/v1alpha1\" got=\"MachineOSBuild machineconfiguration.openshift.io/v1\"",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no log line with %s:\n%s", want, logs.String())
		}
	}

	listKind.Store("MachineOSBuildList")
	if _, err := c.List(ctx, moscs, "", metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "answered a MachineOSBuildList") {
		t.Errorf("a MachineOSBuildList for MachineOSConfigs: %v, want an error naming it", err)
	}
}

// TestTypedListRefusesAnotherKind: the current version's typed list must
// be the kind asked for; a MachineOSBuildList answered for MachineOSConfigs
// would otherwise read as an empty list and drop every MachineOSConfig.
func TestTypedListRefusesAnotherKind(t *testing.T) {
	c := liveClients(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineOSBuildList","metadata":{"resourceVersion":"10"},"items":[]}`)
	}))
	_, err := c.List(context.Background(), resource(t, "machineosconfigs.machineconfiguration.openshift.io"), "", metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "answered a MachineOSBuildList") {
		t.Errorf("a v1 MachineOSBuildList for MachineOSConfigs: %v, want an error naming it", err)
	}
}
