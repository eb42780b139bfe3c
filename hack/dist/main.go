// Command dist finishes the release artifacts `make dist` builds into one
// directory: it checks that a release tag agrees with VERSION, packs the
// OCI image layout into one archive, writes SHA256SUMS, and verifies that
// every artifact says the same version (Verify): the binaries' build
// information, the image's labels and the binaries it holds, and the
// rendered bundle's image and runbook links.
//
//	dist -dir dist -version V -revision R -image REPO:V -layout bin/dist-oci \
//	    -platforms 'linux/amd64 linux/arm64 darwin/amd64 darwin/arm64'
package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ocl-exporter/ocl_exporter/runbooks"
)

// Release names what one `make dist` builds, and where each artifact
// lives in its directory.
type Release struct {
	Dir, Version, Revision string
	// Image is the reference the bundle deploys, REPOSITORY:Version.
	Image string
	// Platforms are OS/ARCH pairs; the linux ones are in the image.
	Platforms []string
}

// Binary is the file name of the binary for an OS/ARCH platform.
func (r Release) Binary(platform string) string {
	return "ocl_exporter-" + r.Version + "-" + strings.ReplaceAll(platform, "/", "-")
}

// Archive is the file name of the OCI image layout, as a tar archive
// (`skopeo copy --all oci-archive:FILE docker://REF` pushes it).
func (r Release) Archive() string { return "ocl_exporter-" + r.Version + ".oci.tar" }

// Bundle is the file name of the rendered deploy bundle.
func (r Release) Bundle() string { return "ocl_exporter-" + r.Version + ".yaml" }

// Sums is the file of SHA-256 sums of every other artifact.
const Sums = "SHA256SUMS"

func main() {
	var r Release
	var layout, platforms string
	flag.StringVar(&r.Dir, "dir", "dist", "the directory of the artifacts")
	flag.StringVar(&r.Version, "version", "", "the version every artifact says (git describe)")
	flag.StringVar(&r.Revision, "revision", "", "the commit it was built from")
	flag.StringVar(&r.Image, "image", "", "the image reference the bundle deploys")
	flag.StringVar(&layout, "layout", "", "the OCI image layout directory to pack into the archive")
	flag.StringVar(&platforms, "platforms", "", "the OS/ARCH pairs built, space separated")
	tagOnly := flag.Bool("check-tag", false, "only check that a release tag is VERSION's (before anything is built)")
	flag.Parse()
	r.Platforms = strings.Fields(platforms)
	run := run
	if *tagOnly {
		run = func(r Release, _ string) error { return checkTagFile(r.Version) }
	}
	if err := run(r, layout); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run(r Release, layout string) error {
	if r.Version == "" || r.Revision == "" || r.Image == "" || layout == "" || len(r.Platforms) == 0 {
		return errors.New("-version, -revision, -image, -layout and -platforms are required (make dist sets them)")
	}
	if err := checkTagFile(r.Version); err != nil {
		return err
	}
	if err := packLayout(layout, filepath.Join(r.Dir, r.Archive())); err != nil {
		return err
	}
	if err := writeSums(r.Dir); err != nil {
		return err
	}
	if err := Verify(r); err != nil {
		return err
	}
	fmt.Printf("dist: %s, every artifact at %s (commit %s)\n", r.Dir, r.Version, r.Revision)
	return nil
}

// checkTagFile is CheckTag with the VERSION file of the working directory.
func checkTagFile(version string) error {
	b, err := os.ReadFile("VERSION")
	if err != nil {
		return fmt.Errorf("run from the repository root: %w", err)
	}
	return CheckTag(version, strings.TrimSpace(string(b)))
}

// CheckTag refuses a release whose tag is not the version VERSION names:
// a release's links, image tag and binaries all say the tag, and VERSION
// is what the CHANGELOG releases. Builds between tags (git describe's
// v0.1.0-3-gabc1234, or a commit) carry no release version to check.
func CheckTag(version, versionFile string) error {
	tag, ok := runbooks.ReleaseTag(version)
	if !ok {
		return nil
	}
	want, ok := runbooks.ReleaseTag(versionFile)
	switch {
	case !ok:
		return fmt.Errorf("VERSION holds %q, not a release version such as v0.1.0", versionFile)
	case tag != want:
		return fmt.Errorf("the tag checked out is %s but VERSION says %s: tag the commit whose VERSION is the release (or fix VERSION and tag again)", tag, want)
	}
	return nil
}

// packLayout writes the OCI image layout directory as a tar archive,
// files in name order with fixed metadata, so the same layout packs to
// the same bytes.
func packLayout(layout, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = fs.WalkDir(os.DirFS(layout), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755, Format: tar.FormatPAX})
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", filepath.Join(layout, p))
		}
		b, err := os.ReadFile(filepath.Join(layout, p))
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: 0o644, Size: int64(len(b)), Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	return errors.Join(err, tw.Close(), f.Close())
}

// writeSums writes SHA256SUMS for every other file of dir, in the format
// `sha256sum -c` reads.
func writeSums(dir string) error {
	sums, err := sumFiles(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, Sums), []byte(sums), 0o644)
}

// sumFiles is SHA256SUMS's content for the files of dir.
func sumFiles(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, e := range entries {
		if e.Name() == Sums {
			continue
		}
		if !e.Type().IsRegular() {
			return "", fmt.Errorf("%s: not a regular file; dist/ holds the artifacts only", filepath.Join(dir, e.Name()))
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		lines = append(lines, hex.EncodeToString(h.Sum(nil))+"  "+e.Name()+"\n")
	}
	return strings.Join(lines, ""), nil
}
