package review

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Matcher is one label matcher of a PromQL selector.
type Matcher struct {
	Name, Op, Value string
}

// String writes m as PromQL: its value quoted, so nothing in it ends the
// selector or the query.
func (m Matcher) String() string { return m.Name + m.Op + strconv.Quote(m.Value) }

// matchOps are PromQL's matcher operators, the two-character ones first.
var matchOps = []string{"=~", "!~", "!=", "="}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*`)

// ParseSelector reads label matchers as PromQL writes them between a
// selector's braces (job="x", namespace=~"a|b"), strings in any of its
// three quotes, a trailing comma allowed, as github.com/prometheus/prometheus's
// promql/parser reads them; that module stays out of the binary, and the
// tests hold this parser to it. Anything else, such as a selector that
// closes its braces and appends a query, is refused naming where.
func ParseSelector(s string) ([]Matcher, error) {
	var out []Matcher
	rest := strings.TrimLeft(s, " \t\r\n")
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%q: not UTF-8", s)
	}
	if strings.HasPrefix(rest, "{") {
		return nil, fmt.Errorf("%q: write the matchers without braces, as job=%q", s, "ocl-exporter")
	}
	for rest != "" {
		m, after, err := parseMatcher(rest)
		if err != nil {
			return nil, fmt.Errorf("%q at byte %d: %w", s, len(s)-len(rest), err)
		}
		out = append(out, m)
		rest = strings.TrimLeft(after, " \t\r\n")
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("%q at byte %d: want a comma or the end after %s, found %q", s, len(s)-len(rest), m, rest[:1])
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
	}
	return out, nil
}

// parseMatcher reads one matcher at the start of s, and returns what
// follows it.
func parseMatcher(s string) (Matcher, string, error) {
	var m Matcher
	m.Name = labelName.FindString(s)
	if m.Name == "" {
		return m, "", fmt.Errorf("want a label name ([a-zA-Z_][a-zA-Z0-9_]*), found %q", s[:1])
	}
	s = strings.TrimLeft(s[len(m.Name):], " \t\r\n")
	for _, op := range matchOps {
		if strings.HasPrefix(s, op) {
			m.Op = op
			break
		}
	}
	if m.Op == "" {
		return m, "", fmt.Errorf("want one of %s after %s", strings.Join(matchOps, " "), m.Name)
	}
	v, rest, err := unquote(strings.TrimLeft(s[len(m.Op):], " \t\r\n"))
	if err != nil {
		return m, "", fmt.Errorf("the value of %s: %w", m.Name, err)
	}
	m.Value = v
	if m.Op == "=~" || m.Op == "!~" {
		// Prometheus anchors the expression and lets . match a newline.
		if _, err := regexp.Compile("^(?s:" + v + ")$"); err != nil {
			return m, "", fmt.Errorf("the regular expression of %s: %w", m.Name, err)
		}
	}
	return m, rest, nil
}

// unquote reads the string literal at the start of s, in double or single
// quotes (Go's escapes, no line break) or backquotes (raw), and returns
// its value and what follows it.
func unquote(s string) (string, string, error) {
	if s == "" || !strings.ContainsRune("\"'`", rune(s[0])) {
		return "", "", fmt.Errorf("want a quoted string, found %q", s[:min(1, len(s))])
	}
	quote := s[0]
	if quote == '`' {
		end := strings.IndexByte(s[1:], '`')
		if end < 0 {
			return "", "", fmt.Errorf("unterminated string")
		}
		return s[1 : end+1], s[end+2:], nil
	}
	var b strings.Builder
	for rest := s[1:]; ; {
		switch {
		case rest == "" || rest[0] == '\n':
			return "", "", fmt.Errorf("unterminated string")
		case rest[0] == quote:
			return b.String(), rest[1:], nil
		}
		r, multibyte, tail, err := strconv.UnquoteChar(rest, quote)
		if err != nil {
			return "", "", fmt.Errorf("invalid escape or character at %q", rest[:min(2, len(rest))])
		}
		if r < utf8.RuneSelf || !multibyte {
			b.WriteByte(byte(r))
		} else {
			b.WriteRune(r)
		}
		rest = tail
	}
}
