package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// dockerfileImage is what the Dockerfile's final stage gives the image.
type dockerfileImage struct {
	User       string
	Entrypoint []string
	Ports      []string
	Labels     map[string]string
	// CopiedTo are the destinations of the stage's COPY instructions.
	CopiedTo []string
}

// parseDockerfile reads the final stage of ../../Dockerfile with BuildKit's
// parser, expanding build arguments from args as `docker build
// --build-arg` would.
func parseDockerfile(t *testing.T, args map[string]string) dockerfileImage {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil || len(stages) == 0 {
		t.Fatalf("Dockerfile: %d stages, %v", len(stages), err)
	}
	env := map[string]string{}
	lex := shell.NewLex(res.EscapeToken)
	expand := func(word string) (string, error) {
		var kv []string
		for k, v := range env {
			kv = append(kv, k+"="+v)
		}
		r, err := lex.ProcessWordWithMatches(word, shell.EnvsFromSlice(kv))
		return r.Result, err
	}
	out := dockerfileImage{Labels: map[string]string{}}
	for _, c := range stages[len(stages)-1].Commands {
		if e, ok := c.(instructions.SupportsSingleWordExpansion); ok {
			if err := e.Expand(expand); err != nil {
				t.Fatalf("Dockerfile: %s: %v", c, err)
			}
		}
		switch c := c.(type) {
		case *instructions.ArgCommand:
			for _, a := range c.Args {
				if v, ok := args[a.Key]; ok {
					env[a.Key] = v
				} else if a.Value != nil {
					env[a.Key] = *a.Value
				}
			}
		case *instructions.LabelCommand:
			for _, l := range c.Labels {
				out.Labels[l.Key] = l.Value
			}
		case *instructions.UserCommand:
			out.User = c.User
		case *instructions.ExposeCommand:
			for _, p := range c.Ports {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				out.Ports = append(out.Ports, p)
			}
		case *instructions.EntrypointCommand:
			if c.PrependShell {
				t.Fatalf("Dockerfile: ENTRYPOINT in shell form: the image has no shell")
			}
			out.Entrypoint = c.CmdLine
		case *instructions.CopyCommand:
			out.CopiedTo = append(out.CopiedTo, c.DestPath)
		}
	}
	slices.Sort(out.Ports)
	return out
}

// diff lists where an image's configuration differs from the Dockerfile's.
func diff(got v1.Config, want dockerfileImage) []string {
	var d []string
	if got.User != want.User {
		d = append(d, fmt.Sprintf("user %q, the Dockerfile's USER %q", got.User, want.User))
	}
	if !slices.Equal(got.Entrypoint, want.Entrypoint) {
		d = append(d, fmt.Sprintf("entrypoint %q, the Dockerfile's ENTRYPOINT %q", got.Entrypoint, want.Entrypoint))
	}
	if ports := slices.Sorted(maps.Keys(got.ExposedPorts)); !slices.Equal(ports, want.Ports) {
		d = append(d, fmt.Sprintf("exposed ports %q, the Dockerfile's EXPOSE %q", ports, want.Ports))
	}
	if !maps.Equal(got.Labels, want.Labels) {
		d = append(d, fmt.Sprintf("labels %v, the Dockerfile's LABEL %v", got.Labels, want.Labels))
	}
	return d
}

func compare(t *testing.T, what string, got v1.Config, want dockerfileImage) {
	t.Helper()
	for _, d := range diff(got, want) {
		t.Errorf("%s: %s", what, d)
	}
}

// TestConfigMatchesDockerfile: what tools/image writes is what `docker
// build` makes of the Dockerfile, for the same build arguments.
func TestConfigMatchesDockerfile(t *testing.T) {
	want := parseDockerfile(t, map[string]string{"VERSION": "v1.2.3", "REVISION": "0123abc"})
	compare(t, "tools/image", config("v1.2.3", "0123abc"), want)
	if !slices.Equal(want.CopiedTo, []string{binaryPath}) {
		t.Errorf("the Dockerfile copies to %q; tools/image puts the binary at %s", want.CopiedTo, binaryPath)
	}
	if uid, _, _ := strings.Cut(user, ":"); !strings.Contains(passwd, ":x:"+uid+":") {
		t.Errorf("/etc/passwd names no user %s:\n%s", uid, passwd)
	}
}

// TestConfigMatchesDockerfileFails: a configuration that says something
// else than the Dockerfile is noticed, field by field.
func TestConfigMatchesDockerfileFails(t *testing.T) {
	want := parseDockerfile(t, map[string]string{"VERSION": "v1", "REVISION": "r"})
	for name, mutate := range map[string]func(*v1.Config){
		"user":       func(c *v1.Config) { c.User = "0" },
		"entrypoint": func(c *v1.Config) { c.Entrypoint = []string{"/bin/sh"} },
		"port":       func(c *v1.Config) { c.ExposedPorts = map[string]struct{}{"9100/tcp": {}} },
		"label":      func(c *v1.Config) { c.Labels = labels("v2", "r") },
	} {
		cfg := config("v1", "r")
		mutate(&cfg)
		if d := diff(cfg, want); len(d) != 1 {
			t.Errorf("another %s: %d differences, want 1: %q", name, len(d), d)
		}
	}
}

