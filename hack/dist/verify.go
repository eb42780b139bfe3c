package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/runbooks"
)

// What the image says about its version: the Dockerfile's labels.
const (
	versionLabel   = "org.opencontainers.image.version"
	revisionLabel  = "org.opencontainers.image.revision"
	imageBinary    = "usr/bin/ocl_exporter"
	maxLayoutBlob  = 256 << 20
	maxBundleBytes = 16 << 20
)

// Verify checks that every artifact of r says r.Version and r.Revision:
// each binary's build information (its -X flags, platform, no cgo), each
// linux image's labels and the binary it holds (byte for byte the
// release's), the bundle's image (REPOSITORY:Version) and every runbook
// link (at the version's ref), and SHA256SUMS over all of them.
func Verify(r Release) error {
	var errs []error
	binaries := map[string][]byte{}
	for _, p := range r.Platforms {
		b, err := checkBinary(filepath.Join(r.Dir, r.Binary(p)), p, r.Version, r.Revision)
		errs = append(errs, err)
		binaries[p] = b
	}
	errs = append(errs, checkImage(r, binaries), checkBundle(r), checkSums(r))
	return errors.Join(errs...)
}

// checkBinary reads the build information of the binary for platform and
// returns its bytes. The go command records the platform and cgo in every
// binary; the -X version stamp only the binary itself can tell (-ldflags
// is not recorded under -trimpath, nor the commit with -buildvcs=false or
// in a git worktree), so the one for this machine runs, and the others
// must at least hold the stamp's strings.
func checkBinary(file, platform, version, revision string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	info, err := buildinfo.Read(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var errs []error
	for _, c := range []struct{ what, got, want string }{
		{"platform", settings["GOOS"] + "/" + settings["GOARCH"], platform},
		{"CGO_ENABLED", settings["CGO_ENABLED"], "0"},
	} {
		if c.got != c.want {
			errs = append(errs, fmt.Errorf("%s: %s %q, want %q", file, c.what, c.got, c.want))
		}
	}
	for _, stamp := range []string{version, revision} {
		if !bytes.Contains(b, []byte(stamp)) {
			errs = append(errs, fmt.Errorf("%s: does not hold the version stamp %q", file, stamp))
		}
	}
	if platform == runtime.GOOS+"/"+runtime.GOARCH {
		errs = append(errs, checkVersionOutput(file, version, revision))
	}
	return b, errors.Join(errs...)
}

// versionLine is the first line of `ocl_exporter --version`
// (prometheus/common/version.Print).
var versionLine = regexp.MustCompile(`(?m)^ocl_exporter, version (\S+) \(branch: \S*, revision: (\S+)\)$`)

// checkVersionOutput runs the binary with --version.
func checkVersionOutput(file, version, revision string) error {
	out, err := exec.Command(file, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %w\n%s", file, err, out)
	}
	m := versionLine.FindSubmatch(out)
	if m == nil || string(m[1]) != version || string(m[2]) != revision {
		return fmt.Errorf("%s --version prints %q, want version %s and revision %s", file, out, version, revision)
	}
	return nil
}

// ociDescriptor is the part of an OCI descriptor Verify reads.
type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform,omitempty"`
}

// checkImage reads the image archive: the index the layout names, one
// image per linux platform with the release's labels and binary.
func checkImage(r Release, binaries map[string][]byte) error {
	blobs, err := readArchive(filepath.Join(r.Dir, r.Archive()))
	if err != nil {
		return err
	}
	var top struct{ Manifests []ociDescriptor }
	if err := json.Unmarshal(blobs["index.json"], &top); err != nil {
		return fmt.Errorf("%s: index.json: %w", r.Archive(), err)
	}
	if len(top.Manifests) != 1 {
		return fmt.Errorf("%s: index.json names %d entries, want one image index", r.Archive(), len(top.Manifests))
	}
	var idx struct{ Manifests []ociDescriptor }
	if err := json.Unmarshal(blobs[blobPath(top.Manifests[0].Digest)], &idx); err != nil {
		return fmt.Errorf("%s: the image index: %w", r.Archive(), err)
	}
	seen := map[string]bool{}
	var errs []error
	for _, m := range idx.Manifests {
		if m.Platform == nil {
			errs = append(errs, fmt.Errorf("%s: manifest %s names no platform", r.Archive(), m.Digest))
			continue
		}
		p := m.Platform.OS + "/" + m.Platform.Architecture
		seen[p] = true
		errs = append(errs, checkPlatformImage(r, blobs, m.Digest, p, binaries[p]))
	}
	for _, p := range r.Platforms {
		if strings.HasPrefix(p, "linux/") && !seen[p] {
			errs = append(errs, fmt.Errorf("%s: no image for %s", r.Archive(), p))
		}
	}
	return errors.Join(errs...)
}

