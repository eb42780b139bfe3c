package review

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ocl-exporter/ocl_exporter/plaintext"
)

// Formats Render writes.
var Formats = []string{"text", "markdown", "json"}

// Render writes r as text, markdown or json.
func Render(w io.Writer, r *Report, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "text", "markdown":
		p := &printer{md: format == "markdown", start: r.DataFrom}
		p.report(r)
		_, err := io.WriteString(w, p.b.String())
		return err
	}
	return fmt.Errorf("unknown output %q: one of %s", format, strings.Join(Formats, ", "))
}

// printer writes the text and markdown forms, which differ in headings,
// lists and code spans only.
type printer struct {
	b     strings.Builder
	md    bool
	start time.Time
}

func (p *printer) heading(level int, format string, args ...any) {
	title := fmt.Sprintf(format, args...)
	if p.b.Len() > 0 && !strings.HasSuffix(p.b.String(), "\n\n") {
		p.b.WriteString("\n")
	}
	if p.md {
		fmt.Fprintf(&p.b, "%s %s\n\n", strings.Repeat("#", level), title)
		return
	}
	fmt.Fprintf(&p.b, "%s\n", title)
	if level == 1 {
		fmt.Fprintf(&p.b, "%s\n", strings.Repeat("=", len(title)))
	}
}

func (p *printer) item(format string, args ...any) { p.nested(0, format, args...) }

// nested writes a list item at depth (0 for the top level).
func (p *printer) nested(depth int, format string, args ...any) {
	prefix := strings.Repeat("  ", depth+1)
	if p.md {
		prefix = strings.Repeat("  ", depth) + "- "
	}
	fmt.Fprintf(&p.b, "%s%s\n", prefix, fmt.Sprintf(format, args...))
}

