package snapshot

import (
	"archive/tar"
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTree writes files (path -> body) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const discoveryList = `apiVersion: apidiscovery.k8s.io/v2
items:
- metadata:
    creationTimestamp: null
    name: apps
  versions:
  - freshness: Current
    version: v1
kind: APIGroupDiscoveryList
metadata: {}
`

// TestNonObjectFilesAreSkipped: what a must-gather holds besides objects
// (discovery documents whose items have no kind, etcd's JSON arrays,
// Prometheus answers) never refuses the snapshot: each file is skipped,
// all of them counted in one warning; a malformed object is still an
// error naming its file.
func TestNonObjectFilesAreSkipped(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"aggregated-discovery-apis.yaml":      discoveryList,
		"aggregated-discovery-api.yaml":       discoveryList,
		"etcd_info/endpoint_status.json":      `[{"Endpoint":"https://10.0.0.1:2379","Status":{"version":"3.5.21"}}]`,
		"monitoring/prometheus/rules.json":    `{"status":"success","data":{"groups":[]}}`,
		"monitoring/alertmanager/status.yaml": "cluster:\n  status: ready\n",
		"notes.yaml":                          "just text\n",
		"mosc.yaml":                           mosc,
	})
	var logs strings.Builder
	m, err := OpenSnapshot(t.Context(), dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.byKind); n != 1 {
		t.Errorf("%d kinds loaded, want the MachineOSConfig's", n)
	}
	if got := strings.Count(logs.String(), "hold no Kubernetes object"); got != 1 || !strings.Contains(logs.String(), "files=4") {
		t.Errorf("want one warning counting 4 files (the discovery Lists are a kind not read):\n%s", logs.String())
	}

	bad := writeTree(t, map[string]string{"etcd_info/x.json": `[1]`, "broken.yaml": "apiVersion: v1\nkind: Node\nmetadata: {}\n"})
	if _, err := OpenSnapshot(t.Context(), bad, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "broken.yaml: document 1: Node has no metadata.name") {
		t.Errorf("a malformed object: %v", err)
	}
}

// TestCoverageByNamespace: what a snapshot captured is a resource in a
// namespace, never a kind: a Secret list of another namespace captures no
// Secret of the MCO's, whether the file is named after the resource, a
// typed List, or a must-gather's namespaces/<ns>/core/secrets.yaml.
func TestCoverageByNamespace(t *testing.T) {
	const otherSecret = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s, namespace: other}\n"
	const emptySecretList = "apiVersion: v1\nkind: SecretList\nitems: []\nmetadata: {resourceVersion: \"1\"}\n"
	for _, tc := range []struct {
		name     string
		files    map[string]string
		captured bool
	}{
		{"secrets.yaml of another namespace", map[string]string{"secrets.yaml": otherSecret}, false},
		{"a SecretList of another namespace", map[string]string{"x.yaml": strings.Replace(otherSecret, "kind: List", "kind: SecretList", 1)}, false},
		{"an empty secrets.yaml", map[string]string{"secrets.yaml": "apiVersion: v1\nkind: List\nitems: []\n"}, true},
		{"a must-gather of another namespace", map[string]string{"namespaces/other/core/secrets.yaml": emptySecretList}, false},
		{"a must-gather of the MCO's", map[string]string{"namespaces/openshift-machine-config-operator/core/secrets.yaml": emptySecretList}, true},
		{"a flat snapshot in a directory named namespaces", map[string]string{"namespaces/openshift-machine-config-operator/secrets.yaml": emptySecretList}, true},
		{"a must-gather whose MCO namespace has Secrets elsewhere", map[string]string{
			"namespaces/openshift-machine-config-operator/core/configmaps.yaml": "apiVersion: v1\nkind: ConfigMapList\nitems: []\n",
			"namespaces/openshift-config/core/secrets.yaml":                     emptySecretList,
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := OpenSnapshot(t.Context(), writeTree(t, tc.files), slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range Resources() {
				if r.Name == "secrets" {
					if err := m.NotCaptured(r); (err == nil) != tc.captured {
						t.Errorf("secrets: %v, want captured %v", err, tc.captured)
					}
				}
			}
		})
	}
}

