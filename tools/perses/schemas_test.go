package perses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/mod/modfile"
	"cuelang.org/go/mod/module"
	"sigs.k8s.io/yaml"
)

// pluginModules carry the schemas (schemas/, a CUE module each) of the
// plugins the dashboards use, at the versions tools.go pins. StatusHistoryChart, the Incident dashboard's
// state timelines, is missing: the module proxy serves none of its
// versions, so only Perses' model checks those two panels.
var pluginModules = []string{
	"github.com/perses/plugins/prometheus", "github.com/perses/plugins/timeserieschart",
	"github.com/perses/plugins/statchart", "github.com/perses/plugins/gaugechart", "github.com/perses/plugins/table",
}

// cueModules are the CUE modules the plugin schemas import, each the cue/
// directory of a Go module: shared (tools.go pins it), perses and spec
// (perses' requirements).
var cueModules = map[string]string{
	"github.com/perses/shared/cue@v0": "github.com/perses/shared",
	"github.com/perses/perses/cue@v0": "github.com/perses/perses",
	"github.com/perses/spec/cue@v0":   "github.com/perses/spec",
}

// goModuleDir is the directory of mod at the version tools/go.mod
// requires, downloaded into the module cache if needed.
func goModuleDir(t *testing.T, mod string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", mod).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", mod, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", mod, err, m.Error)
	}
	return m.Dir
}

// registry serves each CUE module of cueModules from the Go module that
// carries it, whatever version a cue.mod asks for: Perses' own builds
// fetch them from the CUE registry, which is not reachable here, and the
// Go modules are pinned by tools/go.mod instead.
type registry map[string]string // CUE module path -> directory holding its cue.mod

func (r registry) dir(m module.Version) (string, error) {
	d, ok := r[m.Path()]
	if !ok {
		return "", fmt.Errorf("CUE module %s is not in cueModules", m.Path())
	}
	return d, nil
}

func (r registry) Requirements(_ context.Context, m module.Version) ([]module.Version, error) {
	d, err := r.dir(m)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(d, "cue.mod", "module.cue"))
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(b, "module.cue")
	if err != nil {
		return nil, err
	}
	return f.DepVersions(), nil
}

func (r registry) Fetch(_ context.Context, m module.Version) (module.SourceLoc, error) {
	d, err := r.dir(m)
	return module.SourceLoc{FS: module.OSDirFS(d), Dir: "."}, err
}

func (r registry) ModuleVersions(_ context.Context, mpath string) ([]string, error) {
	return nil, errors.New("no version list: " + mpath)
}

// pluginSchemas loads every plugin's model package as Perses' schema
// loader does (internal/api/plugin/schema: load.Instances of package
// "model" in each schema directory, the plugin kind read from its kind
// field), by kind.
func pluginSchemas(t *testing.T) map[string]*build.Instance {
	t.Helper()
	reg := registry{}
	for cuePath, goMod := range cueModules {
		reg[cuePath] = filepath.Join(goModuleDir(t, goMod), "cue")
	}
	ctx := cuecontext.New()
	out := map[string]*build.Instance{}
	for _, mod := range pluginModules {
		dir := goModuleDir(t, mod)
		overlay, err := tidyModule(dir)
		if err != nil {
			t.Fatalf("%s: %v", mod, err)
		}
		root := filepath.Join(dir, "schemas")
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "migrate" || d.Name() == "tests" {
				return fs.SkipDir
			}
			if files, _ := filepath.Glob(filepath.Join(path, "*.cue")); len(files) == 0 {
				return nil
			}
			insts := load.Instances(nil, &load.Config{Dir: path, Package: "model", Registry: reg, Overlay: overlay})
			if len(insts) != 1 || insts[0].Err != nil {
				return fmt.Errorf("%s: %v", path, insts[0].Err)
			}
			kind, err := ctx.BuildInstance(insts[0]).LookupPath(cue.ParsePath("kind")).String()
			if err != nil {
				return fmt.Errorf("%s: kind: %w", path, err)
			}
			out[kind] = insts[0]
			return nil
		})
		if err != nil {
			t.Fatalf("schemas of %s: %v", mod, err)
		}
	}
	return out
}

