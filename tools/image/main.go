// Command image writes the exporter's container image as an OCI image
// layout, with no container engine: `make image` cross-compiles the static
// binary for each platform and runs this with the results. The image is the
// Dockerfile's, built FROM scratch instead of distroless static (no
// registry can be reached here): one layer holding the binary and an
// /etc/passwd naming the non-root user, and the Dockerfile's user,
// entrypoint, exposed port and labels (image_test.go checks they agree).
//
//	image -out bin/ocl_exporter-oci -version V -revision R -created UNIX \
//	    linux/amd64=bin/platforms/linux/amd64/ocl_exporter ...
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the Dockerfile's final stage says; image_test.go parses the
// Dockerfile and fails when they differ.
const (
	binaryPath = "/usr/bin/ocl_exporter"
	// user is distroless's nonroot, numeric so that Kubernetes can check
	// runAsNonRoot without reading /etc/passwd.
	user = "65532:65532"
	port = "29100/tcp"
)

func labels(version, revision string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "ocl_exporter",
		"org.opencontainers.image.description": "Prometheus exporter for OpenShift On-Cluster Layering",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.revision":    revision,
	}
}

// config is the runtime configuration of the image.
func config(version, revision string) v1.Config {
	return v1.Config{
		User:         user,
		Entrypoint:   []string{binaryPath},
		ExposedPorts: map[string]struct{}{port: {}},
		Labels:       labels(version, revision),
		// As distroless sets it: tools a user runs in the container by
		// name (there are none but the exporter) are looked up here.
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
	}
}

// passwd and group name the numeric user as distroless's nonroot does, for
// tools that print user names; the exporter needs neither.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

func main() {
	out := flag.String("out", "", "directory of the OCI image layout to write (replaced)")
	version := flag.String("version", "dev", "the org.opencontainers.image.version label")
	revision := flag.String("revision", "unknown", "the org.opencontainers.image.revision label")
	created := flag.Int64("created", 0, "creation time in Unix seconds, for reproducible images (e.g. the commit's time)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: image -out DIR [flags] OS/ARCH=BINARY...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, *version, *revision, time.Unix(*created, 0).UTC(), flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(out, version, revision string, created time.Time, binaries []string) error {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arg := range binaries {
		plat, bin, ok := strings.Cut(arg, "=")
		p, err := v1.ParsePlatform(plat)
		if !ok || err != nil || p.OS == "" || p.Architecture == "" {
			return fmt.Errorf("%q: want OS/ARCH=BINARY, e.g. linux/amd64=bin/ocl_exporter", arg)
		}
		img, err := image(bin, *p, version, revision, created)
		if err != nil {
			return fmt.Errorf("%s: %w", plat, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	// The layout's index.json names one entry, the multi-platform index,
	// which `crane push DIR REF` and `skopeo copy --all oci:DIR ...` push.
	l, err := layout.Write(out, mutate.IndexMediaType(empty.Index, types.OCIImageIndex))
	if err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := l.AppendIndex(idx); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// image is the image of one platform.
func image(bin string, p v1.Platform, version, revision string, created time.Time) (v1.Image, error) {
	data, err := rootfs(bin, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "make image (tools/image): " + binaryPath + ", /etc/passwd, /etc/group"},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: created}
	cf.Config = config(version, revision)
	return mutate.ConfigFile(img, cf)
}

// rootfs is the layer's tar: the binary and the user database, owned by
// root, every time stamp the creation time.
func rootfs(bin string, created time.Time) ([]byte, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	if len(exe) < 4 || string(exe[:4]) != "\x7fELF" {
		return nil, errors.New(bin + " is not an ELF binary: build it with GOOS=linux (make image does)")
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"etc/", "usr/", "usr/bin/", "tmp/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: created, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/group", 0o644, []byte(group)},
		{"etc/passwd", 0o644, []byte(passwd)},
		{strings.TrimPrefix(binaryPath, "/"), 0o755, exe},
	} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: created, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
