package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/runbooks"
)

// testVersion is a build between tags, as git describe names it: its
// module version is not checked, so a binary built here can carry it.
const testVersion = "v9.8.7-3-gabcdef0"

// testRevision is the commit the test's binaries are stamped with.
const testRevision = "0123456789abcdef0123456789abcdef01234567"

// buildVersioned builds testdata/version, a small stand-in for the
// exporter, for this machine as make dist builds the exporter.
func buildVersioned(t *testing.T, out, version, revision string) []byte {
	t.Helper()
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "-ldflags",
		"-s -w -X github.com/prometheus/common/version.Version="+version+" -X github.com/prometheus/common/version.Revision="+revision,
		"./testdata/version")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/version: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is what a release directory holds, each part replaceable.
type fixture struct {
	binary, imageBinary      []byte
	labelVersion, bundleImg  string
	runbookRef, bundleSuffix string
}

// blob adds b to a layout directory and returns its descriptor digest.
func blob(t *testing.T, layout string, b []byte) string {
	t.Helper()
	sum := sha256.Sum256(b)
	d := "sha256:" + hex.EncodeToString(sum[:])
	if err := os.MkdirAll(filepath.Join(layout, "blobs", "sha256"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(layout, blobPath(d)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// jsonBlob adds v, as JSON, to a layout directory.
func jsonBlob(t *testing.T, layout string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return blob(t, layout, b)
}

// writeLayout writes an OCI image layout of one platform, as tools/image
// lays it out: index.json naming an index, a manifest of one gzip layer.
func writeLayout(t *testing.T, layout, platform string, f fixture, revision string) {
	t.Helper()
	var layer bytes.Buffer
	zw := gzip.NewWriter(&layer)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: imageBinary, Mode: 0o755, Size: int64(len(f.imageBinary)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(f.imageBinary); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	config := jsonBlob(t, layout, map[string]any{"config": map[string]any{"Labels": map[string]string{versionLabel: f.labelVersion, revisionLabel: revision}}})
	manifest := jsonBlob(t, layout, map[string]any{
		"config": map[string]any{"digest": config}, "layers": []any{map[string]any{"digest": blob(t, layout, layer.Bytes())}},
	})
	goos, arch, _ := strings.Cut(platform, "/")
	index := jsonBlob(t, layout, map[string]any{"manifests": []any{map[string]any{"digest": manifest, "platform": map[string]string{"os": goos, "architecture": arch}}}})
	// index.json is the one file of a layout outside blobs/.
	top := jsonBlob(t, layout, map[string]any{"manifests": []any{map[string]any{"digest": index}}})
	if err := os.Rename(filepath.Join(layout, blobPath(top)), filepath.Join(layout, "index.json")); err != nil {
		t.Fatal(err)
	}
}

// writeDist lays out a release of this machine's platform, and returns it.
func writeDist(t *testing.T, f fixture, revision string) Release {
	t.Helper()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	r := Release{Dir: t.TempDir(), Version: testVersion, Revision: revision, Image: "quay.io/example/ocl_exporter:" + testVersion, Platforms: []string{platform}}
	if err := os.WriteFile(filepath.Join(r.Dir, r.Binary(platform)), f.binary, 0o755); err != nil {
		t.Fatal(err)
	}
	layout := t.TempDir()
	writeLayout(t, layout, platform, f, revision)
	if err := packLayout(layout, filepath.Join(r.Dir, r.Archive())); err != nil {
		t.Fatal(err)
	}
	bundle := "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: " + f.bundleImg +
		"\n---\napiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nspec:\n  groups:\n  - rules:\n    - annotations:\n        runbook_url: " +
		runbooks.AtIn(runbooks.Canonical, f.runbookRef) + "OCLPoolDegraded.md\n"
	if err := os.WriteFile(filepath.Join(r.Dir, r.Bundle()), []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSums(r.Dir); err != nil {
		t.Fatal(err)
	}
	if f.bundleSuffix != "" { // changed after the sums were written
		if err := os.WriteFile(filepath.Join(r.Dir, r.Bundle()), []byte(bundle+f.bundleSuffix), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestVerifyAgreesOnOneVersion: a release whose binaries, image and
// bundle all say one version passes; each artifact that says another, or
// a stale SHA256SUMS, fails naming it.
func TestVerifyAgreesOnOneVersion(t *testing.T) {
	revision := testRevision
	dir := t.TempDir()
	good := buildVersioned(t, filepath.Join(dir, "good"), testVersion, revision)
	other := buildVersioned(t, filepath.Join(dir, "other"), "v9.8.6", strings.Repeat("f", 40))
	ok := fixture{binary: good, imageBinary: good, labelVersion: testVersion, bundleImg: "quay.io/example/ocl_exporter:" + testVersion, runbookRef: revision}
	if err := Verify(writeDist(t, ok, revision)); err != nil {
		t.Fatalf("a consistent release: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*fixture)
		want string
	}{
		{"a binary of another version", func(f *fixture) { f.binary, f.imageBinary = other, other }, "--version prints"},
		{"the image holds another binary", func(f *fixture) { f.imageBinary = other }, "/usr/bin/ocl_exporter is not"},
		{"the image's label", func(f *fixture) { f.labelVersion = "v9.8.6" }, "label org.opencontainers.image.version"},
		{"the bundle's image", func(f *fixture) { f.bundleImg = "quay.io/example/ocl_exporter:v9.8.6" }, "want quay.io/example/ocl_exporter:" + testVersion},
		{"the runbook links", func(f *fixture) { f.runbookRef = "main" }, "does not link the runbooks at " + revision},
		{"SHA256SUMS stale", func(f *fixture) { f.bundleSuffix = "# edited\n" }, "SHA256SUMS does not match"},
	} {
		f := ok
		c.edit(&f)
		err := Verify(writeDist(t, f, revision))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Verify = %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// Another commit than the one built: the binary and the label say so.
	r := writeDist(t, ok, revision)
	r.Revision = strings.Repeat("e", 40)
	if err := Verify(r); err == nil || !strings.Contains(err.Error(), "does not hold the version stamp") || !strings.Contains(err.Error(), revisionLabel) {
		t.Errorf("another revision: Verify = %v, want the binary's stamp and the label named", err)
	}
}

func TestCheckTag(t *testing.T) {
	for _, c := range []struct {
		version, file, want string
	}{
		{"v0.1.0", "v0.1.0", ""},
		{"v0.1.0", "0.1.0", ""},
		{"v0.1.0-3-gabc1234", "v0.1.0", ""},
		{"abc1234", "v0.1.0", ""},
		{"v0.1.0-dirty", "v0.2.0", ""},
		{"v0.2.0", "v0.1.0", "VERSION says v0.1.0"},
		{"v0.2.0", "next", "not a release version"},
	} {
		err := CheckTag(c.version, c.file)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckTag(%q, %q) = %v, want %q", c.version, c.file, err, c.want)
		}
	}
}
