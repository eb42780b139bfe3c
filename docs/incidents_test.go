package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// minIncidents is the fewest incidents the catalogue may hold (issue 33).
const minIncidents = 20

var (
	// incidentRow matches a row of the summary table and captures the bug
	// id, its anchor and the last cell (the lifecycle).
	incidentRow = regexp.MustCompile(`^\| \[(OCPBUGS-\d+)\]\(#([a-z0-9-]+)\) \|.*\| ([^|]+) \|$`)
	// incidentHeading matches an incident's section.
	incidentHeading = regexp.MustCompile(`^### (OCPBUGS-\d+)$`)
	// relativeLink matches a markdown link to a file of the repository.
	relativeLink = regexp.MustCompile(`\]\((\.\./[^)#]+)\)`)
	// lifecycleLink is the only form the lifecycle cell may take when it
	// names one: a link to testdata/lifecycles/<name>/lifecycle.yaml.
	lifecycleLink = regexp.MustCompile(`^\[([a-z0-9-]+)\]\(\.\./testdata/lifecycles/([a-z0-9-]+)/lifecycle\.yaml\)$`)
)

// noLifecycle are the words the lifecycle cell uses when none replays the
// incident; the section then says why.
var noLifecycle = []string{"none", "not replayed"}

// TestIncidentsCatalogue keeps docs/incidents.md from rotting: at least
// minIncidents rows, each with its section and each section with its row,
// every lifecycle cell a link named after the directory it points to (or
// saying there is none), and every relative link naming a file that
// exists. A lifecycle renamed or deleted fails here, not in a reader's
// browser.
func TestIncidentsCatalogue(t *testing.T) {
	b, err := os.ReadFile("incidents.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var rows, sections []string
	for _, line := range strings.Split(text, "\n") {
		if m := incidentHeading.FindStringSubmatch(line); m != nil {
			sections = append(sections, m[1])
		}
		m := incidentRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id, anchor, cell := m[1], m[2], strings.TrimSpace(m[3])
		if slices.Contains(rows, id) {
			t.Errorf("%s has two rows", id)
		}
		rows = append(rows, id)
		if anchor != strings.ToLower(id) {
			t.Errorf("%s links #%s, its section's anchor is #%s", id, anchor, strings.ToLower(id))
		}
		if l := lifecycleLink.FindStringSubmatch(cell); l != nil {
			if l[1] != l[2] {
				t.Errorf("%s: link text %q names another lifecycle than %q", id, l[1], l[2])
			}
		} else if !slices.Contains(noLifecycle, cell) {
			t.Errorf("%s: lifecycle cell %q is neither a link to testdata/lifecycles/<name>/lifecycle.yaml nor one of %q", id, cell, noLifecycle)
		}
	}
	if len(rows) < minIncidents {
		t.Errorf("%d incidents in the summary table, want at least %d (did the row format change?)", len(rows), minIncidents)
	}
	for _, id := range rows {
		if !slices.Contains(sections, id) {
			t.Errorf("%s has a row and no section", id)
		}
	}
	for _, id := range sections {
		if !slices.Contains(rows, id) {
			t.Errorf("%s has a section and no row", id)
		}
	}

	var missing []string
	for _, m := range relativeLink.FindAllStringSubmatch(text, -1) {
		if _, err := os.Stat(filepath.FromSlash(m[1])); err != nil && !slices.Contains(missing, m[1]) {
			missing = append(missing, m[1])
		}
	}
	if len(missing) > 0 {
		t.Errorf("incidents.md links files that do not exist:\n%s", strings.Join(missing, "\n"))
	}
}
