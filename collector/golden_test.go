package collector

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// scenarios holds the seed scenarios shared by every test suite.
const scenarios = "../testdata/scenarios"

// view is a fixed Source for tests.
type view struct {
	cluster *analysis.Cluster
	status  []snapshot.ResourceStatus
}

func (v view) Cluster(time.Time) *analysis.Cluster { return v.cluster }
func (v view) Status() []snapshot.ResourceStatus   { return v.status }

// scenarioView runs the offline source on a scenario directory.
func scenarioView(t *testing.T, dir string) view {
	t.Helper()
	s := sourcetest.Source(t, dir)
	return view{cluster: s.Cluster(sourcetest.Now), status: s.Status()}
}

// assertGolden compares what c exposes for the named families (all when
// none are named) with testdata/<file>; go test -update rewrites it.
func assertGolden(t *testing.T, c prometheus.Collector, file string, names ...string) {
	t.Helper()
	got := exposition(t, c, names...)
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if err := testutil.CollectAndCompare(c, bytes.NewReader(want), names...); err != nil {
		t.Errorf("%s differs (go test -update rewrites it after review):\n%v", path, err)
	}
}

// exposition is the text format of c's families, filtered to names if any.
func exposition(t *testing.T, c prometheus.Collector, names ...string) []byte {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range families {
		if len(names) == 0 || slices.Contains(names, mf.GetName()) {
			if err := enc.Encode(mf); err != nil {
				t.Fatal(err)
			}
		}
	}
	return buf.Bytes()
}

// stageCollector exposes one stage alone, for per-stage golden files.
type stageCollector struct {
	stage
	view view
}

func (s stageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, sp := range s.specs() {
		ch <- sp.desc
	}
}

func (s stageCollector) Collect(ch chan<- prometheus.Metric) {
	forward(ch, func(samples chan<- *sample) {
		s.collect(analysis.Analyze(s.view.cluster, DefaultOptions.BuildHistory), samples)
	})
}

// testStage runs one stage alone on each scenario and checks, per scenario,
// the golden file testdata/<dir>/<scenario>.prom and promlint; across the
// scenarios, that every family the stage declares is emitted at least once.
// The golden files are the spec of what each situation looks like.
func testStage(t *testing.T, dir string, newStage func() stage, scenarioNames ...string) {
	t.Helper()
	emitted := map[string]bool{}
	for _, name := range scenarioNames {
		t.Run(name, func(t *testing.T) {
			c := stageCollector{newStage(), scenarioView(t, filepath.Join(scenarios, name))}
			assertGolden(t, c, filepath.Join(dir, name+".prom"))
			problems, err := promlint.New(bytes.NewReader(exposition(t, c))).Lint()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("promlint: %s: %s", p.Metric, p.Text)
			}
			for _, sp := range c.specs() {
				if testutil.CollectAndCount(c, sp.Name) > 0 {
					emitted[sp.Name] = true
				}
			}
		})
	}
	for _, sp := range newStage().specs() {
		if !emitted[sp.Name] {
			t.Errorf("no scenario emits %s", sp.Name)
		}
	}
}

func TestExporterStageReportsEachResource(t *testing.T) {
	v := view{cluster: &analysis.Cluster{}, status: []snapshot.ResourceStatus{
		{Resource: "machineosbuilds.machineconfiguration.openshift.io", Seen: true, Problem: snapshot.ProblemNotServed},
		{Resource: "secrets", Seen: true, Available: true, Synced: true},
	}}
	assertGolden(t, stageCollector{newExporterStage(v), v}, "exporter.prom")
}
