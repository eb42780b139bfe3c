package main

// What every subcommand shares: their names, the options they read, the
// run functions by name and the exit codes.

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

	"github.com/ocl-exporter/ocl_exporter/runbooks"
)

// serveCommand is the exporter, the default: every invocation without a
// command (`ocl_exporter --snapshot=...`) still serves metrics.
const serveCommand = "serve"

// stdout is where diagnose and capture write; tests replace it.
var stdout io.Writer = os.Stdout

// toolOptions are the flags of the subcommands and the status page: those
// several share here, each subcommand's own in its options.
type toolOptions struct {
	// runbookBase is the base URL of the runbooks the status page and
	// diagnose link, ending with a slash.
	runbookBase string
	// output is diagnose's and review's report format; pool narrows both.
	output string
	pool   string
	// syncTimeout bounds diagnose's and capture's first lists.
	syncTimeout time.Duration
	diagnose    diagnoseOptions
	capture     captureOptions
	review      reviewOptions
}

// defaultRunbookBase links the runbooks of the build: its release tag,
// else its commit (from -ldflags, else Go's VCS stamp), so the status page
// never links a runbook written for a later version. A build without
// either links main.
func defaultRunbookBase() string {
	return runbooks.At(runbooks.Ref(version.Version, version.GetRevision()))
}

// validRunbookBase wants an absolute http(s) URL ending in a slash, of
// printable ASCII without the characters that end a markdown link or an
// HTML attribute: https://x.example/a)[b](javascript:alert(1))/ put a
// javascript: link in the markdown report.
func validRunbookBase(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(base, "/") ||
		strings.ContainsFunc(base, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>\"'`\\", r) }) {
		return fmt.Errorf("--web.runbook-url=%q: want an http(s) URL ending in /, without spaces, quotes, ( ) < > or \\ (percent-encode them), e.g. https://runbooks.example.com/ocl/", base)
	}
	return nil
}

// addCommands declares the subcommands and their flags on app.
func addCommands(app *kingpin.Application, o *toolOptions) {
	app.Command(serveCommand, "Serve the OCL metrics, the status page and the health endpoints (the default).").Default()
	// No Default(): it depends on the build, and --help and docs/flags.md
	// would differ from one build to the next; parseFlags fills it in.
	app.Flag("web.runbook-url", "Base URL of the runbooks the status page and diagnose link: http(s), ending in /, without spaces, quotes, ( ) < > or \\ (percent-encode them); <Alert>.md is appended. Default: the repository's runbooks at the tag or commit this binary was built from.").
		Action(func(*kingpin.ParseContext) error { return validRunbookBase(o.runbookBase) }).StringVar(&o.runbookBase)
	addDiagnoseCommand(app, o)
	addCaptureCommand(app, o)
	addReviewCommand(app, o)
}

// tools are the commands that run once and exit, by name.
var tools = map[string]func(context.Context, *options, *slog.Logger) error{
	diagnoseCommand: runDiagnose,
	captureCommand:  runCapture,
	reviewCommand:   runReview,
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
