//go:build e2emco

package mco

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// compared are the kinds whose MCO-written fields the comparison reads,
// with the namespace they are listed in.
var compared = []struct {
	kind string
	gvr  schema.GroupVersionResource
	ns   string
}{
	{"MachineConfigPool", mcpGVR, ""},
	{"MachineOSConfig", moscGVR, ""},
	{"MachineOSBuild", mosbGVR, ""},
	{"Node", nodeGVR, ""},
	{"Job", jobGVR, mcoNamespace},
	{"ConfigMap", cmGVR, mcoNamespace},
	{"Secret", secretGVR, mcoNamespace},
}

// objects reads the compared kinds, by "Kind/name".
func (w *world) objects(ctx context.Context) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, c := range compared {
		list, err := w.resource(c.gvr, c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			w.t.Fatalf("list %s: %v", c.gvr.Resource, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			u.SetKind(c.kind)
			out[c.kind+"/"+u.GetName()] = u
		}
	}
	return out
}

// facts are what the MCO's controllers write, one "Kind/name field" to
// its value: the pool's conditions, counts and configuration, the builds'
// conditions, specs, image and job, the MachineOSConfig's current build
// and image, the nodes' targets, and the build Jobs, ConfigMaps and
// Secrets that exist; the MCO's labels, annotations and owners of each.
// A condition's value ends with the lifecycle minute of its
// lastTransitionTime, by minute. Uids and resource versions are left out:
// the API server's are today's.
func facts(objs map[string]*unstructured.Unstructured, minute func(string) int) map[string]string {
	out := map[string]string{}
	for key, u := range objs {
		switch u.GetKind() {
		case "MachineConfigPool":
			conditionFacts(out, key, u, minute)
			for _, f := range []string{"machineCount", "updatedMachineCount", "readyMachineCount", "unavailableMachineCount", "degradedMachineCount"} {
				v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", f)
				out[key+" status."+f] = fmt.Sprint(v) // int64 from the API server, float64 from a fixture
			}
			out[key+" status.configuration.name"] = nested(u, "status", "configuration", "name")
		case "MachineOSBuild":
			conditionFacts(out, key, u, minute)
			metaFacts(out, key, u)
			for _, f := range [][]string{{"status", "digestedImagePushSpec"}, {"spec", "renderedImagePushSpec"},
				{"spec", "machineConfig", "name"}, {"spec", "machineOSConfig", "name"}, {"status", "builder", "job", "name"}} {
				out[key+" "+strings.Join(f, ".")] = nested(u, f...)
			}
		case "MachineOSConfig":
			metaFacts(out, key, u)
			out[key+" status.currentImagePullSpec"] = nested(u, "status", "currentImagePullSpec")
			out[key+" status.machineOSBuild.name"] = nested(u, "status", "machineOSBuild", "name")
		case "Node":
			for _, a := range []string{desiredConfigAnno, desiredImageAnno} {
				out[key+" annotation "+strings.TrimPrefix(a, annoPrefix)] = u.GetAnnotations()[a]
			}
		default: // a build's Job, ConfigMaps and Secrets: do they exist
			// etc-policy- and etc-registries- exist only when the rendered
			// config has those files, which the fixtures' abridged
			// rendered configs lack (buildrequest.go ConfigMaps).
			if strings.HasPrefix(u.GetName(), "etc-policy-") || strings.HasPrefix(u.GetName(), "etc-registries-") {
				continue
			}
			if _, ok := u.GetLabels()[annoPrefix+"machine-os-build"]; ok {
				out[key] = "exists"
				metaFacts(out, key, u)
			}
		}
	}
	return out
}

// conditionFacts are an object's conditions: status, reason, message and
// the minute of their last transition.
func conditionFacts(out map[string]string, key string, u *unstructured.Unstructured, minute func(string) int) {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		m, _ := c.(map[string]any)
		s := func(k string) string { v, _ := m[k].(string); return v }
		out[key+" condition "+s("type")] = fmt.Sprintf("%s %q %q", s("status"), s("reason"), s("message"))
		out[key+" condition "+s("type")+" minute"] = strconv.Itoa(minute(s("lastTransitionTime")))
	}
}

