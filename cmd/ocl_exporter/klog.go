package main

import (
	"log/slog"

	"k8s.io/klog/v2"
)

// routeKlog sends client-go's own logs (reflector errors, throttling, the
// API server going away) through the exporter's logger, so they follow
// --log.level and --log.format instead of klog's own text on stderr. The
// attribute is "component": klog writes "logger" itself for a named
// logger (the reflector's), and a JSON line with a key twice is one
// that log pipelines mangle.
func routeKlog(logger *slog.Logger) {
	klog.SetSlogLogger(logger.With("component", "client-go"))
}
