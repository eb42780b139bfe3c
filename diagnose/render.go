package diagnose

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ocl-exporter/ocl_exporter/plaintext"
)

// Formats of the report.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Formats lists the --output values.
var Formats = []string{FormatText, FormatJSON, FormatMarkdown}

// Write renders the report in one of Formats.
func Write(w io.Writer, r *Report, format string, text TextOptions) error {
	switch format {
	case FormatText:
		return WriteText(w, r, text)
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatMarkdown:
		return WriteMarkdown(w, r)
	}
	return fmt.Errorf("unknown output format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// WriteJSON writes the report as indented JSON (docs/diagnose.schema.json).
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

var markdownStatus = map[Status]string{Passed: "passed", Failed: "**FAILED**", Running: "running", NotReached: "not reached", NotCaptured: "not captured"}

// WriteMarkdown writes the report for an incident ticket: a table of the
// checks per pool and the evidence of every failed or running check.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# OCL diagnosis: %s\n\n", r.Verdict)
	fmt.Fprintf(&b, "%s. Evaluated at %s, MCO namespace %s.\n", mdEscape(r.Summary), r.Time.Format(time.RFC3339), code(r.Namespace))
	b.WriteString("\n## Cluster\n\n")
	checkTable(&b, r.Cluster)
	seen := shown{}
	findings(&b, "", r.Cluster, r.Time, seen)
	var plain []Pool
	for _, p := range r.Pools {
		if len(p.Stages) == 0 {
			plain = append(plain, p)
			continue
		}
		fmt.Fprintf(&b, "\n## Pool %s\n\n%s.\n\n", code(p.Name), mdEscape(p.Summary))
		b.WriteString("| Stage | Check | Status |\n|---|---|---|\n")
		for _, s := range p.Stages {
			for _, c := range s.Checks {
				fmt.Fprintf(&b, "| %d %s | %s (`%s`) | %s |\n", s.Number, s.Name, mdEscape(c.Title), c.ID, markdownStatus[c.Status])
			}
		}
		for _, s := range p.Stages {
			findings(&b, fmt.Sprintf("stage %d %s: ", s.Number, s.Name), s.Checks, r.Time, seen)
		}
	}
	if len(plain) > 0 {
		b.WriteString("\n## Pools not layered\n\n")
		for _, p := range plain {
			fmt.Fprintf(&b, "- %s: %s\n", code(p.Name), mdEscape(p.Summary))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func checkTable(b *strings.Builder, checks []Check) {
	b.WriteString("| Check | Status |\n|---|---|\n")
	for _, c := range checks {
		fmt.Fprintf(b, "| %s (`%s`) | %s |\n", mdEscape(c.Title), c.ID, markdownStatus[c.Status])
	}
}

func findings(b *strings.Builder, prefix string, checks []Check, now time.Time, seen shown) {
	for _, c := range checks {
		for _, f := range c.Findings {
			fmt.Fprintf(b, "\n### %s%s: %s\n\n", prefix, c.Status, mdEscape(c.Title))
			fmt.Fprintf(b, "- Evidence: %s", code(objectName(f.Object)))
			if f.Field != "" {
				fmt.Fprintf(b, ", field %s", code(f.Field))
			}
			fmt.Fprintf(b, "\n- Problem: %s\n", mdEscape(f.Message))
			if f.Class != "" {
				fmt.Fprintf(b, "- Cause: `%s`\n", f.Class)
			}
			if f.Excerpt != "" {
				fmt.Fprintf(b, "- Excerpt: %s\n", code(f.Excerpt))
			}
			if f.LogFile != "" {
				fmt.Fprintf(b, "- Log: %s\n", code(f.LogFile))
			}
			if f.Since != nil {
				fmt.Fprintf(b, "- Since: %s\n", since(*f.Since, now))
			}
			if f.Runbook != nil {
				fmt.Fprintf(b, "- Runbook: [%s](%s)\n", f.Runbook.Alert, linkDestination.Replace(f.Runbook.URL))
			}
			switch {
			case len(f.Commands) == 0:
			case seen.again(f.Commands):
				b.WriteString("- Next: " + sameCommands + "\n")
			default:
				b.WriteString("\nNext:\n\n```console\n" + strings.Join(f.Commands, "\n") + "\n```\n")
			}
		}
	}
}

// linkDestination percent-encodes what would end a markdown link's
// destination early and start text, or another link, after it.
var linkDestination = strings.NewReplacer("(", "%28", ")", "%29", "<", "%3C", ">", "%3E", " ", "%20", "\\", "%5C")

// mdEscape is plaintext.Markdown; the report's values are already one
// line each (cleanText).
var mdEscape = plaintext.Markdown

// code is a value in a code span, where nothing is markup; a backtick
// would end the span, so it becomes a quote.
func code(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }
