package diagnose

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/plaintext"
)

// hostile are values anyone who may edit a MachineOSConfig, or run a build
// pod, can put in front of the reader of a report.
var hostile = []string{
	"[click](https://evil.example/x) ![img](https://evil.example/p.png) <img src=x onerror=alert(1)>",
	"reason\n# INJECTED HEADING\n| a | b |",
	"\x1b[2J\x1b]0;title\x07\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\rcarriage",
	"c1 \u0085\u009b31m bidi \u202eevil\u202c \u2066isolated\u2069 zero\u200bwidth",
	"invalid \xff\xfe utf-8",
	strings.Repeat("registry.example/very-long@sha256:", 40000),
}

func TestCleanText(t *testing.T) {
	for _, s := range hostile {
		got := cleanText(s)
		if len(got) > plaintext.MaxBytes {
			t.Errorf("cleanText kept %d bytes, over %d", len(got), plaintext.MaxBytes)
		}
		if !utf8.ValidString(got) {
			t.Errorf("cleanText(%q) is not valid UTF-8", s)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\n' || r == '\r' || r == '\t' {
				t.Errorf("cleanText(%q) = %q keeps %U", s, got, r)
			}
		}
	}
	if got := cleanText("MachineOSBuild layered-a9d6 failed"); got != "MachineOSBuild layered-a9d6 failed" {
		t.Errorf("plain text changed: %q", got)
	}
	if got := cleanText(strings.Repeat("é", 1000)); !strings.HasSuffix(got, "é…") {
		t.Errorf("clipped text %q does not end on a whole rune and an ellipsis", got[len(got)-8:])
	}
}

// TestReportOutputsAreInert: whatever a finding says, the markdown has no
// link, image, heading or HTML of its own, every value keeps to its line,
// and the text output carries no control sequence.
func TestReportOutputsAreInert(t *testing.T) {
	var findings []Finding
	for _, s := range hostile {
		findings = append(findings, Finding{Object: Object{Kind: "MachineOSConfig", Name: s}, Field: s, Message: s, Excerpt: s, LogFile: "must-gather.local." + s + "/current.log", Commands: []string{"oc get machineosconfig " + s}})
	}
	r := &Report{
		Time: time.Date(2025, 10, 17, 12, 0, 0, 0, time.UTC), Namespace: hostile[1], Verdict: Problem, Summary: hostile[0],
		Cluster: []Check{{ID: CheckOperator, Title: "operator", Status: Failed, Findings: findings}},
		Pools: []Pool{
			{Name: hostile[0], Layered: true, Summary: hostile[1], Stages: []Stage{{Number: 1, Name: "MachineOSConfig", Status: Failed, Checks: []Check{{ID: CheckOperator, Title: hostile[2], Status: Failed, Findings: findings}}}}},
			{Name: hostile[2], Summary: hostile[3]},
		},
	}
	r.clean()

	var md bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	prose := outsideCode(md.String())
	for _, bad := range []string{"[click](", "[img](", "<img", "\n# INJECTED", "\n| a |"} {
		if strings.Contains(prose, bad) {
			t.Errorf("markdown contains %q outside code", bad)
		}
	}
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "# OCL diagnosis") && !strings.HasPrefix(line, "## ") && !strings.HasPrefix(line, "### ") {
			t.Errorf("markdown has a heading of its own: %q", line)
		}
	}

	var text, js bytes.Buffer
	if err := WriteText(&text, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&js, r, FormatJSON, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Cluster[0].Findings {
		if len(f.LogFile) > plaintext.MaxBytes || strings.ContainsFunc(f.LogFile, plaintext.Unsafe) {
			t.Errorf("the log file %.60q is not cleaned", f.LogFile)
		}
	}
	for _, out := range []string{md.String(), text.String(), js.String()} {
		for _, c := range out {
			if c != '\n' && (unicode.IsControl(c) || unicode.Is(unicode.Cf, c)) {
				t.Fatalf("output carries %U", c)
			}
		}
	}
}

// outsideCode drops fenced blocks and code spans, where nothing is markup.
func outsideCode(md string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		parts := strings.Split(line, "`")
		for i := 0; i < len(parts); i += 2 {
			b.WriteString(parts[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestCommandsQuoteNames: a name a snapshot carries can be anything; in a
// suggested command it stays one inert shell word.
func TestCommandsQuoteNames(t *testing.T) {
	for name, want := range map[string]string{
		"layered-a9d6":       "oc -n openshift-machine-config-operator get secret layered-a9d6",
		"x;touch /tmp/pwned": "oc -n openshift-machine-config-operator get secret 'x;touch /tmp/pwned'",
		"$(id)":              "oc -n openshift-machine-config-operator get secret '$(id)'",
		"it's":               `oc -n openshift-machine-config-operator get secret 'it'\''s'`,
		"a b`reboot`":        "oc -n openshift-machine-config-operator get secret 'a b`reboot`'",
	} {
		if got := secretCommands("mosc", name, "openshift-machine-config-operator")[0]; got != want {
			t.Errorf("secret %q: %s, want %s", name, got, want)
		}
	}
	if got := buildCommands(analysis.Build{Name: "b;rm"}, "ns")[1]; got != "oc -n ns get pods -l job-name=build-'b;rm'" {
		t.Errorf("a name inside a word: %s", got)
	}
}

// TestMarkdownRunbookLinkIsOneLink: a runbook URL that closes its link
// and opens another, as a --web.runbook-url of
// https://x.example/a)[b](javascript:alert(1))/ did, stays inside the
// one link in the markdown report (the flag refuses such a base too).
func TestMarkdownRunbookLinkIsOneLink(t *testing.T) {
	url := "https://x.example/a)[b](javascript:alert(1))/ <x>/OCLMachineOSBuildFailed.md"
	r := &Report{
		Time: time.Date(2025, 10, 17, 12, 0, 0, 0, time.UTC), Verdict: Problem,
		Cluster: []Check{{ID: CheckOperator, Title: "operator", Status: Failed, Findings: []Finding{
			{Object: Object{Kind: "ClusterOperator", Name: "machine-config"}, Message: "degraded", Runbook: &Runbook{Alert: "OCLMachineOSBuildFailed", URL: url}},
		}}},
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(md.String()) {
		dest, ok := strings.CutPrefix(strings.TrimSpace(line), "- Runbook: [OCLMachineOSBuildFailed](")
		if !ok {
			continue
		}
		if i := strings.IndexAny(dest, "()<> "); i != len(dest)-1 {
			t.Errorf("the link's destination ends early, at %q: %s", dest[:i], line)
		}
		return
	}
	t.Errorf("no runbook link:\n%s", md.String())
}