// tidyModule adds to the plugin module's cue.mod/module.cue the CUE
// modules it does not list (the spec module, which shared v0.54.0 imports
// and the plugins' own shared version did not), as cue mod tidy would:
// CUE resolves an import only through the main module's deps. The version
// written is the lowest: the registry serves the pinned one anyway.
func tidyModule(dir string) (map[string]load.Source, error) {
	path := filepath.Join(dir, "cue.mod", "module.cue")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(b, path)
	if err != nil {
		return nil, err
	}
	text := string(b)
	for cuePath := range cueModules {
		if _, ok := f.Deps[cuePath]; !ok && cuePath != f.QualifiedModule() {
			text += fmt.Sprintf("deps: %q: {v: %q, default: true}\n", cuePath, "v0.0.0")
		}
	}
	return map[string]load.Source{path: load.FromString(text)}, nil
}

// validate unifies a plugin (kind and spec) with its schema and requires a
// concrete, valid result, with the options of Perses' validatePlugin.
func validate(ctx *cue.Context, schema *build.Instance, plugin any) error {
	b, err := json.Marshal(plugin)
	if err != nil {
		return err
	}
	v := ctx.CompileBytes(b).Unify(ctx.BuildInstance(schema))
	if err := v.Validate(cue.Concrete(true), cue.Attributes(true), cue.Definitions(true), cue.Hidden(true)); err != nil {
		return errors.New(cueerrors.Details(err, nil))
	}
	return nil
}

// plugins are the plugins of a Perses object by where they are: a
// dashboard's panels, their queries and its variables, or a datasource.
func plugins(t *testing.T, config json.RawMessage, kind string) map[string]map[string]any {
	t.Helper()
	var c struct {
		Plugin    map[string]any `json:"plugin"`
		Variables []struct {
			Spec struct {
				Name   string         `json:"name"`
				Plugin map[string]any `json:"plugin"`
			} `json:"spec"`
		} `json:"variables"`
		Panels map[string]struct {
			Spec struct {
				Plugin  map[string]any `json:"plugin"`
				Queries []struct {
					Spec struct {
						Plugin map[string]any `json:"plugin"`
					} `json:"spec"`
				} `json:"queries"`
			} `json:"spec"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	if kind == "PersesDatasource" {
		out["datasource"] = c.Plugin
	}
	for _, v := range c.Variables {
		out["variable "+v.Spec.Name] = v.Spec.Plugin
	}
	for id, p := range c.Panels {
		out["panel "+id] = p.Spec.Plugin
		for i, q := range p.Spec.Queries {
			out[fmt.Sprintf("panel %s query %d", id, i)] = q.Spec.Plugin
		}
	}
	return out
}

// TestPluginSchemasAcceptTheObjects validates every plugin of the
// overlay's PersesDashboards and PersesDatasource against the plugin's
// own CUE schema, as the Perses API and percli lint --plugin.path do.
func TestPluginSchemasAcceptTheObjects(t *testing.T) {
	schemas := pluginSchemas(t)
	ctx := cuecontext.New()
	paths, err := filepath.Glob(filepath.Join(overlay, "generated", "dashboard-*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no PersesDashboard in %s/generated: %v", overlay, err)
	}
	checked := 0
	for _, path := range append(paths, filepath.Join(overlay, "datasource.yaml")) {
		o := read(t, path)
		for where, p := range plugins(t, o.Spec.Config, o.Kind) {
			kind, _ := p["kind"].(string)
			schema, ok := schemas[kind]
			if !ok {
				if kind != "StatusHistoryChart" {
					t.Errorf("%s: %s: no schema for plugin %q", path, where, kind)
				}
				continue
			}
			if err := validate(ctx, schema, p); err != nil {
				t.Errorf("%s: %s: the %s schema refuses it: %v", path, where, kind, err)
			}
			checked++
		}
	}
	t.Logf("%d plugins validated against their schemas (%s)", checked, strings.Join(pluginModules, ", "))
}

// TestPluginSchemasRefuseMistakes: the schemas do refuse what the
// dashboards must not contain.
func TestPluginSchemasRefuseMistakes(t *testing.T) {
	schemas := pluginSchemas(t)
	ctx := cuecontext.New()
	for _, bad := range []string{
		`{"kind": "StatChart", "spec": {"calculation": "last-number", "format": {"unit": "percentunit"}}}`,
		`{"kind": "TimeSeriesChart", "spec": {"legend": {"position": "bottom"}, "visual": {"stack": "normal"}}}`,
		`{"kind": "Table", "spec": {"columnSettings": [{"header": "no name"}]}}`,
		`{"kind": "PrometheusTimeSeriesQuery", "spec": {"query": "up", "seriesNameFormt": "{{pool}}"}}`,
	} {
		var p map[string]any
		if err := yaml.Unmarshal([]byte(bad), &p); err != nil {
			t.Fatal(err)
		}
		if err := validate(ctx, schemas[p["kind"].(string)], p); err == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}
