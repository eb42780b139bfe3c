package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// BuildExporter builds cmd/ocl_exporter of the repository at repoRoot as
// make build does, into dir.
func BuildExporter(repoRoot, dir string) (string, error) {
	bin := filepath.Join(dir, "ocl_exporter")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ocl_exporter")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ocl_exporter: %w\n%s", err, out)
	}
	return bin, nil
}

// ownPrefixes are the families the exporter's own code emits, apart from
// the process and Go runtime families of client_golang.
var ownPrefixes = []string{"mosc_", "mosb_", "node_", "ocl_"}

// OwnFamily reports whether the exporter's own code emits family name.
func OwnFamily(name string) bool {
	return slices.ContainsFunc(ownPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

// Scrape reads an exporter's /metrics at base (scheme and host) as
// Prometheus would parse it.
func Scrape(ctx context.Context, base string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", base, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", base, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s/metrics: %w", base, err)
	}
	return families, nil
}
