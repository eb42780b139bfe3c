package diagnose

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// notDiagnosed are the fields of analysis.Cluster a row of
// snapshot.Resources() fills that no check reads, with why.
var notDiagnosed = map[string]string{}

// TestEveryKindIsDiagnosed: each watched resource fills a field of
// analysis.Cluster that diagnose reads, directly or through a function
// of analysis/ that reads it (by name, as the code spells it): a kind
// watched, captured and gathered but shown in no check costs memory and
// says nothing. A field only the metrics read goes in notDiagnosed with
// why.
func TestEveryKindIsDiagnosed(t *testing.T) {
	analysisUses := uses(t, "../analysis")
	diagnoseUses := map[string]bool{}
	for _, names := range uses(t, ".") {
		for n := range names {
			diagnoseUses[n] = true
		}
	}
	for _, r := range snapshot.Resources() {
		field := clusterField(r)
		if field == "" {
			t.Errorf("resource %s stores its objects in no field of analysis.Cluster", r.Name)
			continue
		}
		if _, ok := notDiagnosed[field]; ok {
			continue
		}
		readers := map[string]bool{field: true}
		for grew := true; grew; {
			grew = false
			for fn, names := range analysisUses {
				if readers[fn] {
					continue
				}
				for n := range names {
					if readers[n] {
						readers[fn], grew = true, true
						break
					}
				}
			}
		}
		read := false
		for n := range readers {
			read = read || diagnoseUses[n]
		}
		if !read {
			t.Errorf("resource %s (kind %s, analysis.Cluster.%s): no code of diagnose/ reads it, directly or through analysis/: show it in the check it belongs to (diagnose/cluster.go, stage1.go ... stage3.go), or list it in notDiagnosed (diagnose/kinds_test.go) with why", r.Name, r.Kind, field)
		}
	}
	for field := range notDiagnosed {
		if _, ok := reflect.TypeFor[analysis.Cluster]().FieldByName(field); !ok {
			t.Errorf("notDiagnosed names %s, no field of analysis.Cluster", field)
		}
	}
}

// clusterField is the field of analysis.Cluster r stores its objects in.
func clusterField(r snapshot.Resource) string {
	var c analysis.Cluster
	r.Store(&c, []any{r.NewObject()})
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Slice && f.Len() > 0 {
			return v.Type().Field(i).Name
		}
	}
	return ""
}

// uses maps each function, method and package-level variable of the
// package in dir (its tests left out) to the names its body uses.
func uses(t *testing.T, dir string) map[string]map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		add := func(name string, n ast.Node) {
			if out[name] == nil {
				out[name] = map[string]bool{}
			}
			ast.Inspect(n, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					out[name][id.Name] = true
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body != nil {
					add(d.Name.Name, d.Body)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for _, n := range vs.Names {
							add(n.Name, vs)
						}
					}
				}
			}
		}
	}
	return out
}
