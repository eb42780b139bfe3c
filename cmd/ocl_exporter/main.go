// Command ocl_exporter exports the state of OpenShift On-Cluster Layering
// (MachineOSConfigs, MachineOSBuilds and the rollout of layered images) as
// Prometheus metrics, live from a cluster or offline from a snapshot.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/examples"
	"github.com/ocl-exporter/ocl_exporter/server"
	"github.com/ocl-exporter/ocl_exporter/source"
)

const name = "ocl_exporter"

// defaultAddress sits outside 9100-9999, which the Prometheus port
// allocation list has filled, and below the NodePort range (30000-32767).
const defaultAddress = ":29100"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

type options struct {
	kubeconfig, snapshot, namespace, metricsPath string
	example                                      bool
	maxRequests                                  int
	renderInterval                               time.Duration
	authKubernetes                               bool
	authCacheTTL                                 time.Duration
	authAudiences                                []string
	collector                                    collector.Options
	web                                          *web.FlagConfig
	log                                          *promslog.Config
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	app := kingpin.New(name, "Prometheus exporter for OpenShift On-Cluster Layering (image mode).")
	app.UsageWriter(stderr)
	app.ErrorWriter(stderr)
	app.Version(version.Print(name))
	app.HelpFlag.Short('h')
	o := &options{log: &promslog.Config{}}
	app.Flag("kubeconfig", "Path to a kubeconfig file. Default: the in-cluster service account, else $KUBECONFIG or ~/.kube/config.").StringVar(&o.kubeconfig)
	app.Flag("snapshot", "Read OCL objects offline from this YAML/JSON file or directory tree (oc get -o yaml output, a must-gather) instead of a cluster.").StringVar(&o.snapshot)
	app.Flag("example", "Serve the example snapshot built into the binary: a small cluster showing every OCL stage, no cluster needed.").BoolVar(&o.example)
	app.Flag("mco.namespace", "Namespace of the Machine Config Operator (secrets, build Jobs and pods).").Default(source.DefaultNamespace).StringVar(&o.namespace)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").StringVar(&o.metricsPath)
	app.Flag("web.max-requests", "Maximum number of parallel scrape requests; 0 disables the limit.").Default("40").IntVar(&o.maxRequests)
	app.Flag("collector.build-history", "MachineOSBuilds exported per MachineOSConfig besides the current one (the MCO never prunes successful builds).").
		Default(fmt.Sprint(collector.DefaultOptions.BuildHistory)).IntVar(&o.collector.BuildHistory)
	app.Flag("auth.kubernetes", "Require a Kubernetes bearer token on every path but /healthz and /readyz: a TokenReview authenticates it and a SubjectAccessReview checks the HTTP verb on the path as a nonResourceURL (get /metrics), like kube-rbac-proxy. Needs a cluster: not with --snapshot or --example.").
		BoolVar(&o.authKubernetes)
	app.Flag("auth.kubernetes.cache-ttl", "How long an --auth.kubernetes decision is reused for the same token, verb and path.").
		Default(server.DefaultAuthCacheTTL.String()).DurationVar(&o.authCacheTTL)
	app.Flag("auth.kubernetes.audience", "With --auth.kubernetes, accept only tokens issued for this audience (TokenReview spec.audiences); repeatable. Default: the API server's own audience, which service account tokens carry.").
		StringsVar(&o.authAudiences)
	app.Flag("collector.render-interval", "How often the OCL metrics are re-rendered when the cluster changed; scrapes serve the latest render, so this bounds how far the metrics lag the cluster.").
		Default("1s").DurationVar(&o.renderInterval)
	o.web = kingpinflag.AddFlags(app, defaultAddress)
	flag.AddFlags(app, o.log)
	nameParseErrors(app)
	if _, err := app.Parse(args); err != nil {
		return nil, err
	}
	if err := validate(o); err != nil {
		return nil, err
	}
	return o, nil
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	o.log.Writer = stderr
	logger := promslog.New(o.log)
	routeKlog(logger)

	// Everything that can be wrong in the configuration fails here, before
	// the first informer starts.
	if *o.web.WebConfigFile != "" {
		if err := web.Validate(*o.web.WebConfigFile); err != nil {
			return fmt.Errorf("--web.config.file %q: %w", *o.web.WebConfigFile, err)
		}
	}
	clients, err := openClients(o, logger)
	if err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		versioncollector.NewCollector(name),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	src := source.New(clients, o.namespace, logger, reg)
	renderer, err := collector.NewRenderer(collector.New(src, o.collector), src, logger)
	if err != nil {
		return err
	}

	handler, err := server.Handler(server.Config{
		MetricsPath: o.metricsPath, Registry: reg, Rendered: renderer,
		Readiness: readiness{src, renderer}, Logger: logger, MaxRequests: o.maxRequests,
	})
	if err != nil {
		return err
	}
	if o.authKubernetes {
		// Reviews get a client and rate limiter of their own: sharing the
		// informers' let a token flood starve both.
		cfg, err := source.RESTConfig(o.kubeconfig)
		if err != nil {
			return err
		}
		reviews, err := server.NewReviewClient(cfg, name+"/"+version.Version)
		if err != nil {
			return err
		}
		auth, err := server.NewKubernetesAuth(server.KubernetesAuthConfig{Client: reviews, CacheTTL: o.authCacheTTL, Audiences: o.authAudiences, Logger: logger})
		if err != nil {
			return err
		}
		handler = auth.Wrap(handler)
		logger.Info("scrapes need a Kubernetes bearer token allowed to get the metrics path", "open", server.PublicPaths)
	}
	src.Run(ctx)
	go renderer.Run(ctx, o.renderInterval)
	logger.Info("starting "+name, "version", version.Info(), "build_context", version.BuildContext(), "namespace", o.namespace)

	srv := server.NewHTTPServer(handler, server.DefaultTimeouts)
	errc := make(chan error, 1)
	go func() { errc <- web.ListenAndServe(srv, o.web, logger) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// readiness is ready once the metrics served reflect a synced source.
type readiness struct {
	*source.Source
	renderer *collector.Renderer
}

func (r readiness) Ready() bool { return r.renderer.Ready() }

func (r readiness) RenderFailure() string { return r.renderer.Failure() }

func openClients(o *options, logger *slog.Logger) (*source.Clients, error) {
	switch {
	case o.example:
		objs, err := source.Load(examples.Snapshot, "snapshot", logger)
		if err != nil {
			return nil, fmt.Errorf("the built-in example snapshot: %w", err)
		}
		logger.Info("serving the built-in example snapshot")
		return source.FakeClients(objs)
	case o.snapshot != "":
		logger.Info("reading a snapshot offline", "snapshot", o.snapshot)
		return source.OpenSnapshot(o.snapshot, logger)
	}
	cfg, err := source.RESTConfig(o.kubeconfig)
	if err != nil {
		return nil, err
	}
	logger.Info("watching a cluster", "server", cfg.Host)
	return source.NewClients(cfg, name+"/"+version.Version)
}
