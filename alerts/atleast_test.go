package alerts

import (
	"strings"
	"testing"
)

func TestAtLeast(t *testing.T) {
	const s = "x:failures"
	for _, c := range []struct {
		name  string
		rules map[string]rule
		want  int
		err   string
	}{
		{"agree", map[string]rule{"A": {Expr: "a and " + s + " >= 3"}, "B": {Expr: "b unless on (x) " + s + " >= 3\n"}}, 3, ""},
		{"disagree", map[string]rule{"A": {Expr: s + " >= 2"}, "B": {Expr: s + " >= 3"}}, 0, "disagree"},
		{"none", map[string]rule{"A": {Expr: s + " > 2"}}, 0, "no rule"},
		{"not a count", map[string]rule{"A": {Expr: s + " >= two"}}, 0, "not a count"},
	} {
		n, err := atLeast(c.rules, s)
		if n != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: atLeast = %d, %v; want %d, %q", c.name, n, err, c.want, c.err)
		}
	}
}
