package collector

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/classify"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// realCase is one message of classify/testdata/real.yaml: text the
// exporter did not write, placed on the object OpenShift puts it on.
type realCase struct {
	// On (placement) is the object and field the text sits on; see
	// placements.
	On     string         `json:"placement"`
	Reason string         `json:"reason,omitempty"`
	Text   string         `json:"text"`
	Class  classify.Class `json:"class"`
	// Source is where the wording comes from: repository and path of the
	// format string, or the public page that quotes it.
	Source string `json:"source"`
	// Excerpt, when set, must be part of the excerpt the metrics quote.
	Excerpt string `json:"excerpt,omitempty"`
	// Batch is "held-out" for messages collected after the rules were
	// tuned on the others, and measured before any rule changed for them.
	Batch string `json:"batch,omitempty"`
	// Unreachable says why the exporter cannot see this object today. Such
	// a case is checked through classify alone and must read unknown from
	// the metrics: when the exporter learns to see it, the test says so.
	Unreachable string `json:"unreachable,omitempty"`
}

// The objects a real case is placed on, with the classify.Origin analysis
// reads them as, and the metric the class is read from.
var placements = map[string]struct {
	origin classify.Origin
	metric string
}{
	"build_log":                   {classify.OriginBuildLog, "mosb_failure_class"},
	"container_terminated":        {classify.OriginContainerTerminated, "mosb_failure_class"},
	"pod_waiting":                 {classify.OriginPodWaiting, "mosb_failure_class"},
	"pod_status":                  {classify.OriginPodStatus, "mosb_failure_class"},
	"pod_condition":               {classify.OriginPodStatus, "mosb_build_pod_stuck"},
	"job_condition":               {classify.OriginJobCondition, "mosb_failure_class"},
	"job_event":                   {classify.OriginEvent, "mosb_failure_class"},
	"build_condition":             {classify.OriginBuildCondition, "mosb_failure_class"},
	"node_reason":                 {classify.OriginNodeReason, "node_update_failure_class"},
	"machineconfignode_condition": {classify.OriginMCNCondition, "node_update_failure_class"},
	"pool_condition":              {classify.OriginPoolCondition, "node_update_failure_class"},
	"clusteroperator_condition":   {classify.OriginClusterOperator, "ocl_operator_degraded"},
	"operator_event":              {classify.OriginEvent, "ocl_operator_degraded_event_timestamp_seconds"},
	"build_event":                 {classify.OriginEvent, "mosb_failure_class"},
	"builder_pod_waiting":         {classify.OriginBuilderPod, "ocl_machine_os_builder_failure_info"},
	"builder_pod_crashed":         {classify.OriginBuilderPod, "ocl_machine_os_builder_failure_info"},
	"clusteroperator_upgradeable": {classify.OriginClusterOperator, "ocl_operator_upgrade_blocked"},
	"pool_updating":               {classify.OriginPoolCondition, "ocl_pool_update_stopped_info"},
}

// alone are the placements on an object a cluster has one of (the
// ClusterOperator, its events, the builder): one snapshot per case.
var alone = map[string]bool{
	"clusteroperator_condition": true, "operator_event": true,
	"builder_pod_waiting": true, "builder_pod_crashed": true, "clusteroperator_upgradeable": true,
}

func loadRealCorpus(t *testing.T) []realCase {
	t.Helper()
	b, err := os.ReadFile("../classify/testdata/real.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []realCase
	if err := yaml.UnmarshalStrict(b, &cases); err != nil {
		t.Fatalf("classify/testdata/real.yaml: %v", err)
	}
	for i, c := range cases {
		if _, ok := placements[c.On]; !ok {
			t.Fatalf("real.yaml case %d: unknown placement %q", i, c.On)
		}
		if c.Source == "" || strings.TrimSpace(c.Text) == "" && c.Reason == "" {
			t.Fatalf("real.yaml case %d: needs text (or a reason) and a source", i)
		}
		if !slices.Contains(classify.Classes(), c.Class) {
			t.Fatalf("real.yaml case %d: class %q is not in classify.Classes()", i, c.Class)
		}
	}
	return cases
}

const mcoNS = snapshot.DefaultNamespace

// caseName names the objects of case i.
func caseName(i int) string { return fmt.Sprintf("case-%03d", i) }

// measured is what the metrics say of one case.
type measured struct {
	class   classify.Class
	excerpt string
}

// scrapeCases runs the exporter's offline source and collector on objs and
// reads, per case, the class and excerpt its metric reports. A case with
// no series reads unknown.
func scrapeCases(t *testing.T, objs []runtime.Object, cases []realCase, idx []int) map[int]measured {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, o := range objs {
		setKind(o)
	}
	reg.MustRegister(New(sourcetest.FromObjects(t, objs), DefaultOptions))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// by metric name and case name: class, then excerpt from the info family
	classes := map[string]map[string]string{}
	excerpts := map[string]string{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			key := l["machineosbuild"] + l["node"]
			if mf.GetName() == "ocl_pool_update_stopped_info" {
				key = l["pool"]
			}
			switch mf.GetName() {
			case "mosb_failure_class", "mosb_build_pod_stuck", "node_update_failure_class", "ocl_operator_degraded_event_timestamp_seconds",
				"ocl_pool_update_stopped_info", "ocl_machine_os_builder_failure_info":
				if classes[mf.GetName()] == nil {
					classes[mf.GetName()] = map[string]string{}
				}
				classes[mf.GetName()][key] = l["class"]
			case "ocl_operator_degraded", "ocl_operator_upgrade_blocked":
				if m.GetGauge().GetValue() == 1 {
					classes[mf.GetName()] = map[string]string{"": l["class"]}
				}
			case "mosb_failure_info", "node_update_failure_info", "ocl_operator_degraded_info":
				excerpts[key] = l["excerpt"]
			}
			if e, ok := l["excerpt"]; ok && (mf.GetName() == "ocl_pool_update_stopped_info" || mf.GetName() == "ocl_machine_os_builder_failure_info") {
				excerpts[key] = e
			}
		}
	}
	out := map[int]measured{}
	for _, i := range idx {
		p := placements[cases[i].On]
		key := caseName(i)
		if alone[cases[i].On] {
			key = ""
		}
		got := measured{class: classify.Unknown, excerpt: excerpts[key]}
		if c, ok := classes[p.metric][key]; ok {
			got.class = classify.Class(c)
		}
		out[i] = got
	}
	return out
}

