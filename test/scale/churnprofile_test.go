//go:build scale

package scale

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// churnProfileDir is CHURN_PROFILE: where the played ocl_exporter's CPU
// profile over the hour is written, ocl_exporter-<nodes>.pprof, taken
// with --web.enable-pprof (sampling costs the process about 1% more CPU).
// Unset, nothing is profiled.
func churnProfileDir() string { return os.Getenv("CHURN_PROFILE") }

// churnProfileArgs are the exporter's flags for CHURN_PROFILE.
func churnProfileArgs() []string {
	if churnProfileDir() == "" {
		return nil
	}
	return []string{"--web.enable-pprof"}
}

// profileHour writes e's CPU profile over the played hour to
// CHURN_PROFILE, if set; it returns when the profile is written.
func (h *churnHour) profileHour(ctx context.Context, e *running) error {
	dir := churnProfileDir()
	if dir == "" || e.name != Ours {
		return nil
	}
	seconds := int(h.real(hour)/time.Second) - 1
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", e.url, seconds), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profiling %s: %w", e.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profiling %s: %s", e.name, resp.Status)
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", e.name, h.nodes)))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profiling %s: %w", e.name, err)
	}
	return f.Close()
}
