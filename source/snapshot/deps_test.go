package snapshot

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestNeedsNoClientGo: the offline side reads and writes files, and feeds
// the informers through package source; it needs none of client-go, and
// its test binary builds in about half the time of source's from an empty
// cache. Its tests may link the jsonpath package oc's printer uses (the
// README recipe's test), which needs the standard library only.
func TestNeedsNoClientGo(t *testing.T) {
	for _, test := range []bool{false, true} {
		out, err := exec.Command("go", "list", "-test="+strconv.FormatBool(test), "-deps", "-f", "{{.ImportPath}}", ".").Output()
		if err != nil {
			t.Fatalf("go list -deps: %v", err)
		}
		for _, p := range strings.Fields(string(out)) {
			if !strings.HasPrefix(p, "k8s.io/client-go/") {
				continue
			}
			if test && (p == "k8s.io/client-go/util/jsonpath" || p == "k8s.io/client-go/third_party/forked/golang/template") {
				continue
			}
			t.Errorf("package snapshot (with its tests: %v) links %s: keep client-go on the live side, in package source", test, p)
		}
	}
}
