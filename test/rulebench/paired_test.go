//go:build rulebench

package rulebench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"go.yaml.in/yaml/v3"
)

// A paired run evaluates the rules of a base commit (RULEBENCH_BASE) beside
// the working tree's in the same Prometheus, on the same series, at the
// same interval: what loads the machine loads both, and each evaluation
// of the tree's groups has one of the base's in the same 15 s to compare
// with. The base's copy is renamed so that neither reads the other's
// results: its groups are base/<group>, its recording rules record
// <name>:base, its alerts are Base<alert>, and its selectors of those
// names, and of ALERTS' alertname, follow.

// baseRules writes the rule groups of commit ref, renamed, into dir, a
// file each, and returns their paths. Each file is named so that
// Prometheus evaluates its group half an interval from the tree's group
// of the same name (tree: the tree's rule files as Prometheus is given
// them): a group's slot in the interval is a hash of its name and file
// (rules.Group.EvalTimestamp). A base group in a slot of its own met the
// scrape and the other groups at another moment than the tree's, a bias
// of a whole group that moved from run to run with the temporary
// directory; in the tree's slot it ran beside the tree's group, and the
// one that started first (by a millisecond, either way) warmed the
// caches for the other, which measured cheaper by up to 0.6 ms a cycle.
// Half an interval apart, each side evaluates alone, as long after the
// other as before it (docs/performance.md).
func baseRules(t *testing.T, ref, dir string, tree []string) []string {
	t.Helper()
	slots := treeSlots(t, tree)
	list, err := exec.Command("git", "-C", repoRoot, "ls-tree", "--name-only", ref, "alerts/").Output()
	if err != nil {
		t.Fatalf("RULEBENCH_BASE=%s: git ls-tree: %v (a commit of this repository: make bench-rules BASE=main)", ref, err)
	}
	var out []string
	for _, path := range strings.Fields(string(list)) {
		if !strings.HasSuffix(path, "rules.yaml") {
			continue
		}
		b, err := exec.Command("git", "-C", repoRoot, "show", ref+":"+path).Output()
		if err != nil {
			t.Fatalf("git show %s:%s: %v", ref, path, err)
		}
		renamed, err := renameRules(b)
		if err != nil {
			t.Fatalf("%s:%s: %v", ref, path, err)
		}
		groups, errs := rulefmt.Parse(renamed, false, model.UTF8Validation)
		if len(errs) > 0 {
			t.Fatalf("%s:%s renamed: %v", ref, path, errs)
		}
		for _, g := range groups.Groups {
			one, err := yaml.Marshal(rulefmt.RuleGroups{Groups: []rulefmt.RuleGroup{g}})
			if err != nil {
				t.Fatal(err)
			}
			file := slotted(dir, g.Name, (slots[strings.TrimPrefix(g.Name, basePrefix)]+scrapeInterval/2)%scrapeInterval)
			if err := os.WriteFile(file, one, 0o600); err != nil {
				t.Fatal(err)
			}
			out = append(out, file)
		}
	}
	if len(out) == 0 {
		t.Fatalf("RULEBENCH_BASE=%s has no alerts/*rules.yaml", ref)
	}
	return out
}

// treeSlots is the slot of each group of the tree's rule files.
func treeSlots(t *testing.T, files []string) map[string]time.Duration {
	t.Helper()
	out := map[string]time.Duration{}
	for _, f := range files {
		groups, errs := rulefmt.ParseFile(f, false, model.UTF8Validation)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f, errs)
		}
		for _, g := range groups.Groups {
			out[g.Name] = slot(g.Name, f)
		}
	}
	return out
}

// slot is where in each interval Prometheus evaluates group of file.
func slot(group, file string) time.Duration {
	h := labels.New(labels.Label{Name: "name", Value: group}, labels.Label{Name: "file", Value: file}).Hash()
	return time.Duration(h % uint64(scrapeInterval))
}

