//go:build e2emco

package mco

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	sigsyaml "sigs.k8s.io/yaml"
)

// writeStages, with E2E_MCO_WRITE set to a directory, writes what the MCO
// wrote (and what the test played) at each step after the first as the
// stages of a lifecycle, for a new lifecycle's fixture: dir/<lifecycle>/mNN.yaml
// holds the objects created or changed since the previous step, on the
// lifecycle's clock, the seed's uids and creation times kept, and
// dir/stages.yaml the stage list (at, note, apply, delete) to edit into
// its lifecycle.yaml.
func writeStages(t *testing.T, in *incident) {
	t.Helper()
	dir := os.Getenv("E2E_MCO_WRITE")
	if dir == "" || len(in.records) == 0 {
		return
	}
	dir = filepath.Join(dir, in.l.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seed := map[string]*unstructured.Unstructured{}
	for _, u := range in.states[0].Objects {
		seed[u.GetKind()+"/"+u.GetName()] = u
	}
	uids := map[string]string{} // the API server's uids to the seed's
	for k, u := range in.all(in.records[0]) {
		if s := seed[k]; s != nil {
			uids[string(u.GetUID())] = string(s.GetUID())
		}
	}
	prev := in.all(in.records[0])
	var stages []map[string]any
	for _, r := range in.records[1:] {
		cur := in.all(r)
		var changed bytes.Buffer
		for _, k := range slices.Sorted(maps.Keys(cur)) {
			if p := prev[k]; p != nil && equality.Semantic.DeepEqual(p.Object, cur[k].Object) {
				continue
			}
			seeded := seed[k]
			if _, ok := uids[string(cur[k].GetUID())]; !ok {
				seeded = nil // created during the incident, maybe under a seeded name
			}
			data, err := sigsyaml.Marshal(in.fixtureObject(cur[k], seeded, uids).Object)
			if err != nil {
				t.Fatal(err)
			}
			changed.WriteString("---\n")
			changed.WriteString(renamedText(string(data), in.names))
		}
		stage := map[string]any{"at": r.at, "note": r.note}
		if changed.Len() > 0 {
			name := fmt.Sprintf("m%02d.yaml", r.at)
			head := fmt.Sprintf("# Minute %d of %s: the objects created or changed since the step before, as\n"+
				"# the MCO's machine-os-builder and node controller wrote them (and the Job\n"+
				"# controller, kubelet, build pod and daemon as the test played them) in\n# make e2e-mco, %s.\n", r.at, in.l.Name, t.Name())
			if err := os.WriteFile(filepath.Join(dir, name), append([]byte(head), changed.Bytes()...), 0o644); err != nil {
				t.Fatal(err)
			}
			stage["apply"] = []string{name}
		}
		var gone []map[string]string
		for _, k := range slices.Sorted(maps.Keys(prev)) {
			if cur[k] == nil {
				gone = append(gone, map[string]string{"kind": prev[k].GetKind(), "namespace": prev[k].GetNamespace(), "name": renamedText(prev[k].GetName(), in.names)})
			}
		}
		if gone != nil {
			stage["delete"] = gone
		}
		stages = append(stages, stage)
		prev = cur
	}
	data, err := sigsyaml.Marshal(map[string]any{"stages": stages})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stages.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("the MCO's writes as lifecycle stages are in %s", dir)
}

// all are the record's objects and pods, by "Kind/name" with the
// lifecycle's names: a build the MCO recreated under another name than
// the seed's replaces it.
func (in *incident) all(r record) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for k, u := range r.objects {
		out[renamedText(k, in.names)] = u
	}
	for i := range r.pods {
		out[renamedText("Pod/"+r.pods[i].GetName(), in.names)] = &r.pods[i]
	}
	return out
}

// fixtureObject is u as a fixture holds it: without the API server's
// bookkeeping, the seed's uid and creation time where u is the seed's,
// owners by the seed's uids, timestamps on the lifecycle's clock.
func (in *incident) fixtureObject(u, seeded *unstructured.Unstructured, uids map[string]string) *unstructured.Unstructured {
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
	if seeded != nil {
		u.SetUID(seeded.GetUID())
		u.SetCreationTimestamp(seeded.GetCreationTimestamp())
	}
	refs := u.GetOwnerReferences()
	for i := range refs {
		if uid, ok := uids[string(refs[i].UID)]; ok {
			refs[i].UID = types.UID(uid)
		}
	}
	u.SetOwnerReferences(refs)
	u.Object = in.reclock(u.Object).(map[string]any)
	return u
}

// reclock moves the timestamps the MCO wrote to the start of the
// lifecycle minute of their step, and the seed's back to its clock.
func (in *incident) reclock(v any) any {
	return mapTimes(v, func(t time.Time, s string) string {
		if in.fromSeed(t, s) {
			return t.Add(in.l.Start.Sub(in.begin)).UTC().Format(time.RFC3339)
		}
		return in.l.At(in.mcoMinute(s)).UTC().Format(time.RFC3339)
	})
}

// renamedText replaces the MCO's generated names by the lifecycle's.
func renamedText(s string, names map[string]string) string {
	for from, to := range names {
		s = strings.ReplaceAll(s, from, to)
	}
	return s
}
