package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

const captureCommand = "capture"

// captureOptions are capture's own flags.
type captureOptions struct {
	out   string
	force bool
}

// addCaptureCommand declares capture and its flags.
func addCaptureCommand(app *kingpin.Application, o *toolOptions) {
	c := app.Command(captureCommand, "Write a snapshot of the objects the exporter watches, trimmed as the exporter keeps them (Secrets as metadata only), from a live cluster, for diagnose --snapshot and the exporter's --snapshot. Exit 0 once written (a resource it could not read is recorded as not captured), 2 when it wrote nothing: no cluster, no resource readable, a wrong command line, an output it may not replace.")
	c.Flag("output", "File to write, or a directory (an existing one, or a path ending in /) to write one file per resource into; - for standard output. Written whole or not at all.").
		Short('o').Default("-").StringVar(&o.capture.out)
	c.Flag("force", "Replace an existing --output file, or a non-empty --output directory holding only snapshot files (.yaml, .yml, .json).").BoolVar(&o.capture.force)
	c.Flag("sync-timeout", "How long to wait for the first list of every resource.").Default("60s").DurationVar(&o.syncTimeout)
}

// couldNotCapture is capture's exit code when it wrote nothing.
const couldNotCapture = 2

// runCapture lists every watched resource once, as the exporter does
// (same selectors, same transforms: Secrets as metadata only), and writes
// what the caches hold as a snapshot. A resource it could not read is
// recorded as not captured, with the reason, in its file; when none could
// be read it writes nothing and fails, exit code couldNotCapture.
func runCapture(ctx context.Context, o *options, logger *slog.Logger) error {
	if err := captureSnapshot(ctx, o, logger); err != nil {
		return exitError{couldNotCapture, err}
	}
	return nil
}

func captureSnapshot(ctx context.Context, o *options, logger *slog.Logger) error {
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
	status := map[string]snapshot.ResourceStatus{}
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
	files, err := snapshot.CaptureFiles(src.Cached(), status, time.Now(), server, o.namespace)
	if err != nil {
		return err
	}
	return writeCapture(o.tool.capture.out, files, o.tool.capture.force)
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
		return snapshot.WriteCapture(out, files, force)
	}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if _, err := stdout.Write(files[n]); err != nil {
			return fmt.Errorf("capture: writing to standard output: %w", err)
		}
	}
	return nil
}
