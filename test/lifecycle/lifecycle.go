// Package lifecycle reads the incident lifecycles of testdata/lifecycles:
// a sequence of stages, each the objects of the cluster from a given
// minute on, and the alerts expected firing at chosen minutes. The alert
// tests (alerts/lifecycles_test.go) replay them through the exporter's
// offline path and promtool; the integration suite (test/e2e) applies
// them to a real API server and counts Alertmanager's notifications.
package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	"github.com/ocl-exporter/ocl_exporter/test/scenario"
)

// File is the name of a lifecycle's description in its directory.
const File = "lifecycle.yaml"

// Lifecycle is one testdata/lifecycles/<name>/lifecycle.yaml.
type Lifecycle struct {
	Name string `json:"-"`
	Dir  string `json:"-"`
	// Description says what happens, and which page is meant, in prose.
	Description string `json:"description"`
	// Start is the wall time of minute 0; the fixtures' timestamps are
	// on the same clock, so rules that read time() see real ages.
	Start time.Time `json:"start"`
	// End is the last minute replayed.
	End int `json:"end"`
	// Healthy: nothing in this lifecycle may notify anyone.
	Healthy bool          `json:"healthy"`
	Stages  []Stage       `json:"stages"`
	Expect  []Expectation `json:"expect"`
}

// Stage is the state of the cluster from minute At until the next stage.
// It starts from the previous stage's objects (none for the first), then
// Snapshot replaces them all, Apply adds or replaces objects, Patch merges
// into objects, Delete removes them.
type Stage struct {
	At int `json:"at"`
	// Note says what changed, for the reader.
	Note     string   `json:"note"`
	Snapshot string   `json:"snapshot,omitempty"`
	Apply    []string `json:"apply,omitempty"`
	Patch    []Patch  `json:"patch,omitempty"`
	Delete   []Ref    `json:"delete,omitempty"`
	// Exporter is "" (serving), "down" (its targets fail to scrape) or
	// "rescheduled" (serving from new pods, as after a Deployment rollout).
	Exporter string `json:"exporter,omitempty"`
}

// Exporter states of a stage.
const (
	ExporterServing     = ""
	ExporterDown        = "down"
	ExporterRescheduled = "rescheduled"
)

// Ref names one object.
type Ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (r Ref) String() string {
	if r.Namespace != "" {
		return r.Kind + " " + r.Namespace + "/" + r.Name
	}
	return r.Kind + " " + r.Name
}

