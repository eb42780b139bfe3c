package snapshot

import (
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"
)

// TestCutCaptureIsNotCaptured: a capture's resource is captured only when
// its end record follows as many objects as its record announced; records
// without a count (captures before the end record) are read whole, as
// they were.
func TestCutCaptureIsNotCaptured(t *testing.T) {
	const start = "apiVersion: ocl-exporter.io/v1\nkind: CaptureRecord\nresource: secrets\ncaptured: true\n"
	const end = "---\napiVersion: ocl-exporter.io/v1\nkind: CaptureRecord\nresource: secrets\nend: true\n"
	secret := func(name string) string {
		return "---\napiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: openshift-machine-config-operator}\n"
	}
	two := start + "objects: 2\n" + secret("a") + secret("b")
	for _, tc := range []struct {
		name, file string
		why        string // "" when captured
	}{
		{"whole", two + end, ""},
		{"no secret, whole", start + "objects: 0\n" + end, ""},
		{"cut before the end record", two, "cut short after 2 of its 2 objects"},
		{"cut after one object", start + "objects: 2\n" + secret("a"), "cut short after 1 of its 2 objects"},
		{"fewer objects than announced", start + "objects: 3\n" + secret("a") + secret("b") + end, "2 objects where its record announced 3"},
		{"cut, then another resource's record", two + "---\n" + strings.ReplaceAll(start, "secrets", "nodes") + "objects: 0\n",
			"cut short after 2 of its 2 objects"},
		{"before the end record (no count): whole", start + secret("a"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"capture.yaml": {Data: []byte(tc.file)}}
			_, cov, err := loader{maxBytes: MaxFileBytes, logger: slog.New(slog.DiscardHandler)}.load(t.Context(), fsys, ".")
			if err != nil {
				t.Fatal(err)
			}
			got := cov.notCaptured(DefaultNamespace)["secrets"]
			switch {
			case tc.why == "" && got != nil:
				t.Errorf("not captured: %v", got)
			case tc.why != "" && (got == nil || !strings.Contains(got.Error(), "capture.yaml holds it incompletely ("+tc.why)):
				t.Errorf("got %v, want not captured: capture.yaml holds it incompletely (%s", got, tc.why)
			}
		})
	}
}
