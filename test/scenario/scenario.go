// Package scenario reads the seed scenarios of testdata/scenarios. A
// scenario is a directory of the files a snapshot holds; the files it
// shares byte for byte with another scenario are not copied but named in
// its scenario.yaml (File), as a lifecycle names its base snapshot. Dir,
// With and Materialize give consumers the whole directory, as
// `ocl_exporter --snapshot` and the API server read it; the snapshot
// reader itself stays strict (no links out of the directory).
package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// File is the name of a scenario's declaration of the files it takes from
// others. A scenario without one is complete as it stands.
const File = "scenario.yaml"

// EmptyList is what a file listed under Spec.Empty holds: the kind was
// captured, and there was none of it.
const EmptyList = "apiVersion: v1\nkind: List\nitems: []\n"

// Spec is a scenario.yaml: the scenario's own files, plus these.
type Spec struct {
	// From lists, per other scenario, the files (slash-separated, relative
	// to the scenario) this one holds unchanged from it.
	From []Take `json:"from"`
	// Empty lists the files that hold an empty List (EmptyList).
	Empty []string `json:"empty,omitempty"`
}

// Take is the files a scenario takes from another one (a sibling
// directory's name), which may itself take them from a third.
type Take struct {
	Scenario string   `json:"scenario"`
	Files    []string `json:"files"`
}

// derived reports whether dir declares files it does not hold.
func derived(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, File))
	return err == nil
}

// Dir is dir itself when the scenario is complete, else the whole
// scenario written into a temporary directory of the same base name,
// removed when the test ends.
func Dir(t testing.TB, dir string) string {
	t.Helper()
	if !derived(dir) {
		return dir
	}
	out := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := Materialize(dir, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// With calls f with the whole scenario dir: dir itself when it is
// complete, else a temporary copy of the same base name, removed once f
// returns.
func With(dir string, f func(dir string) error) error {
	if !derived(dir) {
		return f(dir)
	}
	tmp, err := os.MkdirTemp("", "scenario-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, filepath.Base(dir))
	if err := Materialize(dir, out); err != nil {
		return err
	}
	return f(out)
}

// Materialize writes the whole scenario dir (its own files and those it
// takes) into out, which it creates.
func Materialize(dir, out string) error {
	files, err := Read(dir)
	if err != nil {
		return err
	}
	for rel, b := range files {
		p := filepath.Join(out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Read returns every file of the whole scenario dir by its
// slash-separated path, scenario.yaml aside.
func Read(dir string) (map[string][]byte, error) {
	return read(filepath.Clean(dir), nil)
}

func read(dir string, seen []string) (map[string][]byte, error) {
	if slices.Contains(seen, dir) {
		return nil, fmt.Errorf("scenario %s takes files from itself through %v", dir, seen)
	}
	files, err := own(dir)
	if err != nil {
		return nil, err
	}
	spec, err := load(dir)
	if err != nil || spec == nil {
		return files, err
	}
	add := func(rel string, b []byte) error {
		if _, ok := files[rel]; ok {
			return fmt.Errorf("%s holds %s and its %s takes it too: keep one", dir, rel, File)
		}
		files[rel] = b
		return nil
	}
	for _, rel := range spec.Empty {
		if err := add(rel, []byte(EmptyList)); err != nil {
			return nil, err
		}
	}
	for _, take := range spec.From {
		base, err := read(filepath.Join(filepath.Dir(dir), take.Scenario), append(seen, dir))
		if err != nil {
			return nil, fmt.Errorf("%s takes files from %s: %w", dir, take.Scenario, err)
		}
		for _, rel := range take.Files {
			b, ok := base[rel]
			if !ok {
				return nil, fmt.Errorf("%s/%s takes %s from %s, which does not hold it", dir, File, rel, take.Scenario)
			}
			if err := add(rel, b); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// own reads the files dir itself holds, scenario.yaml aside.
func own(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == File {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file: name what it shares in %s instead", p, File)
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading scenario %s: %w", dir, err)
	}
	return files, nil
}

// load reads dir's scenario.yaml, nil when it has none.
func load(dir string) (*Spec, error) {
	b, err := os.ReadFile(filepath.Join(dir, File))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Spec
	if err := sigsyaml.UnmarshalStrict(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, File), err)
	}
	paths := slices.Clone(s.Empty)
	for _, take := range s.From {
		if take.Scenario == "" || take.Scenario != filepath.Base(take.Scenario) {
			return nil, fmt.Errorf("%s: %q is not a sibling scenario's name", filepath.Join(dir, File), take.Scenario)
		}
		paths = append(paths, take.Files...)
	}
	for _, rel := range paths {
		if !fs.ValidPath(rel) || path.Clean(rel) != rel || rel == File {
			return nil, fmt.Errorf("%s: %q is not the path of a file inside the scenario", filepath.Join(dir, File), rel)
		}
	}
	return &s, nil
}
