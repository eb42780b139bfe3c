package diagnose

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/docs"
)

// TestChecksTableIsChecks keeps docs/diagnose.md's table of checks
// diagnose.Checks, in report order, each with its stage and the runbooks
// its failures link: make generate (go test ./diagnose/ -update) writes
// those cells and a new check's row; "Fails when" is written by hand, and
// the test names a check whose cell is empty.
func TestChecksTableIsChecks(t *testing.T) {
	const path = "../docs/diagnose.md"
	header := []string{"ID", "Stage", "Fails when", "Runbook"}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	old, err := docs.Table(strings.NewReader(doc), header...)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	failsWhen := map[string]string{}
	for _, row := range old {
		failsWhen[row[0]] = row[2]
	}
	var rows [][]string
	for _, c := range Checks {
		stage := strconv.Itoa(c.Stage)
		if c.Stage == StageCluster {
			stage = "cluster"
		}
		id := "`" + c.ID + "`"
		fails := failsWhen[id]
		if fails == "" && !*update {
			t.Errorf("%s: write when check %s fails in its row of the table | %s | (make generate adds the row)", path, c.ID, strings.Join(header, " | "))
		}
		delete(failsWhen, id)
		rows = append(rows, []string{id, stage, fails, strings.Join(c.Alerts, ", ")})
	}
	want, err := docs.ReplaceTable(doc, rows, header...)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for id := range failsWhen {
		t.Errorf("%s: row for %s, which is no check of diagnose.Checks: make generate drops it", path, id)
	}
	if want != doc && !t.Failed() {
		t.Errorf("%s: the table of checks is not diagnose.Checks (its order, a stage or the alerts of a check): make generate rewrites it", path)
	}
}
