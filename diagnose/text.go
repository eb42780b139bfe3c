package diagnose

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Width is the terminal width the text report fits, commands aside.
const Width = 80

// TextOptions tune the text report.
type TextOptions struct {
	// Color adds ANSI colours; set it only for a terminal, and not when
	// NO_COLOR is set (see UseColor).
	Color bool
}

// UseColor decides colour the usual way: only on a terminal, never when
// NO_COLOR is set to anything or TERM is dumb.
func UseColor(isTerminal bool, getenv func(string) string) bool {
	return isTerminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// ANSI styles.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
)

var statusStyle = map[Status]struct{ word, color string }{
	Passed:      {"passed", ansiGreen},
	Failed:      {"FAILED", ansiRed + ansiBold},
	Running:     {"running", ansiYellow},
	NotReached:  {"not reached", ansiDim},
	NotCaptured: {"unknown", ansiYellow},
}

var verdictStyle = map[Verdict]string{Healthy: ansiGreen, Problem: ansiRed + ansiBold, Unknown: ansiYellow}

// WriteText writes the report for a terminal: the verdict, the cluster
// checks, then each pool stage by stage. Stages that passed or were not
// reached take one line; failed and running ones list their checks and
// the evidence.
func WriteText(w io.Writer, r *Report, o TextOptions) error {
	t := &textWriter{o: o, now: r.Time, shown: shown{}}
	t.wrapped(0, "  ", t.style(ansiBold, "OCL diagnosis")+" ", "at "+r.Time.Format(time.DateTime)+" UTC, MCO namespace "+r.Namespace)
	t.wrapped(0, "  ", t.style(verdictStyle[r.Verdict], "Verdict: "+strings.ToUpper(string(r.Verdict)))+": ", r.Summary)
	t.blank()
	t.line(0, t.style(ansiBold, "Cluster"))
	for _, c := range r.Cluster {
		t.check(2, c)
	}
	var plain []Pool
	for _, p := range r.Pools {
		if len(p.Stages) == 0 {
			plain = append(plain, p)
			continue
		}
		t.blank()
		head := "Pool " + p.Name
		if p.MachineOSConfig != "" && p.MachineOSConfig != p.Name {
			head += " (MachineOSConfig " + p.MachineOSConfig + ")"
		}
		t.wrapped(0, "  ", t.style(ansiBold, head)+": ", p.Summary)
		for _, s := range p.Stages {
			t.stage(s)
		}
	}
	if len(plain) > 0 {
		t.blank()
		t.line(0, t.style(ansiBold, "Pools not layered"))
		for _, p := range plain {
			t.wrapped(2, "    ", p.Name+": ", p.Summary)
		}
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

type textWriter struct {
	b     strings.Builder
	o     TextOptions
	now   time.Time
	shown shown
}

func (t *textWriter) style(ansi, s string) string {
	if !t.o.Color {
		return s
	}
	return ansi + s + ansiReset
}

func (t *textWriter) status(s Status) string {
	st := statusStyle[s]
	return t.style(st.color, fmt.Sprintf("%-12s", st.word))
}

func (t *textWriter) blank() { t.b.WriteByte('\n') }

func (t *textWriter) line(indent int, s string) {
	t.b.WriteString(strings.Repeat(" ", indent) + s + "\n")
}

// wrapped writes prefix (verbatim) and s from indent, continuing s on
// lines indented by cont. Colour codes are not counted.
func (t *textWriter) wrapped(indent int, cont, prefix, s string) {
	for i, l := range wrap(s, Width-indent-visible(prefix), Width-indent-len(cont)) {
		if i == 0 {
			l = prefix + l
		} else {
			l = cont + l
		}
		t.line(indent, l)
	}
}

func (t *textWriter) stage(s Stage) {
	head := fmt.Sprintf("%d %-16s", s.Number, s.Name)
	if s.Status == Passed || s.Status == NotReached {
		t.line(2, head+t.status(s.Status)+fmt.Sprintf("(%d checks)", len(s.Checks)))
		return
	}
	t.line(2, head+t.style(statusStyle[s.Status].color, statusStyle[s.Status].word))
	for _, c := range s.Checks {
		t.check(4, c)
	}
}

// check writes the status, the title, and each finding's evidence.
func (t *textWriter) check(indent int, c Check) {
	t.wrapped(indent, strings.Repeat(" ", 12), t.status(c.Status), c.Title)
	for _, f := range c.Findings {
		t.finding(indent+2, f, c.Status)
	}
}

const labelWidth = 10

func (t *textWriter) field(indent int, label, value string) {
	if value == "" {
		return
	}
	pad := strings.Repeat(" ", labelWidth)
	for i, l := range wrap(value, Width-indent-labelWidth, Width-indent-labelWidth) {
		if i == 0 {
			t.line(indent, fmt.Sprintf("%-*s", labelWidth, label+":")+l)
		} else {
			t.line(indent, pad+l)
		}
	}
}

func (t *textWriter) finding(indent int, f Finding, s Status) {
	t.field(indent, "evidence", strings.TrimSpace(objectName(f.Object)+" "+f.Field))
	label := "problem"
	if s != Failed {
		label = "state"
	}
	t.field(indent, label, f.Message)
	cause := string(f.Class)
	if f.Excerpt != "" {
		cause = strings.TrimPrefix(cause+": ", ": ") + "\"" + f.Excerpt + "\""
	}
	t.field(indent, "cause", cause)
	t.field(indent, "log", f.LogFile)
	if f.Since != nil {
		t.field(indent, "since", since(*f.Since, t.now))
	}
	if f.Runbook != nil {
		t.field(indent, "runbook", f.Runbook.URL)
	}
	if len(f.Commands) > 0 && t.shown.again(f.Commands) {
		t.field(indent, "next", sameCommands)
	} else if len(f.Commands) > 0 {
		t.line(indent, "next:")
		for _, c := range f.Commands {
			for _, l := range shellLines(c, Width-indent-2) {
				t.line(indent+2, l)
			}
		}
	}
}

// objectName is kind/name, with the namespace when there is one.
func objectName(o Object) string {
	s := o.Kind + "/" + o.Name
	if o.Namespace != "" {
		s += " -n " + o.Namespace
	}
	return s
}

// since is a time and how long before the report it was ("11m ago").
func since(t, now time.Time) string {
	return t.UTC().Format(time.DateTime) + " UTC (" + Ago(now.Sub(t)) + " ago)"
}

// Ago is a short duration: 45s, 12m, 3h5m, 2d4h.
func Ago(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// wrap breaks s at spaces into lines of at most first, then rest, bytes
// (ANSI codes excluded); a word longer than a line stays whole.
func wrap(s string, first, rest int) []string {
	var lines []string
	var cur strings.Builder
	n, limit := 0, first
	for _, w := range strings.Fields(s) {
		wl := visible(w)
		if n > 0 && n+1+wl > limit {
			lines = append(lines, cur.String())
			cur.Reset()
			n, limit = 0, rest
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(w)
		n += wl
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// visible is the length of s without ANSI escape sequences.
func visible(s string) int {
	n, esc := 0, false
	for _, r := range s {
		switch {
		case r == '\x1b':
			esc = true
		case esc && r == 'm':
			esc = false
		case !esc:
			n++
		}
	}
	return n
}

// shellLines breaks a long command at spaces outside quotes with a
// trailing backslash, so it still pastes into a shell as one command.
func shellLines(cmd string, width int) []string {
	if len(cmd) <= width {
		return []string{cmd}
	}
	var words []string
	var cur strings.Builder
	quote := rune(0)
	for _, r := range cmd {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote = r
		case quote == 0 && r == ' ':
			words = append(words, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	words = append(words, cur.String())
	var lines []string
	line := ""
	for _, w := range words {
		if line != "" && len(line)+1+len(w)+2 > width {
			lines = append(lines, line+" \\")
			line = "  " + w
			continue
		}
		if line == "" {
			line = w
		} else {
			line += " " + w
		}
	}
	return append(lines, line)
}