// builtLayout opens the layout `make image` wrote (make test-image passes
// it in $OCL_IMAGE_LAYOUT) and returns its one entry, the multi-platform
// index that crane push and skopeo copy --all take.
func builtLayout(t *testing.T) (dir string, root v1.ImageIndex, entry v1.Descriptor) {
	t.Helper()
	dir = os.Getenv("OCL_IMAGE_LAYOUT")
	if dir == "" {
		t.Skip("$OCL_IMAGE_LAYOUT is not set: make test-image builds the image and sets it")
	}
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := root.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.Manifests) != 1 || rm.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("%s/index.json: want one OCI image index, got %+v", dir, rm.Manifests)
	}
	return dir, root, rm.Manifests[0]
}

// TestPush pushes the layout as the README says, with `make push`'s
// crane, to a registry in the test (go-containerregistry's): the registry
// then serves the same multi-platform index.
func TestPush(t *testing.T) {
	dir, _, entry := builtLayout(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/ocl_exporter:test"
	cmd := exec.CommandContext(t.Context(), "go", "tool", "crane", "push", dir, ref)
	cmd.Dir = ".." // the tools module
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crane push %s %s: %v\n%s", dir, ref, err, out)
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(r)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest != entry.Digest || desc.MediaType != entry.MediaType {
		t.Errorf("the registry serves %s %s, the layout holds %s %s", desc.MediaType, desc.Digest, entry.MediaType, entry.Digest)
	}
}

var versionLine = regexp.MustCompile(`^ocl_exporter, version (\S+) \(branch: \S+, revision: (\S+)\)`)

// TestBuiltImage inspects the layout `make image` wrote: one
// multi-platform index whose images
// carry the Dockerfile's configuration and one layer with a static binary
// of their platform, which runs.
func TestBuiltImage(t *testing.T) {
	_, root, entry := builtLayout(t)
	idx, err := root.ImageIndex(entry.Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var ran bool
	for _, d := range im.Manifests {
		if d.Platform == nil {
			t.Fatalf("manifest %s names no platform", d.Digest)
		}
		plat := d.Platform.String()
		t.Run(strings.ReplaceAll(plat, "/", "-"), func(t *testing.T) {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != d.Platform.OS || cf.Architecture != d.Platform.Architecture {
				t.Errorf("config says %s/%s, the index %s", cf.OS, cf.Architecture, plat)
			}
			files := rootfsOf(t, img)
			exe := files[strings.TrimPrefix(binaryPath, "/")]
			if got := onPath(cf.Config.Env, files, "ocl_exporter"); got != binaryPath {
				t.Errorf("ocl_exporter, the command by name in the container (a pod's command:, a debug session), resolves on the image's PATH to %q, want %s", got, binaryPath)
			}
			checkStatic(t, exe, d.Platform.Architecture)
			if !strings.Contains(string(files["etc/passwd"]), ":x:65532:65532:") {
				t.Errorf("/etc/passwd names no 65532:\n%s", files["etc/passwd"])
			}
			if d.Platform.OS != runtime.GOOS || d.Platform.Architecture != runtime.GOARCH {
				// Another platform's binary cannot run here; its labels
				// must still be the Dockerfile's for its own version.
				v, r := cf.Config.Labels["org.opencontainers.image.version"], cf.Config.Labels["org.opencontainers.image.revision"]
				compare(t, plat, cf.Config, parseDockerfile(t, map[string]string{"VERSION": v, "REVISION": r}))
				return
			}
			ran = true
			version, revision := runVersion(t, exe)
			compare(t, plat, cf.Config, parseDockerfile(t, map[string]string{"VERSION": version, "REVISION": revision}))
		})
	}
	if !ran {
		t.Errorf("no image for %s/%s, where the test runs", runtime.GOOS, runtime.GOARCH)
	}
}

// onPath is the file a name resolves to on the PATH of env, as the
// runtime resolves a command by name in the container ("" when none
// holds it).
func onPath(env []string, files map[string][]byte, name string) string {
	for _, e := range env {
		if dirs, ok := strings.CutPrefix(e, "PATH="); ok {
			for d := range strings.SplitSeq(dirs, ":") {
				p := path.Join(d, name)
				if _, ok := files[strings.TrimPrefix(p, "/")]; ok {
					return p
				}
			}
		}
	}
	return ""
}

// rootfsOf reads the image's single layer: its regular files by path.
func rootfsOf(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s, want %s", mt, types.OCILayer)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s is owned by %d:%d, want root: the user must not be able to change it", h.Name, h.Uid, h.Gid)
		}
		if h.Typeflag == tar.TypeReg {
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
			if h.Name == strings.TrimPrefix(binaryPath, "/") && h.Mode&0o111 == 0 {
				t.Errorf("%s is not executable (mode %o)", h.Name, h.Mode)
			}
		}
	}
	want := []string{"etc/group", "etc/passwd", strings.TrimPrefix(binaryPath, "/")}
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
		t.Errorf("layer files %q, want %q", got, want)
	}
	return files
}

// checkStatic wants an ELF executable for arch with no program
// interpreter: a static binary, which a FROM scratch image needs.
func checkStatic(t *testing.T, exe []byte, arch string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		t.Fatalf("%s: %v", binaryPath, err)
	}
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != machine {
		t.Errorf("%s is for %s, the image for %s", binaryPath, f.Machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked (build it with CGO_ENABLED=0): the image has no libc", binaryPath)
		}
	}
}

// runVersion runs the binary with --version and returns the version and
// revision it was built with.
func runVersion(t *testing.T, exe []byte) (version, revision string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ocl_exporter")
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "--version")
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", binaryPath, err, out)
	}
	m := versionLine.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("%s --version printed %q, want %s", binaryPath, out, versionLine)
	}
	return m[1], m[2]
}
