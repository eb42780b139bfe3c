package scale

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/performance.svg and the tables in docs/performance.md from testdata/results.json and testdata/churn.json")

const (
	resultsFile = "testdata/results.json"
	churnFile   = "testdata/churn.json"
	svgFile     = "../../docs/performance.svg"
	docFile     = "../../docs/performance.md"
)

// between replaces what doc holds between the markers <!-- name:begin -->
// and <!-- name:end --> with text.
func between(t *testing.T, doc, name, text string) string {
	t.Helper()
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	head, rest, ok1 := strings.Cut(doc, begin)
	_, tail, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the %q and %q markers", docFile, begin, end)
	}
	return head + begin + "\n" + text + "\n" + end + tail
}

// TestPlotCurrent fails when the committed plot or tables are not what
// testdata/results.json (make bench-scale) and testdata/churn.json (make
// bench-churn) give; go test -run TestPlotCurrent -update rewrites them.
func TestPlotCurrent(t *testing.T) {
	rs, err := ReadResults[Result](resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	churn, err := ReadResults[ChurnResult](churnFile)
	if err != nil {
		t.Fatal(err)
	}
	svg := Plot(rs)
	doc, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	table := []byte(between(t, between(t, string(doc), "results", Table(rs)), "churn", ChurnTable(churn)))
	if *update {
		if err := os.WriteFile(svgFile, svg, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(docFile, table, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, _ := os.ReadFile(svgFile); !bytes.Equal(got, svg) {
		t.Errorf("%s is not current: go test ./test/scale/ -run TestPlotCurrent -update", svgFile)
	}
	if !bytes.Equal(doc, table) {
		t.Errorf("the results table in %s is not current: go test ./test/scale/ -run TestPlotCurrent -update", docFile)
	}
}

func TestNiceCeil(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 7: 10, 12: 20, 64: 100, 180: 200, 237.6: 250, 500: 500} {
		if got := niceCeil(v); got != want {
			t.Errorf("niceCeil(%g) = %g, want %g", v, got, want)
		}
	}
}
