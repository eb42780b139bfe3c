// Package browser loads the exporter's /status page in a real headless
// Chromium: `make test-browser` installs Debian's chromium when it is
// missing and runs it (status_test.go, build tag browser). The page must
// render the diagnosis as text a person reads, without JavaScript. Every
// `go test` checks that docs/status.png still shows the page the exporter
// serves (outline_test.go).
package browser

import (
	"html"
	"regexp"
	"strings"
)

const repoRoot = "../.."

// Sidecar is the outline of the page docs/status.png shows, written with
// it by `go test -tags browser ./test/browser/ -update-docs`.
const Sidecar = "docs/status.png.txt"

var (
	hidden = regexp.MustCompile(`(?s)<(head|style|script)\b.*?</(head|style|script)>`)
	block  = regexp.MustCompile(`(?i)</?(p|div|h[1-6]|tr|li|dt|dd|pre|table|ul|br)\b[^>]*>`)
	tag    = regexp.MustCompile(`<[^>]*>`)
	spaces = regexp.MustCompile(`[ \t]+`)
	// outlineLine is a line of the outline: the verdict, a section, a
	// stage with its status and check count, a check's status, title
	// and ID.
	outlineLine = regexp.MustCompile(`^(OCL status: .*|Cluster|Pool \S+.*|Stage \d .*\(\d+ checks\)|.* (exporter|operator|builder|mosc|build|rollout)\.[a-z_]+)$`)
)

// renderedText is the text of an HTML page, one block per line, as a
// reader sees it.
func renderedText(dom string) string {
	s := hidden.ReplaceAllString(dom, "")
	s = block.ReplaceAllString(s, "\n")
	s = html.UnescapeString(tag.ReplaceAllString(s, ""))
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(spaces.ReplaceAllString(l, " ")); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// outline keeps the lines of a page's text that say what a screenshot
// shows: the verdict, each pool and stage with its status and number of
// checks, each check with its status.
func outline(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if outlineLine.MatchString(l) && !strings.HasPrefix(l, "oc ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}
