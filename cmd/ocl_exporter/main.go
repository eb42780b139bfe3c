// Command ocl_exporter exports the state of OpenShift On-Cluster Layering
// (MachineOSConfigs, MachineOSBuilds and the rollout of layered images) as
// Prometheus metrics, live from a cluster or offline from a snapshot.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"text/template"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"
	"k8s.io/client-go/rest"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/examples"
	"github.com/ocl-exporter/ocl_exporter/kubeapi"
	"github.com/ocl-exporter/ocl_exporter/server"
	"github.com/ocl-exporter/ocl_exporter/source"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

const name = "ocl_exporter"

// defaultAddress sits outside 9100-9999, which the Prometheus port
// allocation list has filled, and below the NodePort range (30000-32767).
const defaultAddress = ":29100"

func main() { os.Exit(exitCode()) }

// exitCode runs the command line and returns the process's exit code, so
// that its deferred calls run before os.Exit.
func exitCode() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		// A bare exit status (diagnose's verdict) has nothing to print.
		if ec := (exitError{}); !errors.As(err, &ec) || ec.err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		}
		return exitCodeOf(err)
	}
	return 0
}

type options struct {
	kubeconfig, snapshot, namespace, metricsPath string
	example, pprof                               bool
	// now evaluates a snapshot at the current time, not its capture time.
	now bool
	// portForward is the loopback address /status is also served on,
	// without authentication, for `oc port-forward`; "" for none.
	portForward    string
	maxRequests    int
	maxConnections int
	renderInterval time.Duration
	authKubernetes bool
	authCacheTTL   time.Duration
	authAudiences  []string
	collector      collector.Options
	web            *web.FlagConfig
	log            *promslog.Config
	command        string
	tool           toolOptions
	// logLevelSet: --log.level was given. diagnose and capture print a
	// report, which the informers' progress lines would drown, so they
	// log warnings only unless asked for more.
	logLevelSet bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	app, o := newApp(stderr)
	command, err := app.Parse(dashValues(args))
	if err != nil {
		return nil, err
	}
	o.command = command
	if err := expandHome(&o.kubeconfig, &o.snapshot, o.web.WebConfigFile, &o.tool.capture.out, &o.tool.review.bearerTokenFile, &o.tool.review.caFile); err != nil {
		return nil, err
	}
	if o.tool.runbookBase == "" {
		o.tool.runbookBase = defaultRunbookBase()
	}
	if err := validate(o); err != nil {
		return nil, err
	}
	return o, nil
}

// newApp declares the command line, its flags parsed into the options;
// docs/flags.md is generated from it (make docs).
func newApp(stderr io.Writer) (*kingpin.Application, *options) {
	app := kingpin.New(name, "Prometheus exporter for OpenShift On-Cluster Layering (image mode).")
	app.UsageWriter(stderr)
	app.UsageTemplate(usageTemplate)
	app.UsageFuncs(template.FuncMap{"flagsOf": flagsOf})
	app.ErrorWriter(stderr)
	app.Version(version.Print(name))
	app.HelpFlag.Short('h')
	o := &options{log: &promslog.Config{}}
	app.Flag("kubeconfig", "Path to a kubeconfig file. Default: the in-cluster service account, else $KUBECONFIG or ~/.kube/config.").StringVar(&o.kubeconfig)
	app.Flag("snapshot", "Read OCL objects offline from this YAML/JSON file or directory tree (a capture, oc get -o yaml output, a must-gather) or a must-gather archive (.tar, .tar.gz) instead of a cluster.").StringVar(&o.snapshot)
	app.Flag("example", "Use the examples built into the binary, no cluster needed: the exporter, diagnose and capture read a small cluster snapshot showing every OCL stage failing at 13:00; review reads another recording, the history of one incident (pool layered's failing Containerfile, fixed at 13:22, lifecycle seed004-containerfile-failure).").BoolVar(&o.example)
	app.Flag("now", "Evaluate a snapshot (--snapshot, --example) at the current time instead of the time it was captured (its capture records' time; the example's is 2025-10-17T13:00:00Z), which ages, \"since\" durations and time limits are otherwise relative to.").BoolVar(&o.now)
	app.Flag("mco.namespace", "Namespace of the Machine Config Operator (secrets, build Jobs and pods).").Default(snapshot.DefaultNamespace).StringVar(&o.namespace)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").StringVar(&o.metricsPath)
	app.Flag("web.max-requests", "Maximum number of parallel scrape requests; 0 disables the limit.").Default("40").IntVar(&o.maxRequests)
	app.Flag("web.max-connections", "Maximum number of open connections per listen address; past it new ones wait until one closes. 0 disables the cap.").Default("512").IntVar(&o.maxConnections)
	app.Flag("collector.build-history", "MachineOSBuilds exported per MachineOSConfig besides the current one (the MCO never prunes successful builds).").
		Default(strconv.Itoa(collector.DefaultOptions.BuildHistory)).IntVar(&o.collector.BuildHistory)
	app.Flag("auth.kubernetes", "Require a Kubernetes bearer token on every path but /healthz and /readyz: a TokenReview authenticates it and a SubjectAccessReview checks the HTTP verb on the path as a nonResourceURL (get /metrics), like kube-rbac-proxy. Needs a cluster: not with --snapshot or --example.").
		BoolVar(&o.authKubernetes)
	app.Flag("auth.kubernetes.cache-ttl", "How long an --auth.kubernetes decision is reused for the same token, verb and path.").
		Default(server.DefaultAuthCacheTTL.String()).DurationVar(&o.authCacheTTL)
	app.Flag("auth.kubernetes.audience", "With --auth.kubernetes, accept only tokens issued for this audience (TokenReview spec.audiences); repeatable. Default: the API server's own audience, which service account tokens carry.").
		StringsVar(&o.authAudiences)
	app.Flag("collector.render-interval", "How far the metrics a scrape serves may lag the cluster. While the cluster changes, the OCL metrics are rendered just before each scrape expected from its scrapers' last ones, not on a timer, and a scrape that finds the latest render older than this renders them itself.").
		Default("1s").DurationVar(&o.renderInterval)
	app.Flag("web.port-forward-address", "Also serve /status, and nothing else, without TLS or authentication, on this loopback address (127.0.0.1:PORT or [::1]:PORT), for `oc port-forward`: in a pod, only whoever may port-forward to it reaches it. The runbooks' first command reads it. Default: none.").
		StringVar(&o.portForward)
	app.Flag("web.enable-pprof", "Serve Go's profiles (heap, CPU, goroutines) under /debug/pprof/, behind the same TLS and auth as the metrics. Off by default.").
		BoolVar(&o.pprof)
	o.web = kingpinflag.AddFlags(app, defaultAddress)
	app.GetFlag("web.listen-address").Help(listenAddressHelp)
	flag.AddFlags(app, o.log)
	app.GetFlag("log.level").IsSetByUser(&o.logLevelSet)
	addCommands(app, &o.tool)
	nameParseErrors(app)
	return app, o
}

