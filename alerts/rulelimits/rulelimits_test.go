package rulelimits

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ocl-exporter/ocl_exporter/alerts"
)

var update = flag.Bool("update", false, "rewrite ../limits_rules.go from the rule files")

// TestRuleLimitsAreTheRules: the limits compiled into the binary are what
// the rule files say; -update rewrites them.
func TestRuleLimitsAreTheRules(t *testing.T) {
	l, err := Read(os.DirFS(".."))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Source(l)
	if err != nil {
		t.Fatal(err)
	}
	const file = "../limits_rules.go"
	if *update {
		if err := os.WriteFile(file, src, 0o644); err != nil {
			t.Fatal(err)
		}
		return // the binary under test still holds the old values
	}
	if old, _ := os.ReadFile(file); !bytes.Equal(old, src) || l != alerts.RuleLimits {
		t.Errorf("alerts/limits_rules.go is not what the rule files say: go test ./alerts/rulelimits/ -update\nrules say %+v", l)
	}
	if l.StalledAfter != 30*time.Minute || l.BuildMaxDuration != time.Hour || l.RepeatedPodFailures < 1 {
		t.Errorf("implausible limits read: %+v", l)
	}
}

// rulesWith is the real rule files with one edit.
func rulesWith(t *testing.T, from, to string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	paths, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	edited := false
	for _, p := range paths {
		if !strings.HasSuffix(p.Name(), "rules.yaml") {
			continue
		}
		b, err := os.ReadFile("../" + p.Name())
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); strings.Contains(s, from) {
			b, edited = []byte(strings.Replace(s, from, to, 1)), true
		}
		fsys[p.Name()] = &fstest.MapFile{Data: b}
	}
	if !edited {
		t.Fatalf("no rule file holds %q", from)
	}
	return fsys
}

func TestReadFollowsTheRules(t *testing.T) {
	l, err := Read(rulesWith(t, "vector(3600)", "vector(600)"))
	if err != nil {
		t.Fatal(err)
	}
	if l.BuildMaxDuration != 10*time.Minute {
		t.Errorf("BuildMaxDuration = %s after vector(600)", l.BuildMaxDuration)
	}
}

func TestReadNamesWhatItCannotRead(t *testing.T) {
	const waiting = "machineosconfig:mosc_waiting_for_build_since_timestamp_seconds:unexplained"
	for _, c := range []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"no files", fstest.MapFS{}, "no *rules.yaml"},
		{"rule gone", fstest.MapFS{"a-rules.yaml": {Data: []byte("groups: [{name: g, rules: [{alert: X, expr: up}]}]")}}, "BuildMaxDuration: no rule ocl:build_max_duration_seconds"},
		{"not vector", rulesWith(t, "vector(3600)", "up"), "is not vector(N)"},
		{"two thresholds", rulesWith(t, waiting+" > 1800", waiting+" > 1800 or up > 2"), "2 \"> N\" comparisons"},
		{"threshold is bool", rulesWith(t, waiting+" > 1800", waiting+" > bool 1800"), "0 \"> N\" comparisons"},
		{"bad expression", fstest.MapFS{"a-rules.yaml": {Data: []byte("groups: [{name: g, rules: [{alert: X, expr: 'up >'}]}]")}}, "a-rules.yaml: X:"},
	} {
		_, err := Read(c.fsys)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestAtLeast(t *testing.T) {
	const s = "x:failures"
	expr := func(e ...string) []rule {
		var out []rule
		for i, x := range e {
			r, err := parse(fstest.MapFS{"a-rules.yaml": {Data: []byte("groups: [{name: g, rules: [{alert: R" + string(rune('A'+i)) + ", expr: '" + x + "'}]}]")}})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r...)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		rules []rule
		want  float64
		err   string
	}{
		{"agree", expr("a and "+s+" >= 3", "b unless on (x) "+s+" >= 3"), 3, ""},
		{"disagree", expr(s+" >= 2", s+" >= 3"), 0, "disagree"},
		{"none", expr(s + " > 2"), 0, "no rule"},
		{"other series", expr("y >= 2"), 0, "no rule"},
	} {
		n, err := atLeast(c.rules, s)
		if n != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: atLeast = %v, %v; want %v, %q", c.name, n, err, c.want, c.err)
		}
	}
}
