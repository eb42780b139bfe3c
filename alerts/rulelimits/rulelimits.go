// Package rulelimits reads alerts.Limits from the syntax trees of the rule
// files, and writes them as the Go of alerts.RuleLimits. It links the
// PromQL parser, so only tests and the generator import it, never the
// binary.
package rulelimits

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/alerts"
)

// rule is what a limit is read from.
type rule struct {
	name string
	expr parser.Expr
	For  string
}

// Read parses every *rules.yaml of fsys and reads each field of
// alerts.Limits from the rule its tag names. An error names the rule and
// what it lacks.
func Read(fsys fs.FS) (alerts.Limits, error) {
	rules, err := parse(fsys)
	if err != nil {
		return alerts.Limits{}, err
	}
	var l alerts.Limits
	v := reflect.ValueOf(&l).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, from := f.Tag.Get("rule"), f.Tag.Get("from")
		n, err := read(rules, name, from)
		if err != nil {
			return alerts.Limits{}, fmt.Errorf("alerts.Limits.%s: %w", f.Name, err)
		}
		switch f.Type {
		case reflect.TypeFor[time.Duration]():
			v.Field(i).SetInt(int64(n * float64(time.Second)))
		case reflect.TypeFor[int]():
			v.Field(i).SetInt(int64(n))
		default:
			return alerts.Limits{}, fmt.Errorf("alerts.Limits.%s: a %s cannot hold a limit", f.Name, f.Type)
		}
	}
	return l, nil
}

// read returns the limit in seconds (a count for atleast).
func read(rules []rule, name, from string) (float64, error) {
	if from == "atleast" {
		return atLeast(rules, name)
	}
	i := slices.IndexFunc(rules, func(r rule) bool { return r.name == name })
	if i < 0 {
		return 0, fmt.Errorf("no rule %s in the rule files", name)
	}
	r := rules[i]
	switch from {
	case "for":
		d, err := model.ParseDuration(r.For)
		if err != nil {
			return 0, fmt.Errorf("%s: for %q: %w", name, r.For, err)
		}
		return time.Duration(d).Seconds(), nil
	case "threshold":
		var found []float64
		inspect(r.expr, func(b *parser.BinaryExpr) {
			if n, ok := b.RHS.(*parser.NumberLiteral); ok && b.Op == parser.GTR && !b.ReturnBool {
				found = append(found, n.Val)
			}
		})
		if len(found) != 1 {
			return 0, fmt.Errorf("%s: %d \"> N\" comparisons in its expression, want one", name, len(found))
		}
		return found[0], nil
	case "vector":
		if c, ok := r.expr.(*parser.Call); ok && c.Func.Name == "vector" {
			if n, ok := c.Args[0].(*parser.NumberLiteral); ok {
				return n.Val, nil
			}
		}
		return 0, fmt.Errorf("%s: expression %s is not vector(N)", name, r.expr)
	}
	return 0, fmt.Errorf("%s: unknown limit kind %q", name, from)
}

// atLeast reads N of every "series >= N" in every rule; the rules must
// agree.
func atLeast(rules []rule, series string) (float64, error) {
	var n float64
	from := ""
	for _, r := range rules {
		var err error
		inspect(r.expr, func(b *parser.BinaryExpr) {
			vs, ok := b.LHS.(*parser.VectorSelector)
			num, isNum := b.RHS.(*parser.NumberLiteral)
			if !ok || !isNum || b.Op != parser.GTE || vs.Name != series || err != nil {
				return
			}
			if from != "" && num.Val != n {
				err = fmt.Errorf("%s compares %s >= %v, %s >= %v: the rules disagree", from, series, n, r.name, num.Val)
			}
			n, from = num.Val, r.name
		})
		if err != nil {
			return 0, err
		}
	}
	if from == "" {
		return 0, fmt.Errorf("no rule compares %s >= N", series)
	}
	return n, nil
}

func inspect(e parser.Expr, f func(*parser.BinaryExpr)) {
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if b, ok := n.(*parser.BinaryExpr); ok {
			f(b)
		}
		return nil
	})
}

// parse reads every rule of the *rules.yaml files of fsys, in file order.
func parse(fsys fs.FS) ([]rule, error) {
	paths, err := fs.Glob(fsys, "*rules.yaml")
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, errors.New("no *rules.yaml file")
	}
	var out []rule
	for _, p := range paths {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		var f struct {
			Groups []struct {
				Rules []struct {
					Alert, Record, Expr, For string
				}
			}
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				e, err := parser.ParseExpr(r.Expr)
				if err != nil {
					return nil, fmt.Errorf("%s: %s%s: %w", p, r.Alert, r.Record, err)
				}
				out = append(out, rule{name: r.Alert + r.Record, expr: e, For: r.For})
			}
		}
	}
	return out, nil
}