// slotted is a file in dir for group whose slot is within a millisecond
// of want: one name in 7,500 on average, found by counting.
func slotted(dir, group string, want time.Duration) string {
	prefix := filepath.Join(dir, strings.ReplaceAll(group, "/", "-"))
	for n := 0; ; n++ {
		f := prefix + "-" + strconv.Itoa(n) + ".yaml"
		if d := slot(group, f) - want; d > -time.Millisecond && d < time.Millisecond {
			return f
		}
	}
}

// set is a rule set's groups' evaluations, in order.
type set map[string][]evaluation

// evaluation is one evaluation of a group: its time, and each rule's with
// its pending and firing alerts.
type evaluation struct {
	total time.Duration
	rules []ruleEvaluation
}

type ruleEvaluation struct {
	name   string
	d      time.Duration
	alerts int
}

// cycles is how many evaluations every group of s has.
func (s set) cycles() int {
	n := -1
	for _, evals := range s {
		if n < 0 || len(evals) < n {
			n = len(evals)
		}
	}
	return max(n, 0)
}

// quiet is the time of the rules without pending or firing alerts in
// every group's k-th evaluation, and total every group's.
func (s set) cycle(k int) (quiet, total time.Duration) {
	for _, evals := range s {
		e := evals[k]
		total += e.total
		for _, r := range e.rules {
			if r.alerts == 0 {
				quiet += r.d
			}
		}
	}
	return quiet, total
}

// pairedReport compares the tree's evaluations with the base's, cycle by
// cycle: the median of the ratios, with the quartiles and the extremes.
func pairedReport(nodes int, tree, base set) string {
	var quiet, total []float64
	var treeQuiet, baseQuiet []time.Duration
	for k := range min(tree.cycles(), base.cycles()) {
		tq, tt := tree.cycle(k)
		bq, bt := base.cycle(k)
		quiet, total = append(quiet, float64(tq)/float64(bq)), append(total, float64(tt)/float64(bt))
		treeQuiet, baseQuiet = append(treeQuiet, tq), append(baseQuiet, bq)
	}
	if len(quiet) == 0 {
		return fmt.Sprintf("| %d | no evaluation of both sets | | | | |\n", nodes)
	}
	return fmt.Sprintf("| %d | %d | %s | %s | %s | %s |\n", nodes, len(quiet), ms(median(treeQuiet)), ms(median(baseQuiet)), spread(quiet), spread(total))
}

// logPairedRules logs each rule's median difference tree minus base over
// the paired evaluations, dearest first: where a change to the rules
// spends its cost.
func logPairedRules(t *testing.T, nodes int, tree, base set) {
	diffs := map[string][]time.Duration{}
	for group, evals := range tree {
		for k := range min(len(evals), len(base[group])) {
			b := map[string]time.Duration{}
			for _, r := range base[group][k].rules {
				name := strings.TrimSuffix(r.name, ":base")
				if after, ok := strings.CutPrefix(r.name, "Base"); ok {
					name = after
				}
				b[name] = r.d
			}
			for _, r := range evals[k].rules {
				// A rule new in the tree costs all it takes.
				diffs[group+"/"+r.name] = append(diffs[group+"/"+r.name], r.d-b[r.name])
			}
		}
	}
	var rs []named
	for name, ds := range diffs {
		rs = append(rs, named{name, median(ds)})
	}
	slices.SortFunc(rs, func(a, b named) int { return int(b.d - a.d) })
	for _, r := range rs {
		t.Logf("%d nodes: paired rule %s: tree - base %+.3f ms", nodes, r.name, float64(r.d)/float64(time.Millisecond))
	}
}

