package docs

import (
	"reflect"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	const md = "intro\n\n| A | B |\n|---|---|\n| x | `a\\|b` |\n| y |  |\n\nafter\n| A | B |\n"
	rows, err := Table(strings.NewReader(md), "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"x", "`a|b`"}, {"y", ""}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("rows = %q, want %q", rows, want)
	}
	if _, err := Table(strings.NewReader("| A | B |\n|---|---|\n| x |\n"), "A", "B"); err == nil {
		t.Error("a row missing a cell is read without error")
	}
	if _, err := Table(strings.NewReader(md), "A", "C"); err == nil {
		t.Error("a missing table is read without error")
	}
}
