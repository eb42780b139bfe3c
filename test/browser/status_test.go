//go:build browser

package browser

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateDocs = flag.Bool("update-docs", false, "copy the screenshot to docs/status.png")

// chromiumFlags keep a headless Chromium from reaching out: no updates,
// sync, QUIC or background traffic, a fresh profile each run.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--hide-scrollbars", "--window-size=1100,2800",
}

func TestStatusPageInChromium(t *testing.T) {
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("$CHROMIUM=%q: %v; run make test-browser, which installs Debian's chromium", chromium, err)
	}
	base := startExporter(t)
	url := base + "/status"

	// The rendered document: Chromium parses and lays out the page; the
	// text a reader sees is what remains without the markup.
	dom := runChromium(t, chromium, "--dump-dom", url)
	text := renderedText(dom)
	for _, want := range []string{
		"OCL status: PROBLEM",
		"Stage 1 MachineOSConfig: FAILED", "secret_not_found",
		"Stage 2 MachineOSBuild: FAILED", "containerfile_command_failed", "unknown-command: command not found",
		"Stage 3 Rollout: FAILED", "image_not_found",
		"OCLMachineOSBuildFailed", "OCLNodeUpdateFailing", "OCLMachineOSConfigSecretMissing",
		"oc get machineosbuild layered-a9d6cc1c8ff0e876884feb344f8d637f",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the rendered page does not say %q:\n%s", want, text)
		}
	}
	if !strings.Contains(dom, `href="https://runbooks.example.com/ocl/OCLMachineOSBuildFailed.md"`) {
		t.Error("the runbook link does not follow --web.runbook-url")
	}

	shot := filepath.Join(t.ArtifactDir(), "status.png")
	runChromium(t, chromium, "--screenshot="+shot, url)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", shot, err)
	}
	if colors := distinctColors(img); colors < 16 {
		t.Errorf("%s has %d colours: a blank page?", shot, colors)
	}
	// The page's style element applies under its Content-Security-Policy
	// (its hash): a finding's 4px border and background are exactly the
	// style's colours, which no unstyled page has.
	for _, c := range []color.RGBA{{0xc9, 0x19, 0x0b, 0xff}, {0xfa, 0xfa, 0xfa, 0xff}} {
		if !hasColor(img, c) {
			t.Errorf("%s has no pixel of #%02x%02x%02x: the page's style was not applied (Content-Security-Policy %q)", shot, c.R, c.G, c.B, securityPolicy(t, url))
		}
	}
	t.Logf("screenshot: %s (%dx%d)", shot, img.Bounds().Dx(), img.Bounds().Dy())
	shows := outline(text)
	if *updateDocs {
		if err := os.WriteFile(filepath.Join(repoRoot, "docs", "status.png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repoRoot, Sidecar), []byte(shows), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc, err := os.ReadFile(filepath.Join(repoRoot, Sidecar)); err != nil || string(doc) != shows {
		t.Errorf("docs/status.png shows another page than Chromium renders now (%v): run this test with -update-docs.\nthe page:\n%s", err, shows)
	}
}

// startExporter builds the exporter and serves the example snapshot,
// whose three failing pools show every stage.
func startExporter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ocl_exporter")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ocl_exporter")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--example", "--web.listen-address="+addr,
		"--web.runbook-url=https://runbooks.example.com/ocl/", "--log.level=warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
	}
	t.Fatal("the exporter did not become ready")
	return ""
}

func runChromium(t *testing.T, chromium string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append(append([]string{"--user-data-dir=" + t.TempDir()}, chromiumFlags...), args...)
	cmd := exec.CommandContext(ctx, chromium, all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

func hasColor(img image.Image, c color.RGBA) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				return true
			}
		}
	}
	return false
}

// securityPolicy is the Content-Security-Policy the page is served with.
func securityPolicy(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("Content-Security-Policy")
}

func distinctColors(img image.Image) int {
	seen := map[string]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[fmt.Sprint(r>>8, g>>8, bl>>8)] = true
		}
	}
	return len(seen)
}
