package diagnose

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// RunbookBase is the base the golden files are written with.
const testRunbookBase = "https://example.com/runbooks/"

// fixtures are every scenario the collectors test, the seeds' incidents
// among them, and the example snapshot, by golden name.
func fixtures(t *testing.T) map[string]string {
	t.Helper()
	dirs, err := filepath.Glob("../testdata/scenarios/*")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"example": "../examples/snapshot"}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out[filepath.Base(d)] = d
		}
	}
	return out
}

// report diagnoses a fixture directory at sourcetest.Now.
func report(t *testing.T, dir string, o Options) *Report {
	t.Helper()
	s := sourcetest.Source(t, dir)
	if o.RunbookBase == "" {
		o.RunbookBase = testRunbookBase
	}
	return New(s.Cluster(sourcetest.Now), s.Status(), o)
}

// TestGolden renders every fixture in every format and compares with
// testdata/<fixture>.{txt,json,md}; go test -update rewrites them.
func TestGolden(t *testing.T) {
	for name, dir := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			r := report(t, dir, Options{})
			for format, ext := range map[string]string{FormatText: ".txt", FormatJSON: ".json", FormatMarkdown: ".md"} {
				var buf bytes.Buffer
				if err := Write(&buf, r, format, TextOptions{}); err != nil {
					t.Fatal(err)
				}
				golden(t, filepath.Join("testdata", name+ext), buf.Bytes())
			}
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
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
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (go test -update rewrites it after review), -want +got:\n%s", path, d)
	}
}

// TestStatusPage renders the example as the status page: a golden file,
// and the page must name each failing check's runbook.
func TestStatusPage(t *testing.T) {
	r := report(t, "../examples/snapshot", Options{})
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/example.html", buf.Bytes())
}
