package alerts_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/alerts"
	"github.com/ocl-exporter/ocl_exporter/deploy"
	"github.com/ocl-exporter/ocl_exporter/diagnose"
)

// A runbook's first screen (about 30 lines as GitHub renders it) says what
// is broken, the impact and the first safe command: the exporter's own
// diagnosis, its /status report read through oc port-forward to the
// bundle's Deployment as the responder's own login (the on-call engineer
// has oc and curl, not the binary, and needs no more than the Role
// ocl-exporter-responder: no exec into the exporter's identity). How the
// alert decides and the checks by hand come below.
const (
	firstScreenLines = 30
	maxMeaningLines  = 6 // non-blank
	maxImpactLines   = 4 // non-blank
)

// onCall is the bundle's on-call path, which the first command takes.
func onCall(t *testing.T) deploy.OnCall {
	t.Helper()
	o, err := deploy.BundleOnCall()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// runbookShape is what the shape check needs to know about an alert.
type runbookShape struct {
	// pool: the alert carries a pool label, so the command diagnoses that
	// pool; without it the whole cluster.
	pool bool
	// check is the title of the diagnose check that is the alert, "" when
	// none is.
	check string
	// onCall is the path the first command takes.
	onCall deploy.OnCall
}

// command is the first command the runbook must give, exactly.
func (s runbookShape) command() string {
	if s.pool {
		return s.onCall.Command("<pool>")
	}
	return s.onCall.Command("")
}

// sectionLines returns the lines under the "## " heading up to the next
// "## " heading, and the index of the first of them.
func sectionLines(lines []string, heading string) ([]string, int) {
	start := slices.Index(lines, heading)
	if start < 0 {
		return nil, -1
	}
	start++
	end := start
	for end < len(lines) && !strings.HasPrefix(lines[end], "## ") {
		end++
	}
	return lines[start:end], start
}

func nonBlank(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// runbookShapeProblems lists how text, a runbook, departs from the shape
// above.
func runbookShapeProblems(text string, want runbookShape) []string {
	lines := strings.Split(text, "\n")
	var out []string
	if m, _ := sectionLines(lines, "## Meaning"); nonBlank(m) > maxMeaningLines {
		out = append(out, fmt.Sprintf("Meaning has %d lines, at most %d: move how the alert decides to Diagnosis", nonBlank(m), maxMeaningLines))
	}
	if m, _ := sectionLines(lines, "## Impact"); nonBlank(m) > maxImpactLines {
		out = append(out, fmt.Sprintf("Impact has %d lines, at most %d", nonBlank(m), maxImpactLines))
	}
	diag, at := sectionLines(lines, "## Diagnosis")
	// The head of Diagnosis: up to its first subsection.
	if i := slices.IndexFunc(diag, func(l string) bool { return strings.HasPrefix(l, "### ") }); i >= 0 {
		diag = diag[:i]
	}
	var block, prose []string
	cmd := -1
	command := want.command()
	for i, inBlock, done := 0, false, false; i < len(diag); i++ {
		switch l := diag[i]; {
		case strings.HasPrefix(l, "```"):
			done = done || inBlock
			inBlock = !inBlock
		case inBlock && !done:
			block = append(block, l)
			if cmd < 0 && strings.HasPrefix(l, "oc -n "+want.onCall.Namespace+" port-forward ") {
				cmd = at + i
			}
		case !inBlock:
			prose = append(prose, l)
		}
	}
	switch {
	case cmd < 0:
		first := "(none)"
		if len(block) > 0 {
			first = fmt.Sprintf("%q", block[0])
		}
		return append(out, fmt.Sprintf("the first code block of Diagnosis, first line %s, does not run %s", first, command))
	case cmd+1 > firstScreenLines:
		out = append(out, fmt.Sprintf("%s is on line %d, past the first screen (%d lines)", command, cmd+1, firstScreenLines))
	}
	switch got := lines[cmd]; {
	case got == command:
	case want.pool && !strings.Contains(got, "?pool=<pool>"):
		out = append(out, fmt.Sprintf("%q: the alert has a pool label, read /status?pool=<pool>: %s", got, command))
	case !want.pool && strings.Contains(got, "pool="):
		out = append(out, fmt.Sprintf("%q: the alert has no pool label to fill in ?pool= with: %s", got, command))
	default:
		out = append(out, fmt.Sprintf("%q is not the on-call path, %s", got, command))
	}
	head := strings.Join(strings.Fields(strings.Join(prose, " ")), " ")
	if !strings.Contains(head, "`/status`") {
		out = append(out, "the head of Diagnosis does not say what the exporter's `/status` page shows")
	}
	if want.check != "" && !strings.Contains(head, `"`+want.check+`"`) {
		out = append(out, fmt.Sprintf("the head of Diagnosis does not name the report's check %q", want.check))
	}
	return out
}

// wantShapes says, per alert, whether it has a pool label (from its
// expression) and which diagnose check is the alert.
func wantShapes(t *testing.T) map[string]runbookShape {
	t.Helper()
	sources := alerts.LabelSources(t)
	out := map[string]runbookShape{}
	path := onCall(t)
	for _, r := range alerts.AlertRules(t) {
		e, err := parser.ParseExpr(r.Expr)
		if err != nil {
			t.Fatalf("%s: %v", r.Alert, err)
		}
		labels, err := alerts.OutputLabels(e, sources)
		if err != nil {
			t.Fatalf("%s: %v", r.Alert, err)
		}
		out[r.Alert] = runbookShape{pool: slices.Contains(labels, "pool"), onCall: path}
	}
	for _, c := range diagnose.Checks {
		for _, a := range c.Alerts {
			if s, ok := out[a]; ok && s.check == "" {
				s.check = c.Title
				out[a] = s
			}
		}
	}
	return out
}

func TestRunbooksOpenWithTheFirstSafeCommand(t *testing.T) {
	for alert, want := range wantShapes(t) {
		b, err := os.ReadFile("../runbooks/" + alert + ".md")
		if err != nil {
			t.Error(err) // TestEveryAlertHasARunbookAndEveryRunbookAnAlert says more
			continue
		}
		for _, p := range runbookShapeProblems(string(b), want) {
			t.Errorf("runbooks/%s.md: %s", alert, p)
		}
	}
}

// TestRunbookShapeProblemsRejects makes sure the check above can fail.
func TestRunbookShapeProblemsRejects(t *testing.T) {
	path := deploy.OnCall{Namespace: "ocl-exporter", Deployment: "ocl-exporter", Port: "29101"}
	first := path.Command("<pool>")
	good := "# OCLX\n\n## Meaning\n\nPool broken.\n\n## Impact\n\nNo image.\n\n## Diagnosis\n\nFirst:\n\n" +
		"```console\n" + first + "\n```\n\n" +
		"Or:\n\n```console\nocl_exporter diagnose --pool <pool>\n```\n\nCheck \"The pool is fine\"; `/status` too.\n\n" +
		"### How this alert decides\n\nMechanism.\n\n## Mitigation\n"
	pool := runbookShape{pool: true, check: "The pool is fine", onCall: path}
	if p := runbookShapeProblems(good, pool); len(p) > 0 {
		t.Fatalf("a good runbook: %v", p)
	}
	long := strings.Repeat("Mechanism.\n", maxMeaningLines+1)
	for _, c := range []struct {
		name, text string
		want       runbookShape
		problem    string
	}{
		{"long meaning", strings.Replace(good, "Pool broken.\n", long, 1), pool, "Meaning has 7 lines"},
		{"long impact", strings.Replace(good, "No image.\n", long, 1), pool, "Impact has 7 lines"},
		{"no diagnosis", strings.Replace(good, first, "oc get mcp <pool>", 1), pool, "does not run oc -n"},
		{"exec into the exporter's pod", strings.Replace(good, first, "oc -n ocl-exporter exec deploy/ocl-exporter -- ocl_exporter diagnose --pool <pool>", 1), pool, "does not run oc -n"},
		{"diagnosis after another block", strings.Replace(good, "First:\n", "```console\noc get mcp\n```\n", 1), pool, "does not run oc -n"},
		{"diagnosis only in a subsection", strings.Replace(good, "First:\n", "First:\n\n### By hand\n", 1), pool, "does not run oc -n"},
		{"below the first screen", strings.Replace(good, "First:\n", strings.Repeat("Text.\n", firstScreenLines), 1), pool, "past the first screen"},
		{"no ?pool", strings.Replace(good, first, path.Command(""), 1), pool, "read /status?pool=<pool>"},
		{"?pool without a pool label", good, runbookShape{check: pool.check, onCall: path}, "no pool label"},
		{"the binary first", strings.Replace(good, first, "ocl_exporter diagnose --pool <pool>", 1), pool, "does not run oc -n"},
		{"another namespace", strings.Replace(good, "-n ocl-exporter", "-n monitoring", 1), pool, "does not run oc -n"},
		{"another deployment", strings.Replace(good, "deploy/ocl-exporter", "deploy/exporter", 1), pool, "is not the on-call path"},
		{"another port", strings.Replace(good, "29101 >", "29100 >", 1), pool, "is not the on-call path"},
		{"TLS unchecked", strings.Replace(good, "curl -sS", "curl -k -sS", 1), pool, "is not the on-call path"},
		{"a token", strings.Replace(good, "curl -sS", `curl -H "Authorization: Bearer $(oc whoami -t)" -sS`, 1), pool, "is not the on-call path"},
		{"no /status", strings.Replace(good, "`/status`", "the page", 1), pool, "/status"},
		{"another check", good, runbookShape{pool: true, check: "The build succeeded", onCall: path}, `check "The build succeeded"`},
	} {
		p := runbookShapeProblems(c.text, c.want)
		if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.problem) }) {
			t.Errorf("%s: problems %q, want one containing %q", c.name, p, c.problem)
		}
	}
}