// run runs the command line args: a subcommand once, else the exporter
// until ctx ends.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return usageError(args, err)
	}
	o.log.Writer = stderr
	if o.command != serveCommand && !o.logLevelSet {
		_ = o.log.Level.Set("warn") // a fixed, valid level
	}
	logger := promslog.New(o.log)
	routeKlog(logger)
	if tool, ok := tools[o.command]; ok {
		return tool(ctx, o, logger)
	}
	return runServe(ctx, o, logger)
}

// evaluationClock is the time a view is evaluated at: a snapshot's capture
// time (the example's for --example) unless --now, else the current time.
func evaluationClock(o *options, src *source.Source) func() time.Time {
	at := src.CapturedAt()
	if o.example {
		at = examples.Captured
	}
	if o.now || at.IsZero() {
		return time.Now
	}
	return func() time.Time { return at }
}

// noteEvaluatedNow says, once, that a snapshot recording no capture time
// (no capture record's time, no must-gather timestamp file) is evaluated
// at the current time: its builds' and rollouts' ages are then ages now.
func noteEvaluatedNow(o *options, src *source.Source, logger *slog.Logger) {
	if o.snapshot != "" && !o.now && src.CapturedAt().IsZero() {
		logger.Warn("the snapshot records no capture time: evaluated at the current time; --time=<RFC 3339> evaluates it when it was taken",
			"snapshot", o.snapshot)
	}
}

// openClients returns what the informers read through and, live, the
// configuration of the API server (nil offline). A snapshot is read until
// ctx ends.
func openClients(ctx context.Context, o *options, logger *slog.Logger) (source.Backend, *rest.Config, error) {
	switch {
	case o.example:
		objs, err := snapshot.Load(examples.Snapshot, "snapshot", logger)
		if err != nil {
			return nil, nil, fmt.Errorf("the built-in example snapshot: %w", err)
		}
		logger.Info("serving the built-in example snapshot")
		mem, err := snapshot.NewMemory(objs)
		return mem, nil, err
	case o.snapshot != "":
		logger.Info("reading a snapshot offline", "snapshot", o.snapshot)
		mem, err := snapshot.OpenSnapshotIn(ctx, o.snapshot, o.namespace, logger)
		return mem, nil, err
	}
	cfg, err := source.RESTConfig(o.kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	api, err := kubeapi.New(cfg, name+"/"+version.Version)
	if err != nil {
		return nil, nil, err
	}
	clients, err := source.NewClients(api, logger)
	return clients, cfg, err
}
