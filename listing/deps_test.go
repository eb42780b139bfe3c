package listing

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependsOnTheStandardLibrary: make fuzz instruments every package
// the fuzz targets link; one that pulled apimachinery and the API types
// would take minutes to build instead of seconds (the snapshot loader's
// target: 283 s from an empty cache, CONTRIBUTING.md).
func TestDependsOnTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	want := []string{
		"github.com/ocl-exporter/ocl_exporter/listing",
		"github.com/ocl-exporter/ocl_exporter/listing/listingtest",
		"github.com/ocl-exporter/ocl_exporter/regularfile",
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, _, _ := strings.Cut(line, " ") // "listing [listing.test]" is listing built with its tests
		if !slices.Contains(want, p) && !strings.HasSuffix(p, ".test") {
			t.Errorf("listing or its tests link %s: keep them on the standard library", p)
		}
	}
}
