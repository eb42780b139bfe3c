package plaintext

import (
	"strings"
	"testing"
	"unicode"
)

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"\x1b[31mred\x1b[0m": "[31mred[0m",
		"a\nb\tc\rd":         "a b c d",
		"c1 \u009b bidi \u202eevil\u202c zero\u200bwidth": "c1  bidi evil zerowidth",
		"bad \xff": "bad \uFFFD",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	long := Line(strings.Repeat("é", 1000))
	if len(long) > MaxBytes || !strings.HasSuffix(long, "é…") {
		t.Errorf("clipped to %d bytes, ending %q", len(long), long[len(long)-8:])
	}
	for _, r := range Line("\x00\x07\x7f\u0085\u2066\u200b") {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			t.Errorf("kept %U", r)
		}
	}
}

func TestMarkdown(t *testing.T) {
	if got := Markdown("# <script>x</script> [a](b)"); got != `\# &lt;script&gt;x&lt;/script&gt; \[a\](b)` {
		t.Errorf("Markdown: %q", got)
	}
}
