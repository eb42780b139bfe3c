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

func TestReplaceTable(t *testing.T) {
	const md = "intro\n\n| A | B |\n|---|---|\n| x | y |\n| z | w |\n\nafter\n"
	got, err := ReplaceTable(md, [][]string{{"a|b", ""}, {"c", "d"}}, "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n\n| A | B |\n|---|---|\n| a\\|b | |\n| c | d |\n\nafter\n"; got != want {
		t.Errorf("ReplaceTable = %q, want %q", got, want)
	}
	if _, err := ReplaceTable(md, nil, "A", "C"); err == nil {
		t.Error("a missing table is replaced without error")
	}
	if _, err := ReplaceTable(md, [][]string{{"x"}}, "A", "B"); err == nil {
		t.Error("a row missing a cell is written without error")
	}
}

func TestKeyed(t *testing.T) {
	old := [][]string{{"c"}, {"a"}, {"gone"}, {"b"}}
	got := Keyed(old, []string{"new0", "a", "b", "new1", "c", "new2"})
	if want := []string{"new0", "c", "new2", "a", "b", "new1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Keyed = %q, want %q", got, want)
	}
}
