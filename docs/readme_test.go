package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// TestEveryMakeTargetIsDescribed: make help lists the targets that carry
// a `## target:` comment (hack/help.awk); a target without one would be
// missing from it.
func TestEveryMakeTargetIsDescribed(t *testing.T) {
	rule := regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):([^=]|$)`)
	described := regexp.MustCompile(`(?m)^## ([a-z][a-z0-9-]*):`)
	for _, f := range []string{"../Makefile", "../hack/integration.mk"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		has := map[string]bool{}
		for _, m := range described.FindAllSubmatch(b, -1) {
			has[string(m[1])] = true
		}
		n := 0
		for _, m := range rule.FindAllSubmatch(b, -1) {
			n++
			if !has[string(m[1])] {
				t.Errorf("%s: target %s has no `## %s: what it does` comment, so make help omits it", f, m[1], m[1])
			}
		}
		if n == 0 {
			t.Errorf("%s: no targets found", f)
		}
	}
}

// TestREADMETestsAreCI: CI runs "the README's test commands"; the
// README's Tests section lists exactly the make commands of .ci/run, in
// its order.
func TestREADMETestsAreCI(t *testing.T) {
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(ci), "\n") {
		if strings.HasPrefix(l, "make ") {
			want = append(want, l)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, tests, ok := strings.Cut(string(readme), "\n## Tests\n")
	_, block, ok2 := strings.Cut(tests, "```console\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no console block under ## Tests")
	}
	if got := strings.Split(strings.TrimSpace(block), "\n"); !slices.Equal(got, want) {
		t.Errorf("README.md's Tests block:\n%s\n.ci/run runs:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// link is a Markdown link or image to a relative path, with an optional
// #anchor: [text](path#anchor).
var link = regexp.MustCompile(`\]\(([^)\s:]*?)(#[^)\s]*)?\)`)

// TestRelativeLinksResolve: every relative link of the README,
// CONTRIBUTING.md and docs/ names a file that exists and, with an anchor,
// a heading of that file (GitHub's slug), so moving a section breaks a
// test rather than a reader's link.
func TestRelativeLinksResolve(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md", "../CONTRIBUTING.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := f
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(f), m[1])
			}
			tb, err := os.ReadFile(target)
			if err != nil {
				if _, serr := os.Stat(target); serr != nil {
					t.Errorf("%s links %s: %v", f, m[1], serr)
				}
				continue
			}
			if anchor := strings.TrimPrefix(m[2], "#"); anchor != "" && !slices.Contains(anchors(string(tb)), anchor) {
				t.Errorf("%s links %s#%s: no such heading in %s", f, m[1], anchor, target)
			}
		}
	}
}

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(md string) []string {
	var out []string
	inCode := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestREADMEGoVersion: the quick start names the Go release go.mod needs.
func TestREADMEGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "With Go " + string(m[1]) + " or later"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md's quick start does not say %q (go.mod: go %s)", want, m[1])
	}
}

// TestREADMESampleErrorCountsTheResources: the README's sample error
// line says "(N resources)" as the binary prints it, N every resource it
// watches (snapshot.Resources), so a new watch updates the sample.
func TestREADMESampleErrorCountsTheResources(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	counts := regexp.MustCompile(`\((\d+) resources\)`).FindAllStringSubmatch(string(readme), -1)
	if len(counts) == 0 {
		t.Fatal("README.md has no sample error counting resources: drop this test with it")
	}
	for _, c := range counts {
		if c[1] != strconv.Itoa(len(snapshot.Resources())) {
			t.Errorf("README.md's sample says %s resources; the binary watches %d", c[1], len(snapshot.Resources()))
		}
	}
}

// TestREADMEDiagnoseSampleIsTheGolden: the README's `diagnose --example`
// sample is the example's golden report (diagnose/testdata/example.txt,
// which go test ./diagnose/ keeps current) with lines left out: each run
// of lines between two "..." stands in the golden as it is, in order, the
// runbook links at the README's base instead of the test's.
func TestREADMEDiagnoseSampleIsTheGolden(t *testing.T) {
	const (
		command    = "$ bin/ocl_exporter diagnose --example"
		readmeBase = "https://github.com/ocl-exporter/ocl_exporter/blob/.../"
		goldenBase = "https://example.com/runbooks/"
	)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("../diagnose/testdata/example.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, sample, ok := strings.Cut(string(readme), command+"\n")
	if !ok {
		t.Fatalf("README.md has no console block running %q: drop this test with it", command)
	}
	sample, _, _ = strings.Cut(sample, "```")
	lines := strings.Split(string(golden), "\n")
	at := 0
	for _, run := range elided(strings.ReplaceAll(sample, readmeBase, goldenBase)) {
		i := indexRun(lines[at:], run)
		if i < 0 {
			t.Errorf("README.md's diagnose sample has these lines together, which diagnose/testdata/example.txt does not after its line %d (copy them from it, \"...\" where lines are left out):\n%s", at, strings.Join(run, "\n"))
			return
		}
		at += i + len(run)
	}
}

// elided splits a sample into its runs of lines between "..." lines.
func elided(sample string) [][]string {
	var runs [][]string
	var run []string
	for _, l := range strings.Split(strings.TrimRight(sample, "\n"), "\n") {
		if strings.TrimSpace(l) == "..." {
			if len(run) > 0 {
				runs = append(runs, run)
			}
			run = nil
			continue
		}
		run = append(run, l)
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	return runs
}

// indexRun is where run stands in lines, contiguous, or -1.
func indexRun(lines, run []string) int {
	for i := 0; i+len(run) <= len(lines); i++ {
		if slices.Equal(lines[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}
