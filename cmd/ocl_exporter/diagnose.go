package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/source"
)

const diagnoseCommand = "diagnose"

// diagnoseOptions are diagnose's own flags.
type diagnoseOptions struct {
	// at is --time, RFC 3339.
	at string
}

// addDiagnoseCommand declares diagnose and its flags.
func addDiagnoseCommand(app *kingpin.Application, o *toolOptions) {
	d := app.Command(diagnoseCommand, "Diagnose On-Cluster Layering once, stage by stage per pool, from --kubeconfig (read-only), --snapshot or --example, and exit: 0 healthy, 1 a problem found, 2 could not diagnose.")
	d.Flag("output", "Report format: text (80 columns; colour only on a terminal without NO_COLOR), json (docs/diagnose.schema.json) or markdown.").
		Short('o').Default(diagnose.FormatText).EnumVar(&o.output, diagnose.Formats...)
	d.Flag("pool", "Report only this MachineConfigPool.").StringVar(&o.pool)
	d.Flag("time", "Evaluate at this RFC 3339 time (\"since\" durations are relative to it). Default: a snapshot's capture time (see --now), else now.").StringVar(&o.diagnose.at)
	d.Flag("sync-timeout", "How long to wait for the first list of every resource from a live cluster.").Default("60s").DurationVar(&o.syncTimeout)
}

// couldNotDiagnose is diagnose's exit code when it has no view: as
// capture's and review's, the same cause (no cluster, a wrong command
// line) exits the same.
const couldNotDiagnose = 2

// runDiagnose builds the report once and writes it; its exit status is the
// verdict's.
func runDiagnose(ctx context.Context, o *options, logger *slog.Logger) error {
	at, err := fixedTime(o)
	if err != nil {
		return exitError{couldNotDiagnose, err}
	}
	src, who, err := syncedSource(ctx, o, logger)
	if err != nil {
		return exitError{couldNotDiagnose, err}
	}
	if at.IsZero() {
		at = evaluationClock(o, src)()
		noteEvaluatedNow(o, src, logger)
	}
	r := diagnose.New(src.Cluster(at), src.Status(), diagnose.Options{RunbookBase: o.tool.runbookBase, Pool: o.tool.pool, Identity: who})
	color := diagnose.UseColor(isTerminal(stdout), os.Getenv)
	if err := diagnose.Write(stdout, r, o.tool.output, diagnose.TextOptions{Color: color}); err != nil {
		return exitError{couldNotDiagnose, fmt.Errorf("writing the report: %w", err)}
	}
	if code := r.Verdict.ExitCode(); code != 0 {
		return exitError{code: code}
	}
	return nil
}

// fixedTime is --time, zero without it.
func fixedTime(o *options) (time.Time, error) {
	if o.tool.diagnose.at == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, o.tool.diagnose.at)
	if err != nil {
		return time.Time{}, fmt.Errorf("--time %q: want an RFC 3339 time such as 2025-10-17T13:00:00Z: %w", o.tool.diagnose.at, err)
	}
	return t, nil
}

// syncedSource opens the source the exporter would (live, --snapshot or
// --example), lists every resource once and returns when each has synced
// or been reported unavailable, with the identity it read as (live), and
// logs in one line what it could not read. Live, it only lists and
// watches.
func syncedSource(ctx context.Context, o *options, logger *slog.Logger) (*source.Source, string, error) {
	backend, cfg, err := openClients(ctx, o, logger)
	if err != nil {
		return nil, "", err
	}
	src := source.New(backend, o.namespace, quietSource(o, logger), nil)
	src.Run(ctx) // the informers stop with ctx, when the command ends
	wait, done := context.WithTimeout(ctx, o.tool.syncTimeout)
	defer done()
	switch err := src.WaitReady(wait); {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, "", fmt.Errorf("within --sync-timeout=%s, %w", o.tool.syncTimeout, src.Pending())
	case err != nil && cfg != nil:
		return nil, "", fmt.Errorf("cluster %s: %w", cfg.Host, err)
	case err != nil:
		return nil, "", err
	}
	who := identity(ctx, cfg, o.kubeconfig)
	logUnavailable(logger, src.Status(), who)
	return src, who, nil
}

// isTerminal reports whether w is a character device, i.e. a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
