package alerts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// orderProblems says which reads of order's groups go against it: a rule
// reading a series another group records, or ALERTS while another group
// has alerts, must come after that group.
func orderProblems(groups []rulefmt.RuleGroup, order []string) []string {
	var problems []string
	at := map[string]int{}
	for i, g := range order {
		at[g] = i
	}
	writers := map[string][]string{} // series name -> the groups writing it
	for _, g := range groups {
		if _, ok := at[g.Name]; !ok {
			problems = append(problems, fmt.Sprintf("group %s is not in GroupEvalOrder", g.Name))
		}
		for _, r := range g.Rules {
			names := []string{r.Record}
			if r.Alert != "" {
				names = []string{"ALERTS", "ALERTS/" + r.Alert, forState, forState + "/" + r.Alert}
			}
			for _, name := range names {
				if !slices.Contains(writers[name], g.Name) {
					writers[name] = append(writers[name], g.Name)
				}
			}
		}
	}
	if len(order) != len(groups) {
		problems = append(problems, fmt.Sprintf("GroupEvalOrder lists %d groups, the rule files hold %d", len(order), len(groups)))
	}
	for _, g := range groups {
		for _, r := range g.Rules {
			expr, err := parser.ParseExpr(r.Expr)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s/%s%s: %v", g.Name, r.Alert, r.Record, err))
				continue
			}
			parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
				vs, ok := node.(*parser.VectorSelector)
				if !ok {
					return nil
				}
				names, _ := selectorNames(vs) // exprProblems reports an unreadable selector
				if alerts := alertNamesListed(vs); len(names) == 1 && (names[0] == forState || names[0] == "ALERTS") && alerts != nil {
					for i, alert := range alerts { // named alerts': a group reads its own
						alerts[i] = names[0] + "/" + alert
					}
					names = alerts
				}
				for _, name := range names {
					for _, w := range writers[name] {
						if w != g.Name && at[w] >= at[g.Name] {
							problems = append(problems, fmt.Sprintf("%s/%s%s reads %s of group %s, which GroupEvalOrder evaluates after it", g.Name, r.Alert, r.Record, name, w))
						}
					}
				}
				return nil
			})
		}
	}
	return problems
}

// forState is the series Prometheus keeps of each pending and firing
// alert's activation time.
const forState = "ALERTS_FOR_STATE"

// alertNameMatched is the alertname a selector matches exactly, or "".
func alertNameMatched(vs *parser.VectorSelector) string {
	for _, m := range vs.LabelMatchers {
		if m.Name == "alertname" && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// alertNamesListed are the alertnames a selector matches, when it names
// them: one matched exactly, or a regular expression of names
// alternated; nil otherwise.
func alertNamesListed(vs *parser.VectorSelector) []string {
	if alert := alertNameMatched(vs); alert != "" {
		return []string{alert}
	}
	for _, m := range vs.LabelMatchers {
		if m.Name != "alertname" || m.Type != labels.MatchRegexp {
			continue
		}
		names := strings.Split(m.Value, "|")
		for _, n := range names {
			if n == "" || regexp.QuoteMeta(n) != n {
				return nil
			}
		}
		return names
	}
	return nil
}

// TestGroupEvalOrderFollowsReads checks GroupEvalOrder against the rules,
// and that every promtool test in tests/ evaluates in that order.
func TestGroupEvalOrderFollowsReads(t *testing.T) {
	for _, p := range orderProblems(loadRules(t), GroupEvalOrder) {
		t.Error(p)
	}
	for p, f := range promtoolTests(t) {
		if !slices.Equal(f.GroupEvalOrder, GroupEvalOrder) {
			t.Errorf("%s: group_eval_order %v, want %v (alerts.GroupEvalOrder)", p, f.GroupEvalOrder, GroupEvalOrder)
		}
	}
}

// promtoolFile is what the tests read of a promtool test file: its group
// order and what it expects, not its input series.
type promtoolFile struct {
	GroupEvalOrder []string `yaml:"group_eval_order"`
	Tests          []struct {
		AlertRuleTest []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
		PromqlExprTest []struct {
			ExpSamples []struct {
				Labels string `yaml:"labels"`
			} `yaml:"exp_samples"`
		} `yaml:"promql_expr_test"`
	} `yaml:"tests"`
}

// promtoolTests reads every promtool test file of tests/, by path.
func promtoolTests(t *testing.T) map[string]promtoolFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("tests", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no promtool tests in tests/: %v", err)
	}
	out := map[string]promtoolFile{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f promtoolFile
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[p] = f
	}
	return out
}

// TestOrderProblemsRejects makes sure the check above can fail.
func TestOrderProblemsRejects(t *testing.T) {
	groups := loadRules(t)
	reversed := slices.Clone(GroupEvalOrder)
	slices.Reverse(reversed)
	if len(orderProblems(groups, reversed)) == 0 {
		t.Error("the groups in reverse order raised no problem")
	}
	if len(orderProblems(groups, GroupEvalOrder[1:])) == 0 {
		t.Error("an order missing a group raised no problem")
	}
}
