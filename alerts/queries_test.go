package alerts

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// docQueries are the PromQL blocks of docs/queries.md.
func docQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/queries.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```promql\n(.*?)```")
	var out []string
	for _, m := range block.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatal("docs/queries.md has no promql blocks")
	}
	return out
}

// TestDocQueriesAreTested: every query of docs/queries.md is, verbatim up
// to whitespace, the expr of a promql_expr_test in tests/queries.yaml.
func TestDocQueriesAreTested(t *testing.T) {
	b, err := os.ReadFile("tests/queries.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests []struct {
			PromqlExprTest []struct {
				Expr string `yaml:"expr"`
			} `yaml:"promql_expr_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, tg := range doc.Tests {
		for _, e := range tg.PromqlExprTest {
			tested[strings.Join(strings.Fields(e.Expr), " ")] = true
		}
	}
	for i, q := range docQueries(t) {
		if !tested[strings.Join(strings.Fields(q), " ")] {
			t.Errorf("docs/queries.md query %d has no promql_expr_test in tests/queries.yaml:\n%s", i+1, q)
		}
	}
}
