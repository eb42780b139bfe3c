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

// Line keeps a value to one line of plain text: control characters (C0,
// DEL, C1: escape sequences, carriage returns, bells) and the invisible
// formatting characters that reorder or hide text (bidi overrides and
// isolates, zero-width marks) are dropped, a line break or tab becomes a
// space, invalid UTF-8 becomes U+FFFD, and the result is clipped to
// MaxBytes on a rune boundary, marked with an ellipsis.
func Line(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case Unsafe(r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
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
// marks. Line and the /metrics excerpt cleaner (classify) both ask it.
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Markdown keeps free text (already a Line) from turning into markup:
// emphasis, code, links and images, headings, tables, HTML.
var Markdown = strings.NewReplacer(
	`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
	"#", `\#`, "|", `\|`, "~", `\~`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
).Replace