// code quotes a name or an excerpt: a code span in markdown (with a fence
// long enough for the backquotes it holds), double quotes in text.
func (p *printer) code(s string) string {
	if !p.md {
		return fmt.Sprintf("%q", s)
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// text is free text that holds values from the querier (cleaned by
// Build): escaped in markdown, as it is in text.
func (p *printer) text(s string) string {
	if p.md {
		return plaintext.Markdown(s)
	}
	return s
}

// at writes a moment as UTC time and offset from the data's start.
func (p *printer) at(t time.Time) string {
	if d := t.Sub(p.start); d < 0 {
		return t.UTC().Format("2006-01-02 15:04:05") + " (" + shortDuration(-d) + " before the data)"
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " (+" + shortDuration(t.Sub(p.start)) + ")"
}

func (p *printer) span(s Span) string {
	if s.End == nil {
		return p.at(s.Start) + " until the end of the window (still on)"
	}
	return p.at(s.Start) + " to " + s.End.UTC().Format("15:04:05") + ", " + shortDuration(s.End.Sub(s.Start))
}

// shortDuration is d to the second, without its zero trailing units:
// 2h, 2h5m, 2h0m5s, 45m, 2m30s, 10s, 0s.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d == 0 {
		return "0s"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func (p *printer) report(r *Report) {
	p.heading(1, "OCL incident review, %s to %s UTC", r.From.Format("2006-01-02 15:04"), r.To.Format("2006-01-02 15:04"))
	var scope []string
	if r.Cluster != "" {
		scope = append(scope, "cluster "+p.code(r.Cluster))
	}
	if r.Pool != "" {
		scope = append(scope, "pool "+p.code(r.Pool))
	}
	if len(scope) > 0 {
		p.item("Scope: %s", strings.Join(scope, ", "))
	}
	if r.DataFrom.Sub(r.From) >= time.Duration(r.Step) {
		p.item("The exporter's series start at %s: Prometheus holds nothing earlier in the window (retention, or the exporter was not scraped)", r.DataFrom.Format(time.RFC3339))
	}
	for _, w := range r.Warnings {
		p.item("Warning: %s", p.text(w))
	}
	switch {
	case !r.Incident && r.Partial:
		p.item("No incident can be concluded: the querier warned that its answers may be partial (above), and neither an OCL alert nor a failure signal showed in what it returned. Review again when every store answers.")
	case !r.Incident:
		p.item("No incident: no OCL alert fired and no failure signal showed in the window.")
	}
	// One pool and nothing outside it: its summary is the report's.
	if len(r.Pools) != 1 || len(r.Alerts) > 0 {
		p.summary(2, r.Summary)
	}
	if len(r.Alerts) > 0 {
		p.heading(2, "Alerts without a pool")
		p.alerts(r.Alerts)
	}
	for _, pr := range r.Pools {
		p.pool(pr)
	}
	// Last: how exact the times above are, not a figure of the incident
	// (it read as one above "Time to resolve").
	p.heading(2, "Query")
	p.item("Step: %s; every time above is exact to within it", time.Duration(r.Step))
}

func (p *printer) summary(level int, s Summary) {
	p.heading(level, "Summary")
	if s.FirstSignal != nil {
		p.item("First failing signal: %s, %s%s", p.at(s.FirstSignal.Span.Start), p.text(s.FirstSignal.What), p.class(s.FirstSignal.Class))
	}
	if s.FirstPage != nil {
		p.item("First page: %s", p.at(*s.FirstPage))
	}
	if s.TimeToDetect != nil {
		p.item("Time to detect: %s", shortDuration(time.Duration(*s.TimeToDetect)))
	}
	switch {
	case s.Resolved != nil:
		p.item("Resolved: %s", p.at(*s.Resolved))
	case s.Pages > 0:
		p.item("Resolved: not by the end of the window")
	}
	if s.TimeToResolve != nil {
		p.item("Time to resolve: %s", shortDuration(time.Duration(*s.TimeToResolve)))
	}
	p.item("Pages: %d; builds: %d, failed build pods: %d; nodes off target: %d, failing: %d",
		s.Pages, s.Builds, s.FailedPods, s.NodesOffTarget, s.NodesFailing)
}

func (p *printer) class(c string) string {
	if c == "" {
		return ""
	}
	return " (class " + p.code(c) + ")"
}

func (p *printer) pool(r PoolReport) {
	p.heading(2, "Pool %s", p.text(r.Pool))
	p.summary(3, r.Summary)
	if len(r.CurrentBuild) > 0 {
		p.heading(3, "MachineOSConfig: current build")
		for _, c := range r.CurrentBuild {
			p.item("%s: %s", p.at(c.At), p.code(c.Value))
		}
	}
	if len(r.Builds) > 0 {
		p.heading(3, "Builds")
		for _, b := range r.Builds {
			p.build(b)
		}
	}
	p.rollout(r.Rollout)
	if len(r.Alerts) > 0 {
		p.heading(3, "Alerts")
		p.alerts(r.Alerts)
	}
}

func (p *printer) build(b BuildReport) {
	var phases []string
	for _, c := range b.Phases {
		if c.At.Equal(p.start) {
			phases = append(phases, p.text(c.Value)+" at the start of the data")
			continue
		}
		phases = append(phases, p.text(c.Value)+" "+c.At.UTC().Format("15:04:05"))
	}
	line := p.code(b.Name)
	if len(phases) > 0 {
		line += ": " + strings.Join(phases, ", ")
	}
	if b.Duration != nil {
		line += "; ran " + shortDuration(time.Duration(*b.Duration))
	}
	if b.PodFailures > 0 {
		line += fmt.Sprintf("; %d failed pod(s)", b.PodFailures)
	}
	p.item("%s", line)
	for _, f := range b.Failures {
		p.signal(f)
	}
}

func (p *printer) signal(s Signal) {
	line := "failing" + p.class(s.Class) + " " + p.span(s.Span)
	if s.First != "" {
		line += ": " + p.code(s.First)
	}
	if s.Last != "" && s.Last != s.First {
		line += ", last " + p.code(s.Last)
	}
	p.nested(1, "%s", line)
}

func (p *printer) rollout(r RolloutReport) {
	if len(r.Nodes) == 0 && len(r.Updating) == 0 && len(r.Degraded) == 0 && len(r.Paused) == 0 {
		return
	}
	p.heading(3, "Rollout")
	for _, s := range r.Updating {
		p.item("Updating: %s", p.span(s))
	}
	for _, s := range r.Degraded {
		p.item("Degraded: %s", p.span(s))
	}
	for _, s := range r.Paused {
		p.item("Paused: %s", p.span(s))
	}
	if r.Duration != nil {
		p.item("Rollout: %s from the first node targeted to the last on target", shortDuration(time.Duration(*r.Duration)))
	}
	for _, n := range r.Nodes {
		line := p.code(n.Node) + ": "
		if n.Targeted != nil {
			line += "targeted " + p.at(*n.Targeted)
		} else {
			line += "off target from the start of the data"
		}
		if n.Reached != nil {
			line += ", on target " + p.at(*n.Reached)
		} else {
			line += ", not on target by the end of the window"
		}
		p.item("%s", line)
		for _, f := range n.Failures {
			p.signal(f)
		}
	}
}

func (p *printer) alerts(as []Alert) {
	for _, a := range as {
		keys := make([]string, 0, len(a.Labels))
		for k := range a.Labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var labels []string
		for _, k := range keys {
			labels = append(labels, p.text(k+"="+a.Labels[k]))
		}
		line := p.code(a.Name) + " (" + p.text(a.Severity)
		if len(labels) > 0 {
			line += ", " + strings.Join(labels, ", ")
		}
		line += "): " + p.span(a.Span)
		if a.Signal != nil {
			line += "; behind it: " + p.text(a.Signal.What) + p.class(a.Signal.Class) + " since " + a.Signal.Span.Start.UTC().Format("15:04:05")
		}
		p.item("%s", line)
	}
}