// spread is the median of ratios, then the quartiles and the extremes.
func spread(v []float64) string {
	s := slices.Sorted(slices.Values(v))
	q := func(p float64) float64 { return s[int(p*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("%.3f (%.3f to %.3f; %.3f to %.3f)", q(0.5), q(0.25), q(0.75), s[0], s[len(s)-1])
}

// pairedHeader heads pairedReport's rows.
const pairedHeader = "| nodes | cycles | tree: rules without alerts | base: rules without alerts | ratio tree / base, rules without alerts: median (quartiles; extremes) | ratio, all groups |\n|---|---|---|---|---|---|\n"

// rulesAPI is what /api/v1/rules says of the groups.
type rulesAPI struct {
	Data struct {
		Groups []struct {
			Name           string  `json:"name"`
			EvaluationTime float64 `json:"evaluationTime"`
			LastEvaluation string  `json:"lastEvaluation"`
			Rules          []struct {
				Name           string     `json:"name"`
				EvaluationTime float64    `json:"evaluationTime"`
				Alerts         []struct{} `json:"alerts"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"data"`
}

// collect polls the rules API until every group has been evaluated n
// times since, and returns the evaluations of the tree's groups and of
// the base's, by group name without the prefix.
func collect(t *testing.T, base string, n int) (tree, baseSet set) {
	t.Helper()
	tree, baseSet = set{}, set{}
	last := map[string]string{}
	slots := map[string]string{}
	for {
		var rs rulesAPI
		get(t, base+"/api/v1/rules", &rs)
		done := true
		for _, g := range rs.Data.Groups {
			into, name := tree, g.Name
			if after, ok := strings.CutPrefix(g.Name, basePrefix); ok {
				into, name = baseSet, after
			}
			if g.LastEvaluation != last[g.Name] {
				last[g.Name] = g.LastEvaluation
				if at, err := time.Parse(time.RFC3339Nano, g.LastEvaluation); err == nil {
					slots[g.Name] = time.Duration(at.UnixNano() % int64(scrapeInterval)).Round(time.Millisecond).String()
				}
				e := evaluation{total: seconds(g.EvaluationTime)}
				for _, r := range g.Rules {
					e.rules = append(e.rules, ruleEvaluation{name: r.Name, d: seconds(r.EvaluationTime), alerts: len(r.Alerts)})
				}
				into[name] = append(into[name], e)
			}
			done = done && len(into[name]) >= n
		}
		if done {
			t.Logf("each group's slot in the interval, as evaluated (a base group's half an interval from its tree group's): %v", slots)
			return tree, baseSet
		}
		time.Sleep(time.Second)
	}
}

// named is a rule or a query and its time.
type named struct {
	name string
	d    time.Duration
}

// summarize is the tree's evaluations as the report gives them: every
// group's median, the slowest rules' (with their alerts), and the rules
// without alerts together.
func summarize(t *testing.T, nodes int, tree set) result {
	var res result
	var slowest named
	ruleTimes := map[string][]time.Duration{}
	active := map[string]int{}
	for group, evals := range tree {
		ts := make([]time.Duration, len(evals))
		for i, e := range evals {
			ts[i] = e.total
			for _, r := range e.rules {
				ruleTimes[group+"/"+r.name] = append(ruleTimes[group+"/"+r.name], r.d)
				active[group+"/"+r.name] = r.alerts
			}
		}
		m := median(ts)
		res.total += m
		if m > slowest.d {
			slowest = named{group, m}
		}
	}
	res.slowestGroup = slowest.name + " " + ms(slowest.d)
	var rs []named
	for name, ts := range ruleTimes {
		rs = append(rs, named{name, median(ts)})
	}
	slices.SortFunc(rs, func(a, b named) int { return int(b.d - a.d) })
	for i, r := range rs {
		name := r.name + " " + ms(r.d)
		if n := active[r.name]; n > 0 {
			name += fmt.Sprintf(" (%d alerts)", n)
		} else {
			res.quiet += r.d
		}
		if i < 3 {
			res.slowestRules = append(res.slowestRules, name)
		}
		t.Logf("%d nodes: rule %s", nodes, name)
	}
	return res
}
