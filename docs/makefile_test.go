package docs

import (
	"os"
	"regexp"
	"testing"
)

// TestEveryMakeTargetIsDescribed: make help lists the targets that carry
// a `## target:` comment (hack/help.awk); a target without one would be
// missing from it.
func TestEveryMakeTargetIsDescribed(t *testing.T) {
	rule := regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):([^=]|$)`)
	described := regexp.MustCompile(`(?m)^## ([a-z][a-z0-9-]*):`)
	for _, f := range []string{"../Makefile", "../hack/integration.mk"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		has := map[string]bool{}
		for _, m := range described.FindAllSubmatch(b, -1) {
			has[string(m[1])] = true
		}
		n := 0
		for _, m := range rule.FindAllSubmatch(b, -1) {
			n++
			if !has[string(m[1])] {
				t.Errorf("%s: target %s has no `## %s: what it does` comment, so make help omits it", f, m[1], m[1])
			}
		}
		if n == 0 {
			t.Errorf("%s: no targets found", f)
		}
	}
}
