package diagnose

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const schemaFile = "../docs/diagnose.schema.json"

// TestJSONMatchesTheSchema validates the JSON report of every fixture
// against the documented schema, formats included.
func TestJSONMatchesTheSchema(t *testing.T) {
	schema := compileSchema(t)
	for name, dir := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			validate(t, schema, report(t, dir, Options{}))
		})
	}

	// The schema can fail: a report with an unknown status does not pass.
	var bad map[string]any
	b, err := os.ReadFile(filepath.Join("testdata", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &bad); err != nil {
		t.Fatal(err)
	}
	bad["cluster"].([]any)[0].(map[string]any)["status"] = "ok"
	if err := schema.Validate(bad); err == nil {
		t.Error("a check with status \"ok\" passed the schema")
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(schemaFile, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

// validate fails the test when r's JSON does not match the schema.
func validate(t *testing.T, schema *jsonschema.Schema, r *Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Errorf("the report does not match %s: %v", schemaFile, err)
	}
}
