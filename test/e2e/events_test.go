//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ocl-exporter/ocl_exporter/source"
)

// TestEventFlood posts Warning events the MCO never writes: each with a
// reason of its own, 256 KiB messages. They fold into one series with
// reason "other" beside the real one.
func TestEventFlood(t *testing.T) {
	const flood = 300
	const metric = "ocl_operator_degraded_event_timestamp_seconds"
	ts := time.Now().UTC().Truncate(time.Second)
	event := func(name, reason, msg string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Event", "type": "Warning",
			"metadata":       map[string]any{"name": name, "namespace": source.DefaultNamespace},
			"involvedObject": map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator", "name": source.ClusterOperatorName},
			"reason":         reason, "message": msg,
			"firstTimestamp": ts.Format(time.RFC3339), "lastTimestamp": ts.Format(time.RFC3339),
		}}
	}
	mustCreate(t, event("machine-config.real", "OperatorDegraded: MachineOSBuilderFailed",
		`Failed to resync 4.20.0 because: could not update Machine OS Builder deployment: could not validate renderedImagePushSecret "push" for MachineOSConfig worker: secret push from worker is not found. Did you use the right secret name?`))
	big := strings.Repeat("x", 256<<10)
	for i := range flood {
		mustCreate(t, event(fmt.Sprintf("machine-config.flood-%d", i), fmt.Sprintf("OperatorDegraded: Flood%dFailed", i), big))
	}
	at := float64(ts.Unix())
	expect(t, hasValues(series{
		seriesKey(metric, map[string]string{"reason": "MachineOSBuilderFailed", "class": "secret_not_found"}): at,
		seriesKey(metric, map[string]string{"reason": "other", "class": "unknown"}):                           at,
	}))
	got, err := env.exporter.scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := range got {
		if family(k) == metric {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d series of %s from %d distinct reasons, want 2", n, metric, flood+1)
	}
}