// measureRealCorpus places every case and reads its class from the metrics.
// Build and node cases share one snapshot; the ClusterOperator and its
// events are one per cluster, so each of those cases gets its own.
func measureRealCorpus(t *testing.T, cases []realCase) map[int]measured {
	t.Helper()
	var shared, single []int
	for i, c := range cases {
		if alone[c.On] {
			single = append(single, i)
		} else {
			shared = append(shared, i)
		}
	}
	objs := []runtime.Object{workerPool(cases, shared)}
	for _, i := range shared {
		objs = append(objs, realObjects(i, cases[i])...)
	}
	out := scrapeCases(t, objs, cases, shared)
	for _, i := range single {
		maps.Copy(out, scrapeCases(t, realObjects(i, cases[i]), cases, []int{i}))
	}
	return out
}

// tally counts right answers per key.
type tally map[string]*[2]int // right, total

func (ta tally) add(key string, right bool) {
	if ta[key] == nil {
		ta[key] = &[2]int{}
	}
	ta[key][1]++
	if right {
		ta[key][0]++
	}
}

func (ta tally) table(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | right | cases | accuracy |\n|---|---:|---:|---:|\n", title)
	for _, k := range slices.Sorted(maps.Keys(ta)) {
		r := ta[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %s%% |\n", k, r[0], r[1], strconv.FormatFloat(100*float64(r[0])/float64(r[1]), 'f', 1, 64))
	}
	return b.String()
}

// TestRealWorldAccuracy measures the classifier the way users meet it: each
// real message on the object OpenShift puts it on, through the offline
// source and the collector, read back from the metrics. go test -v prints
// the accuracy per class, per placement and the confusion pairs.
func TestRealWorldAccuracy(t *testing.T) {
	cases := loadRealCorpus(t)
	got := measureRealCorpus(t, cases)

	perClass, perOn, perBatch := tally{}, tally{}, tally{}
	confusion := map[string]int{}
	right, reachable, unreachable := 0, 0, 0
	for i, c := range cases {
		g := got[i]
		if c.Unreachable != "" {
			unreachable++
			if g.class != classify.Unknown {
				t.Errorf("%s (%s) is marked unreachable but the metrics say %s: drop the marker", caseName(i), c.On, g.class)
			}
			m := classify.Message{Origin: placements[c.On].origin, Reason: c.Reason, Text: c.Text}
			if r := classify.Classify(m); r.Class != c.Class {
				t.Errorf("%s (%s, unreachable): classify says %s, want %s", caseName(i), c.On, r.Class, c.Class)
			}
			continue
		}
		reachable++
		ok := g.class == c.Class
		if ok {
			right++
		} else {
			confusion[fmt.Sprintf("%s -> %s", c.Class, g.class)]++
			t.Logf("miss %s (%s, %s): want %s, got %s; excerpt %q", caseName(i), c.On, c.Source, c.Class, g.class, g.excerpt)
		}
		perClass.add(string(c.Class), ok)
		perOn.add(c.On, ok)
		perBatch.add(cmp.Or(c.Batch, "tuning"), ok)
		if c.Excerpt != "" && !strings.Contains(g.excerpt, c.Excerpt) {
			t.Errorf("%s (%s): excerpt %q does not quote %q", caseName(i), c.On, g.excerpt, c.Excerpt)
		}
		if c.Class == classify.Unknown && g.class != classify.Unknown {
			t.Errorf("%s (%s, %s): cause outside the set guessed as %s", caseName(i), c.On, c.Source, g.class)
		}
	}
	accuracy := float64(right) / float64(reachable)
	t.Logf("real corpus: %d of %d right through the metrics (%.1f%%); %d more the exporter cannot see, checked through classify\n%s\n%s\n%s",
		right, reachable, 100*accuracy, unreachable, perClass.table("class"), perOn.table("placement"), perBatch.table("batch"))
	for _, k := range slices.Sorted(maps.Keys(confusion)) {
		t.Logf("confusion %s: %d", k, confusion[k])
	}

	if len(cases) < 300 {
		t.Errorf("real corpus has %d cases, want at least 300", len(cases))
	}
	perClassAll := map[classify.Class]int{}
	for _, c := range cases {
		perClassAll[c.Class]++
	}
	for _, c := range classify.Classes() {
		if perClassAll[c] < 10 {
			t.Errorf("class %s has %d real cases, want at least 10", c, perClassAll[c])
		}
		if r := perClass[string(c)]; r != nil && float64(r[0]) < 0.9*float64(r[1]) {
			t.Errorf("class %s: %d of %d right, want at least 90%%", c, r[0], r[1])
		}
	}
	for on := range placements {
		if perOn[on] == nil {
			t.Errorf("no real case is placed on %s", on)
		}
	}
	if accuracy < 0.97 {
		t.Errorf("accuracy %.1f%%, want at least 97%%", 100*accuracy)
	}
	if h := perBatch["held-out"]; h == nil || float64(h[0]) < 0.97*float64(h[1]) {
		t.Errorf("held-out batch: %v (right, cases), want at least 97%% right", h)
	}
}
