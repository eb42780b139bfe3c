package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
