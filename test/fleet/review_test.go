//go:build fleet

package fleet

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/review"
)

// TestReviewThroughThanos: review with --cluster through Thanos Query
// writes, for each cluster, the report the cluster's own Prometheus gives.
func TestReviewThroughThanos(t *testing.T) {
	at := settled(t, t.Context())
	window := []string{"--from=" + at.Add(-2*time.Minute).UTC().Format(time.RFC3339), "--to=" + at.UTC().Format(time.RFC3339), "-o", "json"}
	for _, c := range fleet.members {
		own := reviewOf(t, append([]string{"--prometheus=" + c.promURL}, window...)...)
		hub := reviewOf(t, append([]string{"--prometheus=" + fleet.queryURL, "--cluster=" + c.name}, window...)...)
		if hub.Cluster != c.name {
			t.Errorf("cluster %s: the report says cluster %q", c.name, hub.Cluster)
		}
		hub.Cluster = ""
		if !reflect.DeepEqual(own, hub) {
			a, _ := json.MarshalIndent(own, "", " ")
			b, _ := json.MarshalIndent(hub, "", " ")
			t.Errorf("cluster %s: Thanos with --cluster answers differently from its Prometheus:\n%s\nvs\n%s", c.name, b, a)
		}
		if len(own.Pools) == 0 {
			t.Errorf("cluster %s: no pool in the review", c.name)
		}
	}
}

func reviewOf(t *testing.T, args ...string) *review.Report {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(fleet.dir, "ocl_exporter"), append([]string{"review"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("review %v: %v\n%s", args, err, errOut.String())
	}
	var r review.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return &r
}
