package server

import (
	"bytes"
	"log/slog"
	"net/http"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
)

// StatusPath serves the diagnosis as HTML.
const StatusPath = "/status"

// statusPage diagnoses the view at request time, from the informer caches
// (no API call), and renders it without JavaScript.
func statusPage(report func() *diagnose.Report, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if err := diagnose.WriteHTML(&buf, report()); err != nil {
			logger.Error("rendering the status page failed", "err", err)
			http.Error(w, "rendering the status page failed: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(buf.Bytes())
	}
}