// TestCaptureCutBetweenSections: a single-file capture cut after one
// resource's end record and before the next one's start holds nothing of
// the next: pods@build-4.16, events@default and
// deployments.apps@machine-config-controller are not captured, though
// their kinds' other resources are.
func TestCaptureCutBetweenSections(t *testing.T) {
	section := func(resource, objects string, n int) string {
		return "---\napiVersion: ocl-exporter.io/v1\nkind: CaptureRecord\nresource: " + resource + "\ncaptured: true\nobjects: " +
			string(rune('0'+n)) + "\n" + objects + "---\napiVersion: ocl-exporter.io/v1\nkind: CaptureRecord\nresource: " + resource + "\nend: true\n"
	}
	pod := "---\napiVersion: v1\nkind: Pod\nmetadata: {name: build-a-x, namespace: openshift-machine-config-operator, labels: {job-name: build-a}}\n"
	event := "---\napiVersion: v1\nkind: Event\nmetadata: {name: e, namespace: openshift-machine-config-operator}\ntype: Warning\ninvolvedObject: {kind: Pod, name: x}\n"
	deploy := "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: machine-os-builder, namespace: openshift-machine-config-operator}\n"
	for _, tc := range []struct{ file, captured, cut string }{
		{section("pods", pod, 1), "pods", "pods@build-4.16"},
		{section("events", event, 1), "events", "events@default"},
		{section("deployments.apps", deploy, 1), "deployments.apps", "deployments.apps@machine-config-controller"},
	} {
		t.Run(tc.cut, func(t *testing.T) {
			m, err := OpenSnapshot(t.Context(), writeTree(t, map[string]string{"capture.yaml": tc.file}), slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range Resources() {
				err := m.NotCaptured(r)
				switch r.Name {
				case tc.captured:
					if err != nil {
						t.Errorf("%s: %v, want captured", r.Name, err)
					}
				case tc.cut:
					if err == nil {
						t.Errorf("%s read as captured (and empty) from a capture cut before its record", r.Name)
					}
				}
			}
		})
	}
}

// TestReadTimestamp reads what inspect and must-gather write (time.Time's
// String, with its monotonic reading) in any zone, and keeps the newest.
func TestReadTimestamp(t *testing.T) {
	in := "2025-10-17 12:56:00.043719245 +0000 UTC m=+0.043719245\n" +
		"2025-10-17 15:00:00.5 +0200 CEST m=+181.512094117\n" +
		"not a time\n"
	if got, want := readTimestamp(strings.NewReader(in)), time.Date(2025, 10, 17, 13, 0, 0, 5e8, time.UTC); !got.Equal(want) {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := readTimestamp(strings.NewReader("")); !got.IsZero() {
		t.Errorf("an empty file: %s", got)
	}
}

// TestArchiveEntryBound: an archive entry the exporter reads is bounded
// like a file, before its bytes are read; one it does not read is not
// kept, whatever its size.
func TestArchiveEntryBound(t *testing.T) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, e := range []struct {
		name string
		size int
	}{{"mg/namespaces/other/core/pods.yaml", 5000}, {"mg/cluster-scoped-resources/core/nodes/n1.yaml", 100}} {
		if err := w.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(e.size)}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(bytes.Repeat([]byte("#"), e.size)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "mg.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loader{ctx: t.Context(), maxBytes: 1000, namespace: DefaultNamespace, logger: slog.New(slog.DiscardHandler)}.archive(p)
	if err != nil {
		t.Fatalf("an entry the exporter does not read counted against the bound: %v", err)
	}
	_, err = loader{ctx: t.Context(), maxBytes: 10, namespace: DefaultNamespace, logger: slog.New(slog.DiscardHandler)}.archive(p)
	if err == nil || !strings.Contains(err.Error(), "archive entry mg/cluster-scoped-resources/core/nodes/n1.yaml: 100 bytes, more than the 10") {
		t.Errorf("got %v", err)
	}
}

// TestMustGatherRelease: the version file names the must-gather image's
// release; what it gathers follows (5.0 is release-4.23's successor name).
func TestMustGatherRelease(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string // resources gathered beyond 4.16's, "-" for no release
	}{
		{"openshift/must-gather\n4.17.0-202410011234.p0.gabcdef0.assembly.stream.el9\n", ""},
		{"openshift/must-gather\n4.18.3-202502101302.p0.g1234567.assembly.stream.el9\n", "machineosconfigs.machineconfiguration.openshift.io machineosbuilds.machineconfiguration.openshift.io"},
		{"openshift/must-gather\n5.0.0-202610011234.p0.g7654321.assembly.stream.el9\n", "machineosconfigs.machineconfiguration.openshift.io machineosbuilds.machineconfiguration.openshift.io machineconfignodes.machineconfiguration.openshift.io"},
		{"openshift/must-gather\n0.0.0-unknown\n", "-"},
		{"registry.redhat.io/odf4/odf-must-gather\n4.18.0\n", "-"},
	} {
		rel, ok := readRelease(strings.NewReader(tc.file))
		got := "-"
		if ok {
			var beyond []string
			for _, res := range gatheredIn(rel) {
				if res.GatheredFrom > 16 {
					beyond = append(beyond, res.Name)
				}
			}
			got = strings.Join(beyond, " ")
		}
		if got != tc.want {
			t.Errorf("%q: gathers %q, want %q", tc.file, got, tc.want)
		}
	}
}
