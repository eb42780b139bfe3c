package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runbookCommands returns the ocl_exporter command lines of the code
// blocks of a markdown text, continuation lines joined and a "$ " prompt
// dropped.
func runbookCommands(text string) []string {
	var out []string
	inBlock, cmd := false, ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			inBlock = !inBlock
		case !inBlock:
		case cmd != "" || strings.HasPrefix(strings.TrimPrefix(l, "$ "), name+" "):
			cmd += strings.TrimPrefix(strings.TrimSpace(l), "$ ")
			if strings.HasSuffix(cmd, `\`) {
				cmd = strings.TrimSpace(strings.TrimSuffix(cmd, `\`)) + " "
				continue
			}
			out = append(out, cmd)
			cmd = ""
		}
	}
	return out
}

// placeholder is what a reader fills in: <pool>, <name>.
var placeholder = regexp.MustCompile(`<[a-z-]+>`)

// shellWords splits a command line as a POSIX shell would for the cases
// runbooks use: single and double quotes, a $(...) substitution (kept
// whole, to be replaced) and the end of the command at an unquoted |, ;,
// & or >.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	inWord, quote, depth := false, rune(0), 0
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
			continue
		case depth > 0:
			w.WriteRune(r)
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
			continue
		case r == '\'' || r == '"':
			quote, inWord = r, true
			continue
		case r == '(' && strings.HasSuffix(line[:i], "$"):
			depth = 1
			w.WriteRune(r)
			continue
		case strings.ContainsRune("|;&>", r):
			if inWord {
				words = append(words, w.String())
			}
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
			continue
		}
		w.WriteRune(r)
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

var substitution = regexp.MustCompile(`\$\(.*\)`)

// TestRunbookCommandsParse: every ocl_exporter command a runbook gives
// (diagnose with the binary; review after the incident) is accepted by
// the binary's own command line, placeholders filled in: a renamed or
// removed flag fails here instead of on call.
func TestRunbookCommandsParse(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	files, err := filepath.Glob("../../runbooks/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no runbooks: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cmds := runbookCommands(string(b))
		if len(cmds) == 0 {
			t.Errorf("%s: no %s command", filepath.Base(f), name)
		}
		for _, c := range cmds {
			// <pool> would be a redirection to the shell: fill it in first.
			args := shellWords(placeholder.ReplaceAllString(c, "worker"))[1:]
			for i, a := range args {
				args[i] = substitution.ReplaceAllString(a, "example.com")
			}
			if _, err := parseFlags(args, io.Discard); err != nil {
				t.Errorf("%s: %q: %v", filepath.Base(f), c, err)
			}
		}
	}
}

func TestShellWords(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{`ocl_exporter diagnose --pool worker`, []string{"ocl_exporter", "diagnose", "--pool", "worker"}},
		{`a --x="b c" 'd e'f`, []string{"a", "--x=b c", "d ef"}},
		{`a --p=https://$(oc get route x -o jsonpath='{.spec.host}') --q`, []string{"a", "--p=https://$(oc get route x -o jsonpath='{.spec.host}')", "--q"}},
		{`a -o json | jq .`, []string{"a", "-o", "json"}},
		{`a >out`, []string{"a"}},
	} {
		if got := shellWords(c.line); strings.Join(got, "\x00") != strings.Join(c.want, "\x00") {
			t.Errorf("shellWords(%q) = %q, want %q", c.line, got, c.want)
		}
	}
	got := runbookCommands("text ocl_exporter x\n```console\n$ ocl_exporter review \\\n  --from=6h\noc get x\n" +
		"ocl_exporter diagnose --pool <pool>\n```\nocl_exporter y\n")
	if want := []string{"ocl_exporter review --from=6h", "ocl_exporter diagnose --pool <pool>"}; strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("runbookCommands = %q, want %q", got, want)
	}
}
