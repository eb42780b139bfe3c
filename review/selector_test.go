package review

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// TestParseSelectorAsPromQL holds ParseSelector to the PromQL parser: the
// same selectors accepted, read as the same matchers, and the same
// refused.
func TestParseSelectorAsPromQL(t *testing.T) {
	for _, s := range []string{
		DefaultSelector,
		``,
		` job = "ocl-exporter" , namespace=~'ocl.*',`,
		`a!="x", b!~"y|z", c=` + "`raw \\d+`",
		`a="tab\there \u00e9 \xff \x41 \101 \"q\" 'single'"`,
		`a='it\'s "quoted"'`,
		`a="é"`,
		`__name__=~"mosb_.*"`,
		`job="x"}) or vector(1) or up{a="`,
		`job="x"} or up{a="y"`,
		`job="x" or`,
		`job=x`,
		`job=="x"`,
		`job="x",,`,
		`,job="x"`,
		`1job="x"`,
		`job="unterminated`,
		"job=\"line\nbreak\"",
		`job=~"(unclosed"`,
		`job="\q"`,
		`job="x" job="y"`,
		`{job="x"}`,
	} {
		ours, err := ParseSelector(s)
		theirs, perr := parser.ParseMetricSelector("ocl_exporter_resource_available{" + s + "}")
		if (err == nil) != (perr == nil) {
			t.Errorf("%q: ours %v, PromQL %v", s, err, perr)
			continue
		}
		if err != nil {
			continue
		}
		theirs = slices.DeleteFunc(theirs, func(m *labels.Matcher) bool {
			return m.Name == model.MetricNameLabel && m.Value == "ocl_exporter_resource_available"
		})
		if len(ours) != len(theirs) {
			t.Errorf("%q: %d matchers, PromQL %d", s, len(ours), len(theirs))
			continue
		}
		for i, m := range ours {
			if m.Name != theirs[i].Name || m.Op != theirs[i].Type.String() || m.Value != theirs[i].Value {
				t.Errorf("%q: matcher %d is %s, PromQL %s", s, i, m, theirs[i])
			}
			// Written back, it reads as itself.
			if back, err := parser.ParseMetricSelector("x{" + m.String() + "}"); err != nil || back[0].Value != m.Value {
				t.Errorf("%q: %s reads back as %v, %v", s, m, back, err)
			}
		}
	}
}

// TestFetchRefusesAnInjectedSelector: a selector that closes its braces
// and appends a query is refused before any query is sent.
func TestFetchRefusesAnInjectedSelector(t *testing.T) {
	var r recorder
	_, _, err := Fetch(context.Background(), &r, window, Filter{Selector: `job="x"}) or vector(1) or up{a="`})
	if err == nil || !strings.Contains(err.Error(), "--selector") || len(r.queries) > 0 {
		t.Errorf("an injected selector: %v, %d queries sent", err, len(r.queries))
	}
}

// TestFetchMatchesThePoolExactly: a pool name holding regular expression
// syntax selects that pool only, in the alerts (a regular expression
// there) as in the exporter's series; every query parses as PromQL.
func TestFetchMatchesThePoolExactly(t *testing.T) {
	const pool = `x|.+`
	var r recorder
	if _, _, err := Fetch(context.Background(), &r, window, Filter{Pool: pool, Selector: DefaultSelector}); err != nil {
		t.Fatal(err)
	}
	for _, q := range r.queries {
		expr, err := parser.ParseExpr(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		for _, vs := range parser.ExtractSelectors(expr) {
			for _, m := range vs {
				if m.Name != "pool" {
					continue
				}
				for value, want := range map[string]bool{pool: true, "x": false, "worker": false, "": strings.Contains(q, "ALERTS")} {
					if m.Matches(value) != want {
						t.Errorf("%s: pool %q matched: %t, want %t", q, value, !want, want)
					}
				}
			}
		}
	}
}
