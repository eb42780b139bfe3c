package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/version"

	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/runbooks"
	"github.com/ocl-exporter/ocl_exporter/source"
)

// Subcommands. The exporter is the default, so every invocation without a
// command (`ocl_exporter --snapshot=...`) still serves metrics.
const (
	serveCommand    = "serve"
	diagnoseCommand = "diagnose"
	captureCommand  = "capture"
)

// stdout is where diagnose and capture write; tests replace it.
var stdout io.Writer = os.Stdout

// toolOptions are the flags of the subcommands and the status page.
type toolOptions struct {
	// runbookBase is the base URL of the runbooks, ending with a slash.
	runbookBase string
	output      string
	pool        string
	at          string
	syncTimeout time.Duration
	captureOut  string
	force       bool
	review      reviewOptions
}

// defaultRunbookBase links the runbooks of the build: its release tag,
// else its commit (from -ldflags, else Go's VCS stamp), so the status page
// never links a runbook written for a later version. A build without
// either links main.
func defaultRunbookBase() string {
	return runbooks.At(runbooks.Ref(version.Version, version.GetRevision()))
}

// validRunbookBase wants an absolute http(s) URL ending in a slash.
func validRunbookBase(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(base, "/") {
		return fmt.Errorf("--web.runbook-url=%q: want an http(s) URL ending in /, e.g. https://runbooks.example.com/ocl/", base)
	}
	return nil
}

// addCommands declares the subcommands and their flags on app.
func addCommands(app *kingpin.Application, o *toolOptions) {
	app.Command(serveCommand, "Serve the OCL metrics, the status page and the health endpoints (the default).").Default()
	// No Default(): it depends on the build, and --help and docs/flags.md
	// would differ from one build to the next; parseFlags fills it in.
	app.Flag("web.runbook-url", "Base URL of the runbooks the status page and diagnose link, ending in /; <Alert>.md is appended. Default: the repository's runbooks at the tag or commit this binary was built from.").
		Action(func(*kingpin.ParseContext) error { return validRunbookBase(o.runbookBase) }).StringVar(&o.runbookBase)

	d := app.Command(diagnoseCommand, "Diagnose On-Cluster Layering once, stage by stage per pool, from --kubeconfig (read-only), --snapshot or --example, and exit: 0 healthy, 1 a problem found, 2 could not diagnose.")
	d.Flag("output", "Report format: text (80 columns; colour only on a terminal without NO_COLOR), json (docs/diagnose.schema.json) or markdown.").
		Short('o').Default(diagnose.FormatText).EnumVar(&o.output, diagnose.Formats...)
	d.Flag("pool", "Report only this MachineConfigPool.").StringVar(&o.pool)
	d.Flag("time", "Evaluate at this RFC 3339 time (\"since\" durations are relative to it). Default: a snapshot's capture time (see --now), else now.").StringVar(&o.at)
	d.Flag("sync-timeout", "How long to wait for the first list of every resource from a live cluster.").Default("60s").DurationVar(&o.syncTimeout)

	c := app.Command(captureCommand, "Write a snapshot of the objects the exporter watches, trimmed as the exporter keeps them (Secrets as metadata only), from a live cluster, for diagnose --snapshot and the exporter's --snapshot. Exit 0 once written (a resource it could not read is recorded as not captured), 2 when it wrote nothing: no cluster, no resource readable, a wrong command line, an output it may not replace.")
	c.Flag("output", "File to write, or a directory (an existing one, or a path ending in /) to write one file per resource into; - for standard output. Written whole or not at all.").
		Short('o').Default("-").StringVar(&o.captureOut)
	c.Flag("force", "Replace an existing --output file, or a non-empty --output directory holding only snapshot files (.yaml, .yml, .json).").BoolVar(&o.force)
	c.Flag("sync-timeout", "How long to wait for the first list of every resource.").Default("60s").DurationVar(&o.syncTimeout)

	addReviewCommand(app, o)
}

// exitError asks for an exit code other than 1, with the error to print
// if any.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e exitError) Unwrap() error { return e.err }

// exitCodeOf is the process's exit code for run's error.
func exitCodeOf(err error) int {
	var ec exitError
	if errors.As(err, &ec) {
		return ec.code
	}
	if err != nil {
		return 1
	}
	return 0
}

// couldNotDiagnose is diagnose's exit status when it has no view, and
// couldNotCapture capture's when it wrote nothing: the same cause (no
// cluster, a wrong command line) exits the same.
const (
	couldNotDiagnose = 2
	couldNotCapture  = 2
)

// usageError keeps diagnose's exit status 1 for "a problem found": a
// command line diagnose cannot run with exits 2, as scripts expect.
func usageError(args []string, err error) error {
	if slices.Contains(args, diagnoseCommand) {
		return exitError{couldNotDiagnose, err}
	}
	if slices.Contains(args, captureCommand) {
		return exitError{couldNotCapture, err}
	}
	if slices.Contains(args, reviewCommand) {
		return exitError{couldNotReview, err}
	}
	return err
}

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
	if o.tool.at == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, o.tool.at)
	if err != nil {
		return time.Time{}, fmt.Errorf("--time %q: want an RFC 3339 time such as 2025-10-17T13:00:00Z: %w", o.tool.at, err)
	}
	return t, nil
}

// syncedSource opens the source the exporter would (live, --snapshot or
// --example), lists every resource once and returns when each has synced
// or been reported unavailable, with the identity it read as (live), and
// logs in one line what it could not read. Live, it only lists and
// watches.
func syncedSource(ctx context.Context, o *options, logger *slog.Logger) (*source.Source, string, error) {
	backend, cfg, err := openClients(o, logger)
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

// statusReport diagnoses the source's current view for the status page.
// A snapshot is a frozen incident: it is evaluated at its capture time,
// as diagnose does, unless --now.
func statusReport(src *source.Source, o *options) func() *diagnose.Report {
	now := evaluationClock(o, src)
	return func() *diagnose.Report {
		return diagnose.New(src.Cluster(now()), src.Status(), diagnose.Options{RunbookBase: o.tool.runbookBase, Public: true})
	}
}