// checkPlatformImage checks one platform's image: its labels and that its
// binary is the release's binary for that platform.
func checkPlatformImage(r Release, blobs map[string][]byte, digest, platform string, binary []byte) error {
	var manifest struct {
		Config ociDescriptor
		Layers []ociDescriptor
	}
	if err := json.Unmarshal(blobs[blobPath(digest)], &manifest); err != nil {
		return fmt.Errorf("%s %s: the manifest: %w", r.Archive(), platform, err)
	}
	if len(manifest.Layers) != 1 {
		return fmt.Errorf("%s %s: %d layers, want one", r.Archive(), platform, len(manifest.Layers))
	}
	var config struct {
		Config struct{ Labels map[string]string }
	}
	if err := json.Unmarshal(blobs[blobPath(manifest.Config.Digest)], &config); err != nil {
		return fmt.Errorf("%s %s: the image config: %w", r.Archive(), platform, err)
	}
	var errs []error
	for label, want := range map[string]string{versionLabel: r.Version, revisionLabel: r.Revision} {
		if got := config.Config.Labels[label]; got != want {
			errs = append(errs, fmt.Errorf("%s %s: label %s is %q, want %q", r.Archive(), platform, label, got, want))
		}
	}
	exe, err := layerFile(blobs[blobPath(manifest.Layers[0].Digest)], imageBinary)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("%s %s: %w", r.Archive(), platform, err))
	case binary == nil:
		errs = append(errs, fmt.Errorf("%s: an image for %s, which the release has no binary for", r.Archive(), platform))
	case !bytes.Equal(exe, binary):
		errs = append(errs, fmt.Errorf("%s %s: /%s is not %s", r.Archive(), platform, imageBinary, r.Binary(platform)))
	}
	return errors.Join(errs...)
}

// blobPath is where a layout keeps the blob of a digest.
func blobPath(digest string) string {
	alg, hex, _ := strings.Cut(digest, ":")
	return path.Join("blobs", alg, hex)
}

// readArchive returns the regular files of a tar archive by name.
func readArchive(file string) (map[string][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files, err := tarFiles(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return files, nil
}

// tarFiles reads the regular files of a tar stream, each bounded.
func tarFiles(r io.Reader) (map[string][]byte, error) {
	out := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size > maxLayoutBlob {
			return nil, fmt.Errorf("%s: %d bytes, more than an image of one binary holds", h.Name, h.Size)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out[path.Clean(h.Name)] = b
	}
}

// layerFile returns one file of a gzip-compressed layer.
func layerFile(layer []byte, name string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		return nil, fmt.Errorf("the layer: %w", err)
	}
	files, err := tarFiles(zr)
	if err != nil {
		return nil, fmt.Errorf("the layer: %w", err)
	}
	b, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("the layer holds no /%s", name)
	}
	return b, nil
}

// runbookRef matches a runbook link's ref in GitHub's URL layout.
var runbookRef = regexp.MustCompile(`/blob/([^/]+)/runbooks/[^/]+\.md$`)

// checkBundle reads the rendered bundle: the Deployment deploys r.Image,
// whose tag is the version, and every runbook_url links the runbooks at
// the version's ref.
func checkBundle(r Release) error {
	file := filepath.Join(r.Dir, r.Bundle())
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if len(b) > maxBundleBytes {
		return fmt.Errorf("%s: %d bytes, not a bundle", file, len(b))
	}
	var errs []error
	if !strings.HasSuffix(r.Image, ":"+r.Version) {
		errs = append(errs, fmt.Errorf("the image %s is not tagged %s", r.Image, r.Version))
	}
	images, links := 0, 0
	wantRef := runbooks.Ref(r.Version, r.Revision)
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		walk(o, func(key, value string) {
			switch key {
			case "image":
				images++
				if value != r.Image {
					errs = append(errs, fmt.Errorf("%s: image %s, want %s", file, value, r.Image))
				}
			case "runbook_url":
				links++
				if m := runbookRef.FindStringSubmatch(value); m == nil || m[1] != wantRef {
					errs = append(errs, fmt.Errorf("%s: runbook_url %s does not link the runbooks at %s", file, value, wantRef))
				}
			}
		})
	}
	if images == 0 || links == 0 {
		errs = append(errs, fmt.Errorf("%s: %d images and %d runbook links, want both", file, images, links))
	}
	return errors.Join(errs...)
}

// walk calls f for every string value of a decoded YAML tree with its key.
func walk(v any, f func(key, value string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				f(k, s)
			}
			walk(e, f)
		}
	case []any:
		for _, e := range x {
			walk(e, f)
		}
	}
}

// checkSums compares SHA256SUMS with the files of the directory.
func checkSums(r Release) error {
	want, err := sumFiles(r.Dir)
	if err != nil {
		return err
	}
	got, err := os.ReadFile(filepath.Join(r.Dir, Sums))
	if err != nil {
		return err
	}
	if string(got) != want {
		return fmt.Errorf("%s does not match the files of %s:\n%s\nwant:\n%s", Sums, r.Dir, got, want)
	}
	var errs []error
	for _, p := range r.Platforms {
		errs = append(errs, listed(want, r.Binary(p)))
	}
	return errors.Join(append(errs, listed(want, r.Archive()), listed(want, r.Bundle()))...)
}

func listed(sums, name string) error {
	if !strings.Contains(sums, "  "+name+"\n") {
		return fmt.Errorf("%s does not list %s", Sums, name)
	}
	return nil
}
