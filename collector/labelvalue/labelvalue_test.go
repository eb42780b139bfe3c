package labelvalue

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBoundLabelValue(t *testing.T) {
	long := strings.Repeat("a", MaxBytes)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short", "quay.io/example/os:latest", "quay.io/example/os:latest"},
		{"at the bound", long, long},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"one over", long + "b", strings.Repeat("a", MaxBytes-34) + "...(truncated sha256:d9a41d9b6cbf)"},
		{"cut inside a character", "x" + strings.Repeat("é", 600), "x" + strings.Repeat("é", 494) + "...(truncated sha256:cf1671cd20e0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Bound(tc.in); got != tc.want {
				t.Errorf("got %q (%d bytes), want %q", got, len(got), tc.want)
			}
		})
	}
}

// FuzzBoundLabelValue checks the bound's promises for any input: at most
// MaxBytes of valid UTF-8, unchanged when already within them,
// idempotent, and distinct long values stay distinct.
func FuzzBoundLabelValue(f *testing.F) {
	f.Add("quay.io/example/os:latest", 1)
	f.Add("é", MaxBytes)
	f.Add("\xff\xfe", 600)
	f.Fuzz(func(t *testing.T, s string, repeat int) {
		if repeat < 0 || repeat > 4096 || len(s)*repeat > 1<<20 {
			return
		}
		v := strings.Repeat(s, repeat)
		got := Bound(v)
		if len(got) > MaxBytes || !utf8.ValidString(got) {
			t.Fatalf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
		}
		if utf8.ValidString(v) && len(v) <= MaxBytes && got != v {
			t.Fatalf("a value within the bound changed: %q -> %q", v, got)
		}
		if again := Bound(got); again != got {
			t.Fatalf("not idempotent: %q -> %q", got, again)
		}
		if other := Bound(v + "x"); len(v) >= MaxBytes && other == got {
			t.Fatalf("two long values share the bounded value %q", got)
		}
	})
}
