package snapshot

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ocl-exporter/ocl_exporter/internal/race"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"
)

// bigMachineConfig is a MachineConfig of about size bytes in block YAML,
// as `oc get -o yaml` writes one, its files entries small: the shape that
// costs most to decode per byte.
func bigMachineConfig(size int) string {
	var b strings.Builder
	b.WriteString("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: rendered-worker-1\n  annotations:\n    machineconfiguration.openshift.io/generated-by-controller-version: abc\nspec:\n  config:\n    ignition:\n      version: 3.4.0\n    storage:\n      files:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "      - path: /etc/f%d\n        mode: 420\n        contents:\n          source: data:,x\n", i)
	}
	return b.String()
}

// allocatedBy returns the bytes f allocates.
func allocatedBy(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLargeDocumentsAreBounded: an 8 MiB object used to take 470-530 MiB
// to decode (a 64 MiB one 4 GB). A MachineConfig of any size the file
// bound allows is read from its metadata alone, in YAML or JSON; any other
// object over maxObjectBytes, or a MachineConfig in a shape whose
// metadata cannot be cut out, is refused with an error naming the file,
// the document and the bound. Either way the load allocates a few times
// the document's bytes (3 to 5 here: reading it, splitting a List), at
// most 8, where it allocated 20 (JSON) to 160 (flow YAML) times them.
func TestLargeDocumentsAreBounded(t *testing.T) {
	if race.Enabled {
		t.Skip("measures one goroutine's memory: nothing for the race detector, several times slower under it")
	}
	const size = 8 << 20
	mc := bigMachineConfig(size)
	var obj map[string]any
	if err := sigsyaml.Unmarshal([]byte(bigMachineConfig(1<<20)), &obj); err != nil {
		t.Fatal(err)
	}
	files := obj["spec"].(map[string]any)["config"].(map[string]any)["storage"].(map[string]any)["files"].([]any)
	for len(files)*80 < size {
		files = append(files, files...)
	}
	obj["spec"].(map[string]any)["config"].(map[string]any)["storage"].(map[string]any)["files"] = files
	mcJSON, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	mosc := strings.Replace(mc, "kind: MachineConfig", "kind: MachineOSConfig", 1)
	flow := "---\n{apiVersion: machineconfiguration.openshift.io/v1, kind: MachineConfig, metadata: {name: flow}, spec: [" + strings.Repeat("0,", size/2) + "0]}\n"
	for _, tc := range []struct {
		name, file, body string
		want             string // "" loads the object's metadata
	}{
		{"MachineConfig, YAML", "mc.yaml", "---\n" + mc, ""},
		{"MachineConfig, JSON", "mc.json", string(mcJSON), ""},
		{"MachineConfig, List", "mcs.yaml", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(mc, "\n", "\n  ") + "\n", ""},
		{"MachineOSConfig", "mosc.yaml", mosc, "mosc.yaml: document 1: 8388"},
		{"flow style", "flow.yaml", flow, fmt.Sprintf("flow.yaml: document 1: %d bytes, more than the 524288 one object may hold", len(flow))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []kruntime.Object
			var err error
			allocated := allocatedBy(func() {
				objs, _, err = loader{maxBytes: MaxFileBytes, namespace: DefaultNamespace, logger: slog.New(slog.DiscardHandler)}.load(t.Context(), fstest.MapFS{tc.file: {Data: []byte(tc.body)}}, ".")
			})
			t.Logf("%d bytes: allocated %.1f MiB", len(tc.body), float64(allocated)/(1<<20))
			if tc.want == "" && (err != nil || len(objs) != 1 || objs[0].(*metav1.PartialObjectMetadata).Name != "rendered-worker-1") {
				t.Errorf("got %d objects, %v; want the MachineConfig's metadata", len(objs), err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
			if limit := 8 * uint64(len(tc.body)); allocated > limit {
				t.Errorf("allocated %d MiB for %d MiB of text, over %d MiB", allocated>>20, len(tc.body)>>20, limit>>20)
			}
		})
	}
}
