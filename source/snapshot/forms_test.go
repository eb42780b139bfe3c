package snapshot

import (
	"strings"
	"testing"
	"testing/iotest"
)

// TestSaysVolumeCut: the checker's kill is found wherever it falls in a
// gather's log, across the reads it is split between, and only there.
func TestSaysVolumeCut(t *testing.T) {
	line := "2025-10-17T12:59:50.000000000Z [disk usage checker] " + volumeCutMarker + " of 30 for mounted directory, terminating...\n"
	noise := strings.Repeat("2025-10-17T12:58:00.000000000Z Gathering data for ns/openshift-etcd...\n", 2000)
	for _, c := range []struct {
		log  string
		want bool
	}{
		{noise + line, true},
		{line + noise, true},
		{noise[:64<<10-20] + line + noise, true}, // the marker across two reads
		{noise, false},
		{"", false},
	} {
		got, err := saysVolumeCut(iotest.HalfReader(strings.NewReader(c.log)))
		if err != nil || got != c.want {
			t.Errorf("log of %d bytes: %v, %v; want %v", len(c.log), got, err, c.want)
		}
	}
}

// TestCleanReport: must-gather-clean's report is read for its omissions
// and rules; a report.yaml of anything else is not.
func TestCleanReport(t *testing.T) {
	const rep = "replacements:\n    - - canonical: 10.0.187.218\n        replacedWith: x-ipv4-0000000001-x\nomissions:\n    - mg/quay-io-x/cluster-scoped-resources/machineconfiguration.openshift.io/machineconfigs/00-worker.yaml\nconfig:\n    omit:\n        - kubernetesResource:\n            kind: Secret\n          type: Kubernetes\n"
	r, ok, err := readCleanReport(strings.NewReader(rep), 1<<20)
	if err != nil || !ok {
		t.Fatalf("%v %v", ok, err)
	}
	var f forms
	f.cleanedBy("report.yaml", r, DefaultNamespace)
	if len(f.lost) != 1 || len(f.omitted) != 1 || f.cleaned != "report.yaml" {
		t.Errorf("lost %v, omitted %v", f.lost, f.omitted)
	}
	if _, ok, _ := readCleanReport(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: report}\n"), 1<<20); ok {
		t.Error("a ConfigMap read as must-gather-clean's report")
	}
}
