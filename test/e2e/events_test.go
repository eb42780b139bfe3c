//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEventFlood posts Warning events the MCO never writes: each with a
// reason of its own, 256 KiB messages. They fold into one series with
// reason "other" beside the real one.
func TestEventFlood(t *testing.T) {
	const flood = 300
	const metric = "ocl_operator_degraded_event_timestamp_seconds"
	ts := time.Now().UTC().Format(time.RFC3339)
	event := func(name, reason, msg string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Event", "type": "Warning",
			"metadata": map[string]any{"name": name, "namespace": snapshot.DefaultNamespace},
			// As the MCO records them (seed000): the ClusterOperator's
			// name, the event's namespace, no kind.
			"involvedObject": map[string]any{"name": snapshot.ClusterOperatorName, "namespace": snapshot.DefaultNamespace},
			"reason":         reason, "message": msg,
			"firstTimestamp": ts, "lastTimestamp": ts,
		}}
	}
	big := strings.Repeat("x", 256<<10)
	for i := range flood {
		mustCreate(t, event(fmt.Sprintf("machine-config.flood-%d", i), fmt.Sprintf("OperatorDegraded: Flood%dFailed", i), big))
	}
	// Created last, seen last: one watch delivers in order, so once its
	// series shows, every flood event has been read.
	mustCreate(t, event("machine-config.real", "OperatorDegraded: MachineOSBuilderFailed",
		`Failed to resync 4.20.0 because: could not update Machine OS Builder deployment: could not validate renderedImagePushSecret "push" for MachineOSConfig worker: secret push from worker is not found. Did you use the right secret name?`))
	want := []string{
		seriesKey(metric, map[string]string{"reason": "MachineOSBuilderFailed", "class": "secret_not_found"}),
		seriesKey(metric, map[string]string{"reason": "other", "class": "unknown"}),
	}
	expect(t, func(got series) []string {
		var keys []string
		for k := range got {
			if family(k) == metric {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			return []string{fmt.Sprintf("%d series of %s from %d distinct reasons, want %v: %v", len(keys), metric, flood+1, want, keys)}
		}
		return nil
	})
}
