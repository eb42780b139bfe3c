package alerts

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// embeddedRules are the rule files, compiled into the binary so that the
// limits diagnose applies are the ones the alerts apply: an alert's limit
// is changed in its rule file, once.
//
//go:embed *rules.yaml
var embeddedRules embed.FS

// rule is what Limits reads of one rule.
type rule struct {
	Alert  string `json:"alert"`
	Record string `json:"record"`
	Expr   string `json:"expr"`
	For    string `json:"for"`
}

// rules reads every rule of the embedded files by name.
func rules() (map[string]rule, error) {
	paths, err := fs.Glob(embeddedRules, "*rules.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]rule{}
	for _, p := range paths {
		b, err := embeddedRules.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var f struct {
			Groups []struct {
				Rules []rule `json:"rules"`
			} `json:"groups"`
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				out[r.Alert+r.Record] = r
			}
		}
	}
	return out, nil
}

// Limit is one duration a rule waits for, read from its file.
type Limit struct {
	Rule string
	// Field is where: "for" (the alert's for:), "threshold" (the number
	// of seconds after the last "> " of its expression) or "vector" (a
	// recording rule's constant vector(N) seconds).
	Field string
}

// Durations reads each limit from the embedded rule files, or names the
// first it cannot read.
func Durations(limits ...Limit) ([]time.Duration, error) {
	rs, err := rules()
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, len(limits))
	for i, l := range limits {
		r, ok := rs[l.Rule]
		if !ok {
			return nil, fmt.Errorf("no rule %s in alerts/*rules.yaml", l.Rule)
		}
		var s string
		switch l.Field {
		case "for":
			d, err := model.ParseDuration(r.For)
			if err != nil {
				return nil, fmt.Errorf("%s: for %q: %w", l.Rule, r.For, err)
			}
			out[i] = time.Duration(d)
			continue
		case "threshold":
			j := strings.LastIndex(r.Expr, "> ")
			if j < 0 {
				return nil, fmt.Errorf("%s: no \"> N\" threshold in its expression", l.Rule)
			}
			s = strings.Fields(r.Expr[j+2:])[0]
		case "vector":
			s = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(r.Expr), "vector("), ")")
		default:
			return nil, fmt.Errorf("%s: unknown field %q", l.Rule, l.Field)
		}
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %q is not a number of seconds: %w", l.Rule, l.Field, s, err)
		}
		out[i] = time.Duration(n * float64(time.Second))
	}
	return out, nil
}

// AtLeast reads N from every "series >= N" in the rules' expressions: the
// count an alert starts at, such as the failed build pods that make a
// build failing. The rules must agree, or it names the first that differs.
func AtLeast(series string) (int, error) {
	rs, err := rules()
	if err != nil {
		return 0, err
	}
	return atLeast(rs, series)
}

func atLeast(rs map[string]rule, series string) (int, error) {
	n, from := 0, ""
	for _, name := range slices.Sorted(maps.Keys(rs)) {
		expr := rs[name].Expr
		for rest := expr; ; {
			i := strings.Index(rest, series+" >= ")
			if i < 0 {
				break
			}
			rest = rest[i+len(series)+4:]
			v, err := strconv.Atoi(strings.Fields(rest)[0])
			if err != nil {
				return 0, fmt.Errorf("%s: %s >= %q is not a count: %w", name, series, strings.Fields(rest)[0], err)
			}
			if from != "" && v != n {
				return 0, fmt.Errorf("%s compares %s >= %d, %s >= %d: the rules disagree", from, series, n, name, v)
			}
			n, from = v, name
		}
	}
	if from == "" {
		return 0, fmt.Errorf("no rule compares %s >= N", series)
	}
	return n, nil
}