func refOf(u *unstructured.Unstructured) Ref {
	return Ref{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Patch changes one object: Merge is a JSON merge patch (RFC 7386: maps
// merge, null deletes, lists and values replace), then each of Conditions
// is merged into the status condition of the same type, or appended, so a
// stage names only the conditions that change.
type Patch struct {
	Ref        `json:",inline"`
	Merge      map[string]any   `json:"merge,omitempty"`
	Conditions []map[string]any `json:"conditions,omitempty"`
}

// Expectation says that at each minute of At, and of every minute from During[0]
// to During[1] inclusive, exactly the alerts of Firing fire. An alert is
// written as a PromQL selector of its name and identifying labels, e.g.
// OCLNodeUpdateFailing{node="n1", pool="infra", class="image_not_found"};
// the rule's own labels (severity, namespace) are added by the reader.
type Expectation struct {
	At     []int    `json:"at,omitempty"`
	During []int    `json:"during,omitempty"`
	Firing []string `json:"firing"`
	// Why explains the expectation, for the reader.
	Why string `json:"why,omitempty"`
}

// Minutes are the minutes e checks, in order.
func (e Expectation) Minutes() []int {
	out := slices.Clone(e.At)
	if len(e.During) == 2 {
		for m := e.During[0]; m <= e.During[1]; m++ {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// State is the cluster during one stage.
type State struct {
	Stage
	Until   int // first minute of the next stage, End+1 for the last
	Objects []*unstructured.Unstructured
}

// All reads every lifecycle under dir (testdata/lifecycles).
func All(dir string) ([]*Lifecycle, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", File))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no %s under %s", File, dir)
	}
	var out []*Lifecycle
	for _, f := range files {
		l, err := Load(filepath.Dir(f))
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// Load reads dir/lifecycle.yaml and checks its shape.
func Load(dir string) (*Lifecycle, error) {
	path := filepath.Join(dir, File)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := &Lifecycle{Name: filepath.Base(dir), Dir: dir}
	if err := sigsyaml.UnmarshalStrict(b, l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := l.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// check wants stages in time order from minute 0, and an expectation for
// every minute of the lifecycle, exactly one.
func (l *Lifecycle) check() error {
	if l.Start.IsZero() || l.End <= 0 || len(l.Stages) == 0 {
		return fmt.Errorf("start, end and stages are required")
	}
	if l.Stages[0].At != 0 || l.Stages[0].Snapshot == "" {
		return fmt.Errorf("the first stage starts at minute 0 from a snapshot")
	}
	for i, s := range l.Stages {
		if i > 0 && s.At <= l.Stages[i-1].At {
			return fmt.Errorf("stage %d at minute %d: stages must be in time order", i, s.At)
		}
		if s.At > l.End {
			return fmt.Errorf("stage %d at minute %d: after the end, %d", i, s.At, l.End)
		}
		if !slices.Contains([]string{ExporterServing, ExporterDown, ExporterRescheduled}, s.Exporter) {
			return fmt.Errorf("stage %d: exporter %q, want down, rescheduled or nothing", i, s.Exporter)
		}
	}
	seen := map[int]bool{}
	for i, e := range l.Expect {
		if e.During != nil && (len(e.During) != 2 || e.During[0] > e.During[1]) {
			return fmt.Errorf("expectation %d: during is [from, to]", i)
		}
		ms := e.Minutes()
		if len(ms) == 0 {
			return fmt.Errorf("expectation %d: no minute (at or during)", i)
		}
		for _, m := range ms {
			if m < 0 || m > l.End {
				return fmt.Errorf("expectation %d: minute %d outside [0, %d]", i, m, l.End)
			}
			if seen[m] {
				return fmt.Errorf("expectation %d: minute %d is already expected", i, m)
			}
			seen[m] = true
		}
	}
	for m := 0; m <= l.End; m++ {
		if !seen[m] {
			return fmt.Errorf("minute %d has no expectation: say what fires at every minute, nothing included", m)
		}
	}
	return nil
}

// States builds the objects of every stage.
func (l *Lifecycle) States() ([]State, error) {
	var out []State
	var objs []*unstructured.Unstructured
	for i, s := range l.Stages {
		var err error
		if objs, err = l.apply(objs, s); err != nil {
			return nil, fmt.Errorf("%s stage %d (minute %d): %w", l.Name, i, s.At, err)
		}
		until := l.End + 1
		if i+1 < len(l.Stages) {
			until = l.Stages[i+1].At
		}
		out = append(out, State{Stage: s, Until: until, Objects: objs})
	}
	return out, nil
}

// LoadSnapshot reads the objects of a stage's snapshot, a seed scenario
// whole (test/scenario).
func LoadSnapshot(dir string) (objs []*unstructured.Unstructured, _ error) {
	return objs, scenario.With(dir, func(dir string) error {
		var err error
		objs, err = cluster.LoadDir(dir)
		return err
	})
}

// apply derives a stage's objects from the previous ones, leaving those
// untouched.
func (l *Lifecycle) apply(prev []*unstructured.Unstructured, s Stage) ([]*unstructured.Unstructured, error) {
	objs := slices.Clone(prev)
	if s.Snapshot != "" {
		var err error
		if objs, err = LoadSnapshot(filepath.Join(l.Dir, s.Snapshot)); err != nil {
			return nil, err
		}
	}
	index := func(r Ref) int {
		return slices.IndexFunc(objs, func(u *unstructured.Unstructured) bool { return refOf(u) == r })
	}
	for _, a := range s.Apply {
		add, err := cluster.LoadDir(filepath.Join(l.Dir, a))
		if err != nil {
			return nil, err
		}
		for _, u := range add {
			if i := index(refOf(u)); i >= 0 {
				objs[i] = u
			} else {
				objs = append(objs, u)
			}
		}
	}
	for _, p := range s.Patch {
		i := index(p.Ref)
		if i < 0 {
			return nil, fmt.Errorf("patch: no %s", p.Ref)
		}
		patched := objs[i].DeepCopy()
		patched.Object = mergePatch(patched.Object, p.Merge).(map[string]any)
		if err := setConditions(patched, p.Conditions); err != nil {
			return nil, fmt.Errorf("patch %s: %w", p.Ref, err)
		}
		objs[i] = patched
	}
	for _, r := range s.Delete {
		i := index(r)
		if i < 0 {
			return nil, fmt.Errorf("delete: no %s", r)
		}
		objs = slices.Delete(objs, i, i+1)
	}
	return objs, nil
}

// mergePatch applies an RFC 7386 merge patch to target.
func mergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// setConditions merges each condition into the one of the same type in
// status.conditions, or appends it.
func setConditions(u *unstructured.Unstructured, conds []map[string]any) error {
	if len(conds) == 0 {
		return nil
	}
	list, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		return err
	}
	for _, c := range conds {
		i := slices.IndexFunc(list, func(x any) bool {
			m, ok := x.(map[string]any)
			return ok && m["type"] == c["type"]
		})
		if i < 0 {
			list = append(list, c)
			continue
		}
		list[i] = mergePatch(list[i], c)
	}
	return unstructured.SetNestedSlice(u.Object, list, "status", "conditions")
}

// At is the wall time of minute m.
func (l *Lifecycle) At(m int) time.Time { return l.Start.Add(time.Duration(m) * time.Minute) }

// StageBoundaries are the minutes a stage after the first starts at.
func (l *Lifecycle) StageBoundaries() []int {
	var out []int
	for _, s := range l.Stages[1:] {
		out = append(out, s.At)
	}
	return out
}