// metaFacts are the labels and annotations the MCO sets (its own
// prefix), and the owner references by kind and name. The job-uid
// annotation is a uid.
func metaFacts(out map[string]string, key string, u *unstructured.Unstructured) {
	for field, m := range map[string]map[string]string{"label": u.GetLabels(), "annotation": u.GetAnnotations()} {
		for k, v := range m {
			if strings.HasPrefix(k, annoPrefix) && k != jobUIDAnno {
				out[key+" "+field+" "+strings.TrimPrefix(k, annoPrefix)] = v
			}
		}
	}
	for _, o := range u.GetOwnerReferences() {
		out[key+" owner "+o.Kind+"/"+o.Name] = fmt.Sprintf("controller=%t", o.Controller != nil && *o.Controller)
	}
}

func nested(u *unstructured.Unstructured, fields ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, fields...)
	return v
}

// compareWithLifecycle compares, at each recorded minute, the facts of
// what the MCO wrote (its names replaced by the lifecycle's) with those of
// the lifecycle's stage at that minute; every difference fails the test
// unless the allowlist (allowed) says why it cannot matter.
func compareWithLifecycle(t *testing.T, in *incident) {
	t.Helper()
	var diffs []string
	for _, r := range in.records {
		st := in.states[0]
		for _, s := range in.states {
			if s.At <= r.at {
				st = s
			}
		}
		want := map[string]*unstructured.Unstructured{}
		for _, u := range st.Objects {
			want[u.GetKind()+"/"+u.GetName()] = u
		}
		got := renamed(facts(r.objects, in.mcoMinute), in.names)
		exp := facts(want, in.fixtureMinute)
		for _, k := range slices.Sorted(maps.Keys(union(got, exp))) {
			g, gok := got[k]
			e, eok := exp[k]
			var d string
			switch {
			case gok && eok && (g == e || sameMinute(k, g, e)):
				continue
			case !eok:
				d = fmt.Sprintf("the MCO wrote %s, the lifecycle has nothing", g)
			case !gok:
				d = fmt.Sprintf("the lifecycle has %s, the MCO wrote nothing", e)
			default:
				d = fmt.Sprintf("the MCO wrote %s, the lifecycle has %s", g, e)
			}
			if !isAllowed(in.l.Name, r.at, k) {
				diffs = append(diffs, fmt.Sprintf("minute %d %s: %s", r.at, k, d))
			}
		}
	}
	if len(diffs) > 0 {
		t.Errorf("what the MCO wrote differs from testdata/lifecycles/%s in %d fields (fix the fixture, or list the difference in allowed and docs/coverage.md with why it cannot matter):\n  %s",
			in.l.Name, len(diffs), strings.Join(diffs, "\n  "))
	}
}

// sameMinute says whether two transition minutes are one: the MCO's is
// the step it wrote in, which stands for the minutes since the previous
// step, and a fixture dates a stage's changes within the minute before it
// or the minute of it alike. No rule measures a transition's age to the
// minute: the shortest for: of the alerts is 5 minutes.
func sameMinute(key, got, want string) bool {
	if !strings.HasSuffix(key, " minute") {
		return false
	}
	g, err1 := strconv.Atoi(got)
	w, err2 := strconv.Atoi(want)
	return err1 == nil && err2 == nil && g-w <= 1 && w-g <= 1
}

// mcoMinute is the lifecycle minute of a timestamp the MCO wrote: the
// step it was written in, or, for a time the MCO kept from the seed
// (before minute 0 or within it), the seed's own minute.
func (in *incident) mcoMinute(ts string) int {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return -1
	}
	if in.fromSeed(t, ts) {
		return int(math.Floor(t.Sub(in.begin).Minutes()))
	}
	for _, r := range in.records {
		if !t.After(r.when) {
			return r.at
		}
	}
	return in.l.End
}

// fromSeed says whether timestamp ts (t parsed) is the seed's: before
// minute 0, or one of the seed's own (the MCO keeps a condition's time
// while its status holds: SetMachineConfigPoolCondition). A step's write
// in the very second of a seed's time would count as the seed's.
func (in *incident) fromSeed(t time.Time, ts string) bool {
	return t.Before(in.begin) || in.seedTimes[ts]
}

// fixtureMinute is the lifecycle minute of a fixture's timestamp.
func (in *incident) fixtureMinute(ts string) int {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return -1
	}
	return int(math.Floor(t.Sub(in.l.Start).Minutes()))
}

// renamed replaces the MCO's generated names (builds and what carries
// their names) by the lifecycle's, in keys and values.
func renamed(f map[string]string, names map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range f {
		for from, to := range names {
			k, v = strings.ReplaceAll(k, from, to), strings.ReplaceAll(v, from, to)
		}
		out[k] = v
	}
	return out
}

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
