package scenario

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const scenarios = "../../testdata/scenarios"

// TestNoCopies fails when a scenario holds a file byte-identical to
// another scenario's (or to another of its own): the copy is one more
// place a change must reach. Every scenario must also read whole.
func TestNoCopies(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(scenarios, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios under %s: %v", scenarios, err)
	}
	first := map[[sha256.Size]byte]string{}
	for _, dir := range dirs {
		if _, err := Read(dir); err != nil {
			t.Error(err)
		}
		files, err := own(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range sortedKeys(files) {
			b, p := files[rel], filepath.Join(filepath.Base(dir), filepath.FromSlash(rel))
			if rel == "README.md" {
				continue
			}
			if string(b) == EmptyList {
				t.Errorf("%s is an empty List: list it under empty: in %s", p, filepath.Join(filepath.Base(dir), File))
			}
			sum := sha256.Sum256(b)
			if orig, ok := first[sum]; ok {
				t.Errorf("testdata/scenarios/%s is a byte-identical copy of testdata/scenarios/%s: %s", p, orig, fix(dir, rel, orig))
				continue
			}
			first[sum] = p
		}
	}
}

// fix says how to write the copy rel of dir's without it.
func fix(dir, rel, orig string) string {
	name, spec := filepath.Base(dir), filepath.Join(filepath.Base(dir), File)
	from := strings.SplitN(orig, string(filepath.Separator), 2)[0]
	if from == name {
		return "a scenario holds each content once; an empty List goes under empty: in " + spec + " (CONTRIBUTING.md, Adding a scenario)"
	}
	return fmt.Sprintf("delete it and name it in %s, under from: {scenario: %s, files: [%s]} (CONTRIBUTING.md, Adding a scenario)", spec, from, rel)
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestRead checks how a scenario takes files, through a third scenario
// too, and that every mistake in a scenario.yaml is an error naming it.
func TestRead(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string // under a scenarios directory
		read  string
		want  map[string]string
		err   string
	}{
		{
			name: "takes through a third",
			files: map[string]string{
				"a/x.yaml": "x", "a/ns/y.yaml": "y",
				"b/" + File: "from: [{scenario: a, files: [ns/y.yaml]}]",
				"c/" + File: "from: [{scenario: b, files: [ns/y.yaml]}]\nempty: [e.yaml]", "c/z.yaml": "z",
			},
			read: "c",
			want: map[string]string{"ns/y.yaml": "y", "e.yaml": EmptyList, "z.yaml": "z"},
		},
		{
			name:  "a file it also holds",
			files: map[string]string{"a/x.yaml": "x", "b/x.yaml": "x2", "b/" + File: "from: [{scenario: a, files: [x.yaml]}]"},
			read:  "b", err: "keep one",
		},
		{
			name:  "a file the other lacks",
			files: map[string]string{"a/x.yaml": "x", "b/" + File: "from: [{scenario: a, files: [y.yaml]}]"},
			read:  "b", err: "does not hold it",
		},
		{
			name:  "a cycle",
			files: map[string]string{"a/" + File: "from: [{scenario: b, files: [x.yaml]}]", "b/" + File: "from: [{scenario: a, files: [x.yaml]}]"},
			read:  "a", err: "from itself",
		},
		{
			name:  "a path out of the scenario",
			files: map[string]string{"a/x.yaml": "x", "b/" + File: "from: [{scenario: a, files: [../a/x.yaml]}]"},
			read:  "b", err: "not the path of a file",
		},
		{
			name:  "an unknown field",
			files: map[string]string{"b/" + File: "form: []"},
			read:  "b", err: "unknown field",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for p, s := range c.files {
				p = filepath.Join(root, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Read(filepath.Join(root, c.read))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Errorf("read %d files, want %d", len(got), len(c.want))
			}
			for p, s := range c.want {
				if string(got[p]) != s {
					t.Errorf("%s holds %q, want %q", p, got[p], s)
				}
			}
			out := Dir(t, filepath.Join(root, c.read))
			if filepath.Base(out) != c.read || !strings.HasPrefix(out, os.TempDir()) {
				t.Errorf("materialized into %s, want a temporary directory named %s", out, c.read)
			}
			b, err := os.ReadFile(filepath.Join(out, "ns", "y.yaml"))
			if err != nil || string(b) != "y" {
				t.Errorf("materialized ns/y.yaml: %q, %v", b, err)
			}
		})
	}
}
