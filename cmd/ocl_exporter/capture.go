package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source"
)

// runCapture lists every watched resource once, as the exporter does
// (same selectors, same transforms: Secrets as metadata only), and writes
// what the caches hold as a snapshot. A resource it could not read is
// recorded as not captured, with the reason, in its file; when none could
// be read it writes nothing and fails.
func runCapture(ctx context.Context, o *options, logger *slog.Logger) error {
	server := "snapshot " + o.snapshot
	switch {
	case o.example:
		server = "the built-in example"
	case o.snapshot == "":
		cfg, err := source.RESTConfig(o.kubeconfig)
		if err != nil {
			return err
		}
		server = cfg.Host
	}
	src, _, err := syncedSource(ctx, o, logger)
	if err != nil {
		return err
	}
	status := map[string]source.ResourceStatus{}
	var unavailable []error
	for _, st := range src.Status() {
		status[st.Resource] = st
		if !st.Available { // logged in one line by syncedSource
			unavailable = append(unavailable, fmt.Errorf("%s: %s", st.Resource, st.Reason))
		}
	}
	if len(unavailable) == len(status) {
		return fmt.Errorf("capture: nothing captured, no resource could be read:\n%w", errors.Join(unavailable...))
	}
	files, err := source.CaptureFiles(src.Cached(), status, time.Now(), server, o.namespace)
	if err != nil {
		return err
	}
	return writeCapture(o.tool.captureOut, files, o.tool.force)
}

// dashValues rewrites "-o -" and "--output -" as "--output=-": kingpin
// reads a lone "-" after a flag as an empty value.
func dashValues(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if (args[i] == "-o" || args[i] == "--output") && i+1 < len(args) && args[i+1] == "-" {
			out = append(out, "--output=-")
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// writeCapture writes the files as source.WriteCapture does, or, when out
// is "-", to standard output in name order.
func writeCapture(out string, files map[string][]byte, force bool) error {
	if out != "-" {
		return source.WriteCapture(out, files, force)
	}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if _, err := stdout.Write(files[n]); err != nil {
			return fmt.Errorf("capture: writing to standard output: %w", err)
		}
	}
	return nil
}
