package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/runbooks"
)

// renderedObjects splits a rendered bundle into its objects.
func renderedObjects(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for doc := range bytes.SplitSeq(b, []byte("\n---\n")) {
		var o map[string]any
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("%v:\n%s", err, doc)
		}
		out = append(out, o)
	}
	return out
}

// containerImages lists the image of every container of every
// Deployment.
func containerImages(objs []map[string]any) []string {
	var out []string
	for _, o := range objs {
		if o["kind"] != "Deployment" {
			continue
		}
		spec, _ := o["spec"].(map[string]any)
		tmpl, _ := spec["template"].(map[string]any)
		pod, _ := tmpl["spec"].(map[string]any)
		cs, _ := pod["containers"].([]any)
		for _, c := range cs {
			img, _ := c.(map[string]any)["image"].(string)
			out = append(out, img)
		}
	}
	return out
}

// TestManifestsCarryTheImage: `make manifests IMAGE=...` renders the base
// and every overlay with the exporter's image set, and nothing of the
// placeholder.
func TestManifestsCarryTheImage(t *testing.T) {
	root := filepath.Join("..", "..")
	overlays, err := filepath.Glob(filepath.Join(root, "deploy", "overlays", "*"))
	if err != nil || len(overlays) == 0 {
		t.Fatalf("no deploy/overlays/*: %v", err)
	}
	dirs := []string{"deploy"}
	for _, o := range overlays {
		dirs = append(dirs, "deploy/overlays/"+filepath.Base(o))
	}
	for _, dir := range dirs {
		for _, ref := range []string{
			"quay.io/example/ocl_exporter:v0.1.0",
			"registry.internal:5000/ops/ocl_exporter@sha256:" + strings.Repeat("ab", 32),
		} {
			b, err := Manifests(root, dir, ref, "")
			if err != nil {
				t.Fatalf("%s %s: %v", dir, ref, err)
			}
			imgs := containerImages(renderedObjects(t, b))
			if len(imgs) == 0 {
				t.Errorf("%s: no Deployment container", dir)
			}
			for _, img := range imgs {
				if img != ref {
					t.Errorf("%s: container image %q, want %q", dir, img, ref)
				}
			}
			for _, p := range []string{placeholderImage, placeholderTag} {
				if bytes.Contains(b, []byte(p)) {
					t.Errorf("%s: the rendered bundle still holds the placeholder %q", dir, p)
				}
			}
		}
	}
}

// TestManifestsLinkTheRunbooksOfTheVersion: with a runbook base (make
// dist), every runbook_url of the rendered PrometheusRule links there.
func TestManifestsLinkTheRunbooksOfTheVersion(t *testing.T) {
	base := runbooks.AtIn(runbooks.Canonical, "v9.8.7")
	b, err := Manifests(filepath.Join("..", ".."), "deploy", "quay.io/example/ocl_exporter:v9.8.7", base)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for l := range strings.Lines(string(b)) {
		if _, u, ok := strings.Cut(l, "runbook_url: "); ok {
			n++
			if !strings.HasPrefix(u, base) {
				t.Errorf("runbook_url %s, want it under %s", strings.TrimSpace(u), base)
			}
		}
	}
	if n == 0 {
		t.Error("no runbook_url in the rendered bundle")
	}
}

func TestSetImageRefusesWhatItCannotDeploy(t *testing.T) {
	for ref, want := range map[string]string{
		"":                                     "want REGISTRY/REPOSITORY:TAG",
		"ocl_exporter:v1":                      "want REGISTRY/REPOSITORY:TAG",
		"Quay.io/x/ocl_exporter:v1":            "want REGISTRY/REPOSITORY:TAG",
		"quay.io/x/ocl_exporter":               "names no tag or digest",
		"registry.example.com/ocl_exporter:v1": "placeholder",
		"quay.io/x/ocl_exporter:v1 --dry-run":  "want REGISTRY/REPOSITORY:TAG",
	} {
		if _, err := SetImage(ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SetImage(%q) = %v, want an error containing %q", ref, err, want)
		}
	}
}

// TestManifestsPinTheCheckedOutRef: `make manifests` without a version
// links the runbooks at the tag or commit checked out, not at main as the
// committed files do: a deployed rule never follows main's later edits.
func TestManifestsPinTheCheckedOutRef(t *testing.T) {
	root := filepath.Join("..", "..")
	ref, err := CheckedOutRef(root)
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	base, err := pinnedBase(root, "", runbooks.Canonical, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := runbooks.AtIn(runbooks.Canonical, ref); base != want {
		t.Fatalf("pinnedBase = %s, want %s", base, want)
	}
	if got, _ := pinnedBase(root, "", runbooks.Canonical, "v1.2.3", "abc1234"); got != runbooks.AtIn(runbooks.Canonical, "v1.2.3") {
		t.Errorf("pinnedBase of release v1.2.3 = %s, want its tag", got)
	}
	if got, _ := pinnedBase(root, "https://runbooks.example/", runbooks.Canonical, "v1.2.3", ""); got != "https://runbooks.example/" {
		t.Errorf("pinnedBase with -runbook-url = %s, want it as given", got)
	}
	b, err := Manifests(root, "deploy", "quay.io/example/ocl_exporter:v0.1.0", base)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(runbooks.Main)) {
		t.Errorf("the rendered bundle links runbooks on main (%s)", runbooks.Main)
	}
	if !bytes.Contains(b, []byte(base)) {
		t.Errorf("the rendered bundle links no runbook at %s", base)
	}
}
