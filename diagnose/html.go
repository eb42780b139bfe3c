package diagnose

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"io"
	"strings"
	"time"
)

//go:embed status.html.tmpl
var statusTemplate string

// StyleSource is the Content-Security-Policy source of the page's one
// style element, its hash: the page needs nothing else from a browser (no
// script, image, font or frame).
var StyleSource = styleSource(statusTemplate)

// styleSource hashes the content of the first style element of a
// template, which is static text: html/template writes it as it is.
func styleSource(tmpl string) string {
	_, rest, _ := strings.Cut(tmpl, "<style>")
	css, _, _ := strings.Cut(rest, "</style>")
	sum := sha256.Sum256([]byte(css))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

var htmlTemplate = template.Must(template.New("status").Funcs(template.FuncMap{
	"object":  objectName,
	"since":   func(t *time.Time, now time.Time) string { return since(*t, now) },
	"section": func(cs []Check, now time.Time) section { return section{cs, now} },
	"upper":   func(v Verdict) string { return strings.ToUpper(string(v)) },
	"word":    func(s Status) string { return statusStyle[s].word },
	"rfc3339": func(t time.Time) string {
		return t.UTC().Format(time.RFC3339)
	},
	"again": func([]string) bool { return false }, // per page, in WriteHTML
	"same":  func() string { return sameCommands },
}).Parse(statusTemplate))

// WriteHTML writes the report as a page that needs no JavaScript: the
// exporter's /status.
func WriteHTML(w io.Writer, r *Report) error {
	t, err := htmlTemplate.Clone()
	if err != nil {
		return err
	}
	return t.Funcs(template.FuncMap{"again": shown{}.again}).Execute(w, r)
}

// section is what the "checks" template reads: checks and the report time.
type section struct {
	Checks []Check
	Now    time.Time
}
