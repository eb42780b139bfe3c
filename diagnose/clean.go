package diagnose

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxValue bounds every value a report prints, in bytes: anyone who may
// edit a MachineOSConfig or run a build pod writes some of them (a
// condition message, the pre-built-image annotation), and a report is
// read in a terminal, a ticket and a browser.
const maxValue = 512

// clean makes every value of the report safe for every output, once,
// before any writer sees it: see cleanText. The writers add only what
// their format needs (markdown escaping; html/template escapes HTML).
func (r *Report) clean() {
	r.Namespace = cleanText(r.Namespace)
	r.Summary = cleanText(r.Summary)
	cleanChecks(r.Cluster)
	for i := range r.Pools {
		p := &r.Pools[i]
		p.Name, p.MachineOSConfig, p.Summary = cleanText(p.Name), cleanText(p.MachineOSConfig), cleanText(p.Summary)
		for j := range p.Stages {
			cleanChecks(p.Stages[j].Checks)
		}
	}
}

func cleanChecks(checks []Check) {
	for i := range checks {
		c := &checks[i]
		c.Title = cleanText(c.Title)
		for j := range c.Findings {
			f := &c.Findings[j]
			f.Object.Kind, f.Object.Namespace, f.Object.Name = cleanText(f.Object.Kind), cleanText(f.Object.Namespace), cleanText(f.Object.Name)
			f.Field, f.Message, f.Excerpt = cleanText(f.Field), cleanText(f.Message), cleanText(f.Excerpt)
			for k := range f.Commands {
				f.Commands[k] = cleanText(f.Commands[k])
			}
		}
	}
}

// cleanText keeps a value to one line of plain text: control characters
// (C0, DEL, C1: escape sequences, carriage returns, bells) and the
// invisible formatting characters that reorder or hide text (bidi
// overrides and isolates, zero-width marks) are dropped, a line break or
// tab becomes a space, invalid UTF-8 becomes U+FFFD, and the result is
// clipped to maxValue bytes on a rune boundary, marked with an ellipsis.
func cleanText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case dropped(r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= maxValue {
		return s
	}
	cut := maxValue - len("…")
	for !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// dropped: every control character, and the format characters (Cf) that
// change how surrounding text is shown, which include the bidi overrides
// U+202A-U+202E and isolates U+2066-U+2069.
func dropped(r rune) bool {
	return unicode.IsControl(r) && r != '\n' && r != '\t' || unicode.Is(unicode.Cf, r)
}
