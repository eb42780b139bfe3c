package diagnose

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUseColor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		terminal bool
		getenv   func(string) string
		want     bool
	}{
		{true, env(), true},
		{false, env(), false},
		{true, env("NO_COLOR", "1"), false},
		{true, env("TERM", "dumb"), false},
	} {
		if got := UseColor(c.terminal, c.getenv); got != c.want {
			t.Errorf("UseColor(terminal=%v, NO_COLOR=%q, TERM=%q) = %v", c.terminal, c.getenv("NO_COLOR"), c.getenv("TERM"), got)
		}
	}
}

// TestColorOnlyStyles: colour changes no word and no line break.
func TestColorOnlyStyles(t *testing.T) {
	r := report(t, "../examples/snapshot", Options{})
	var plain, color bytes.Buffer
	if err := WriteText(&plain, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&color, r, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(color.String(), ansiRed) {
		t.Error("no colour in the coloured report")
	}
	stripped := color.String()
	for _, code := range []string{ansiReset, ansiBold, ansiRed, ansiGreen, ansiYellow, ansiDim} {
		stripped = strings.ReplaceAll(stripped, code, "")
	}
	if stripped != plain.String() {
		t.Errorf("the coloured report differs from the plain one beyond its colour codes:\n%s", cmpDiff(plain.String(), stripped))
	}
}

func TestShellLinesPasteAsOneCommand(t *testing.T) {
	cmd := `oc get mcp infra -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'`
	lines := shellLines(cmd, 40)
	if len(lines) < 2 {
		t.Fatalf("not broken: %q", lines)
	}
	var joined []string
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if i < len(lines)-1 {
			if !strings.HasSuffix(l, ` \`) {
				t.Errorf("line %d does not continue: %q", i, l)
			}
			l = strings.TrimSuffix(l, ` \`)
		}
		joined = append(joined, l)
	}
	if got := strings.Join(joined, " "); got != cmd {
		t.Errorf("continued lines join to %q, want %q", got, cmd)
	}
}

func cmpDiff(a, b string) string { return cmp.Diff(a, b) }
