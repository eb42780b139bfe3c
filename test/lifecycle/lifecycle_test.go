package lifecycle

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// write makes a lifecycle directory with the given files.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const objects = `apiVersion: v1
kind: Node
metadata:
  name: n1
  annotations: {state: Done, keep: "yes"}
status:
  conditions:
  - {type: Ready, status: "True"}
  - {type: DiskPressure, status: "False"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c1, namespace: ns}
`

func TestStatesApplyPatchesConditionsAndDeletes(t *testing.T) {
	dir := write(t, map[string]string{
		"snap.yaml": objects,
		File: `start: 2025-10-17T11:00:00Z
end: 10
stages:
  - at: 0
    snapshot: snap.yaml
  - at: 4
    patch:
      - kind: Node
        name: n1
        merge: {metadata: {annotations: {state: Working, keep: null}}}
        conditions:
          - {type: Ready, status: "False"}
          - {type: NetworkUnavailable, status: "True"}
    delete:
      - {kind: ConfigMap, namespace: ns, name: c1}
expect:
  - during: [0, 10]
    firing: []
`,
	})
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	states, err := l.States()
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 2 || states[0].Until != 4 || states[1].Until != 11 {
		t.Fatalf("stages %+v", states)
	}
	if len(states[0].Objects) != 2 || len(states[1].Objects) != 1 {
		t.Fatalf("objects: %d then %d, want 2 then 1", len(states[0].Objects), len(states[1].Objects))
	}
	before, after := states[0].Objects[0], states[1].Objects[0]
	if got := before.GetAnnotations(); !reflect.DeepEqual(got, map[string]string{"state": "Done", "keep": "yes"}) {
		t.Errorf("the first stage changed: %v", got)
	}
	if got := after.GetAnnotations(); !reflect.DeepEqual(got, map[string]string{"state": "Working"}) {
		t.Errorf("annotations %v, want state Working and keep deleted", got)
	}
	conds := after.Object["status"].(map[string]any)["conditions"].([]any)
	want := []any{
		map[string]any{"type": "Ready", "status": "False"},
		map[string]any{"type": "DiskPressure", "status": "False"},
		map[string]any{"type": "NetworkUnavailable", "status": "True"},
	}
	if !reflect.DeepEqual(conds, want) {
		t.Errorf("conditions %v, want %v", conds, want)
	}
}

func TestLoadRejects(t *testing.T) {
	for name, tc := range map[string]struct{ lifecycle, want string }{
		"first stage not at 0":  {"start: 2025-10-17T11:00:00Z\nend: 5\nstages: [{at: 1, snapshot: snap.yaml}]\n", "minute 0"},
		"stages out of order":   {"start: 2025-10-17T11:00:00Z\nend: 5\nstages: [{at: 0, snapshot: snap.yaml}, {at: 3}, {at: 2}]\n", "time order"},
		"minute expected twice": {"start: 2025-10-17T11:00:00Z\nend: 5\nstages: [{at: 0, snapshot: snap.yaml}]\nexpect: [{during: [0, 3], firing: []}, {at: [3], firing: []}]\n", "already expected"},
		"minute after the end":  {"start: 2025-10-17T11:00:00Z\nend: 5\nstages: [{at: 0, snapshot: snap.yaml}]\nexpect: [{at: [6], firing: []}]\n", "outside"},
		"unknown field":         {"start: 2025-10-17T11:00:00Z\nend: 5\nstages: [{at: 0, snapshots: snap.yaml}]\n", "unknown field"},
		"bad exporter state":    {"start: 2025-10-17T11:00:00Z\nend: 5\nstages: [{at: 0, snapshot: snap.yaml, exporter: off}]\n", "exporter"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(write(t, map[string]string{"snap.yaml": objects, File: tc.lifecycle}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	dir := write(t, map[string]string{"snap.yaml": objects, File: "start: 2025-10-17T11:00:00Z\nend: 5\nstages: [{at: 0, snapshot: snap.yaml}, {at: 2, delete: [{kind: Node, name: n2}]}]\nexpect: [{during: [0, 5], firing: []}]\n"})
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.States(); err == nil || !strings.Contains(err.Error(), "no Node n2") {
		t.Errorf("deleting a missing object: error %v, want one naming it", err)
	}
}
