package diagnose

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/docs"
)

// TestChecksTableIsChecks: docs/diagnose.md's table of checks lists
// diagnose.Checks in report order, each with its stage and the runbooks
// its failures link.
func TestChecksTableIsChecks(t *testing.T) {
	const path = "../docs/diagnose.md"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := docs.Table(f, "ID", "Stage", "Fails when", "Runbook")
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for i, c := range Checks {
		stage := strconv.Itoa(c.Stage)
		if c.Stage == StageCluster {
			stage = "cluster"
		}
		want := []string{"`" + c.ID + "`", stage, strings.Join(c.Alerts, ", ")}
		if i >= len(rows) {
			t.Errorf("%s: no row for check %s: add | %s | %s | ... | %s |", path, c.ID, want[0], want[1], want[2])
			continue
		}
		got := []string{rows[i][0], rows[i][1], rows[i][3]}
		if got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("%s: row %d reads | %s | %s | ... | %s |, want | %s | %s | ... | %s | (diagnose.Checks, in its order)",
				path, i+1, got[0], got[1], got[2], want[0], want[1], want[2])
		}
	}
	for _, r := range rows[min(len(rows), len(Checks)):] {
		t.Errorf("%s: row for %s, which is no check of diagnose.Checks", path, r[0])
	}
}
