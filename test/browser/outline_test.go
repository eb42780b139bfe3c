package browser

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStatusPNGIsCurrent: docs/status.png shows the page the exporter
// serves for the example. Its outline (Sidecar, written with the PNG)
// must be the outline of that page as diagnose renders it now
// (diagnose/testdata/example.html, which diagnose's golden test keeps
// true); a page that gained a check or a stage fails here until the
// screenshot is taken again.
func TestStatusPNGIsCurrent(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "diagnose", "testdata", "example.html"))
	if err != nil {
		t.Fatal(err)
	}
	shown, err := os.ReadFile(filepath.Join(repoRoot, Sidecar))
	if err != nil {
		t.Fatal(err)
	}
	if got := outline(renderedText(string(page))); got != string(shown) {
		t.Errorf("docs/status.png shows another page than the exporter serves: run `make chromium` and `go test -tags browser ./test/browser/ -update-docs`, then review docs/status.png.\nthe page now:\n%s\nthe screenshot (%s):\n%s", got, Sidecar, shown)
	}
}
