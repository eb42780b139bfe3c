//go:build e2e

package e2e

import (
	"net/http"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// TestScrapesAreAuthenticated runs an exporter with --auth.kubernetes under
// deploy/'s RBAC: the real API server's TokenReview and SubjectAccessReview
// decide who may scrape, and deploy/ lets the platform Prometheus in.
func TestScrapesAreAuthenticated(t *testing.T) {
	e, err := startExporter(env.dir, env.exporterBin, "ocl_exporter-auth", env.cluster.ExporterKubeconfig, "", "--auth.kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"no token", "/metrics", "", http.StatusUnauthorized},
		{"a token the API server does not know", "/metrics", "not-a-token", http.StatusUnauthorized},
		{cluster.NobodyUser + ", without the permission", "/metrics", env.cluster.NobodyToken, http.StatusForbidden},
		{cluster.ScraperUser + ", the platform Prometheus", "/metrics", env.cluster.ScraperToken, http.StatusOK},
		// The status page is behind the same check; deploy/ grants the
		// scraper /metrics only, so it needs its own grant (docs/diagnose.md).
		{"status page, no token", "/status", "", http.StatusUnauthorized},
		{"status page, " + cluster.ScraperUser + " allowed /metrics only", "/status", env.cluster.ScraperToken, http.StatusForbidden},
		{"readiness probes need no token", "/readyz", "", http.StatusOK},
		{"liveness probes need no token", "/healthz", "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.url+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("GET %s: %d, want %d\nexporter log:\n%s", tc.path, resp.StatusCode, tc.want, e.Tail(20))
			}
		})
	}
}
