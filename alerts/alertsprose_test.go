package alerts

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
)

// forGracePeriod is Prometheus' --rules.alert.for-grace-period, as the
// platform Prometheus runs it: an alert whose for is shorter is not
// restored after a restart (rules.Group.RestoreForState).
const forGracePeriod = model.Duration(10 * time.Minute)

// TestAlertsDocProseNamesTheRules keeps the lists of alerts and rules
// that docs/alerts.md's prose names by a fact of the rules equal to the
// rules: each list opens where its sentence does and ends at its
// closing parenthesis or at the words that follow it.
func TestAlertsDocProseNamesTheRules(t *testing.T) {
	b, err := os.ReadFile(alertsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var info, short []string
	for _, r := range alertRules(t) {
		if r.Labels["severity"] == "info" {
			info = append(info, r.Alert)
		}
		if r.For < forGracePeriod {
			short = append(short, r.Alert)
			if r.For.String() != "5m" {
				t.Errorf("%s: %s has for: %s, and the list of alerts not restored after a restart says `for: 5m`", alertsDoc, r.Alert, r.For)
			}
		}
	}
	for _, l := range []struct {
		what, from, to string
		want           []string
	}{
		{"the info alerts (the paging policy)", "`info` alerts (", ")", info},
		{"the alerts not restored after a restart (for under --rules.alert.for-grace-period)", "`for: 5m` (", ")", short},
		{"the recording rules that hold their last value", "**Recording rules the `time()` alerts read hold their last value.**", "end with", heldRecords(t)},
	} {
		got, err := namedBetween(doc, l.from, l.to)
		if err != nil {
			t.Errorf("%s: %s: %v", alertsDoc, l.what, err)
			continue
		}
		if want := slices.Sorted(slices.Values(l.want)); !slices.Equal(got, want) {
			t.Errorf("%s: %s lists %v, the rules have %v: write the list again", alertsDoc, l.what, got, want)
		}
	}
}

// heldRecords are the recording rules that hold their last value through
// a scrape gap: <expr> or <itself> unless on () ocl_exporter_build_info.
func heldRecords(t *testing.T) []string {
	t.Helper()
	var held []string
	for name, expr := range recordExprs(t) {
		e, err := parser.ParseExpr(expr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if holdsItself(name, e) {
			held = append(held, name)
		}
	}
	return held
}

// codeSpan is a name in backticks.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// namedBetween returns, sorted, the names in backticks from the first
// from in doc to the next to.
func namedBetween(doc, from, to string) ([]string, error) {
	_, rest, ok := strings.Cut(doc, from)
	if !ok {
		return nil, fmt.Errorf("no %q", from)
	}
	list, _, ok := strings.Cut(rest, to)
	if !ok {
		return nil, fmt.Errorf("no %q after %q", to, from)
	}
	var names []string
	for _, m := range codeSpan.FindAllStringSubmatch(list, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return names, nil
}
