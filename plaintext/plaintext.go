// Package plaintext makes text that others wrote (object fields, label
// values a querier returns) safe to print in every report and format: a
// report is read in a terminal, a ticket and a browser. It depends on the
// standard library only.
package plaintext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBytes bounds every value Line returns.
const MaxBytes = 512

// Clean is the one rune policy for text that others wrote, wherever the
// project shows it (reports, /status, excerpts in label values and alert
// descriptions): each run of invalid UTF-8 becomes one U+FFFD, a
// whitespace control (tab, line feed, vertical tab, form feed, carriage
// return) becomes a space, and every other character Unsafe names is
// dropped. It does not clip: each caller bounds the result for its place.
func Clean(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || Unsafe(r) }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case strings.ContainsRune("\t\n\v\f\r", r):
			return ' '
		case Unsafe(r):
			return -1
		}
		return r
	}, ValidUTF8(s))
}

// ValidUTF8 is Clean's rule for invalid UTF-8 alone: each run becomes one
// U+FFFD. Label values of object names take only this part of the policy
// (two objects must stay two series); the client library refuses invalid
// UTF-8.
func ValidUTF8(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Line is Clean clipped to MaxBytes on a rune boundary, marked with an
// ellipsis: one line of plain text for a report.
func Line(s string) string {
	s = Clean(s)
	if len(s) <= MaxBytes {
		return s
	}
	cut := MaxBytes - len("…")
	for !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Unsafe says whether r must not reach a report or a scrape as it is:
// every control character (C0, DEL, C1), and the format characters (Cf)
// that change how surrounding text is shown, which include the bidi
// overrides U+202A-U+202E and isolates U+2066-U+2069 and the zero-width
// marks.
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Markdown keeps free text (already a Line) from turning into markup:
// emphasis, code, links and images, headings, tables, HTML.
var Markdown = strings.NewReplacer(
	`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
	"#", `\#`, "|", `\|`, "~", `\~`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
).Replace
