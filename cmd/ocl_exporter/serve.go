package main

// The exporter: the source, the renderer and the HTTP server, from start
// to shutdown.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"k8s.io/client-go/rest"

	"github.com/ocl-exporter/ocl_exporter/collector"
	"github.com/ocl-exporter/ocl_exporter/diagnose"
	"github.com/ocl-exporter/ocl_exporter/server"
	"github.com/ocl-exporter/ocl_exporter/source"
)

// shutdownTimeout bounds how long the servers wait for the requests in
// flight once asked to stop. A scrape is served from the latest render,
// so it takes milliseconds: 5 s leaves a slow client room to finish,
// well inside the 30 s a pod is given after SIGTERM (Kubernetes' default
// terminationGracePeriodSeconds, which deploy/ keeps).
const shutdownTimeout = 5 * time.Second

// renderPoll is how often releaseStartupMemory looks whether the first
// render is out: a tenth of the default --collector.render-interval (1 s),
// so the pages go back soon after, and reading a flag ten times a second
// costs nothing.
const renderPoll = 100 * time.Millisecond

// runServe serves the metrics, the status page and the health endpoints
// until ctx ends or the servers fail. Everything that can be wrong in the
// configuration fails before the first informer starts.
func runServe(ctx context.Context, o *options, logger *slog.Logger) error {
	tuneGC()
	webConfig, err := loadWebConfig(o.web, logger)
	if err != nil {
		return err
	}
	// SIGHUP reloads the web config once serving; it used to end the
	// process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer func() { signal.Stop(hup); close(hup) }()
	e, err := newExporter(ctx, o, logger)
	if err != nil {
		if webConfig != nil {
			webConfig.Close()
		}
		return err
	}
	e.start(ctx, o, logger)
	// server.Serve owns webConfig from here, failing or not.
	serving, err := server.Serve(server.ServeConfig{Handler: e.handler, Timeouts: server.DefaultTimeouts,
		Flags: o.web, WebConfig: webConfig, MaxConns: o.maxConnections, Logger: logger})
	if err != nil {
		return err
	}
	go server.ReloadOn(hup, serving, logger)
	servings := []*server.Serving{serving}
	if o.portForward != "" {
		pf, err := servePortForward(o, e.portForward, logger)
		if err != nil {
			_ = shutdownAll(servings)
			return err
		}
		servings = append(servings, pf)
	}
	return serve(ctx, servings, e.src, e.restConfig)
}

// servePortForward serves h on --web.port-forward-address: plain http
// (the address is loopback; oc port-forward's tunnel runs over the API
// server's TLS), no web config, the same connection cap.
func servePortForward(o *options, h http.Handler, logger *slog.Logger) (*server.Serving, error) {
	addrs, systemd, noConfig := []string{o.portForward}, false, ""
	s, err := server.Serve(server.ServeConfig{Handler: h, Timeouts: server.DefaultTimeouts,
		Flags:    &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &noConfig},
		MaxConns: o.maxConnections, Logger: logger})
	if err != nil {
		return nil, flagError("web.port-forward-address", "%v", err)
	}
	logger.Info("serving /status without authentication on a loopback address, for oc port-forward", "address", o.portForward)
	return s, nil
}

// exporter is what runServe serves: the source, its renderer, and the
// handler of every path.
type exporter struct {
	src        *source.Source
	renderer   *collector.Renderer
	handler    http.Handler
	restConfig *rest.Config // nil offline
	// portForward serves --web.port-forward-address: /status alone, the
	// same handler as handler's, without authentication.
	portForward http.Handler
}

// newExporter wires the source, the collectors and the handler, starting
// nothing.
func newExporter(ctx context.Context, o *options, logger *slog.Logger) (*exporter, error) {
	backend, restConfig, err := openClients(ctx, o, logger)
	if err != nil {
		return nil, err
	}
	// The Go runtime's and the process's metrics are the server's
	// (selfmetrics): they change with every scrape. The registry's change
	// rarely, and it is gathered again only when they did.
	reg := prometheus.NewRegistry()
	reg.MustRegister(versioncollector.NewCollector(name))
	src := source.New(backend, o.namespace, logger, reg)
	o.collector.Now = evaluationClock(o, src)
	noteEvaluatedNow(o, src, logger)
	renderer, err := collector.NewRenderer(collector.New(src, o.collector), src, logger)
	if err != nil {
		return nil, err
	}
	status := server.StatusHandler(statusReport(src, o), src.Generation, logger)
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "ocl_exporter_renders_total",
		Help: "Renders of the OCL metrics: one per scrape at most, after the cluster changed; none while nobody scrapes.",
	}, func() float64 { return float64(renderer.Renders()) }))
	registryGeneration := func() uint64 { return src.MetricsGeneration() + renderer.Renders() }
	handler, err := server.Handler(server.Config{
		MetricsPath: o.metricsPath, Registry: reg, RegistryGeneration: registryGeneration, Rendered: renderer,
		Readiness: readiness{src, renderer}, Logger: logger, MaxRequests: o.maxRequests,
		Status: status, Profiling: o.pprof,
	})
	if err != nil {
		return nil, err
	}
	if o.pprof {
		handler = withPprof(handler)
	}
	if handler, err = withAuth(handler, o, restConfig, logger); err != nil {
		return nil, err
	}
	return &exporter{src: src, renderer: renderer, handler: handler, restConfig: restConfig, portForward: server.PortForwardHandler(status)}, nil
}

// start runs the informers and the renderer until ctx ends.
func (e *exporter) start(ctx context.Context, o *options, logger *slog.Logger) {
	e.src.Run(ctx)
	go e.renderer.Run(ctx, o.renderInterval)
	go releaseStartupMemory(ctx, e.renderer.Ready)
	started := []any{"version", version.Info(), "build_context", version.BuildContext(), "namespace", o.namespace}
	if e.restConfig != nil {
		started = append(started, "server", e.restConfig.Host)
	}
	logger.Info("starting "+name, started...)
}

// serve answers on the listen addresses until ctx ends, the servers fail,
// or, live, the cluster turns out unreachable from the start.
func serve(ctx context.Context, servings []*server.Serving, src *source.Source, restConfig *rest.Config) error {
	errc := make(chan error, len(servings)+1)
	for _, s := range servings {
		go func() { errc <- s.Wait() }()
	}
	if restConfig != nil {
		go func() { errc <- unreachable(ctx, src, restConfig.Host) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return shutdownAll(servings)
	}
}

// shutdownAll shuts the servings down together, within shutdownTimeout.
func shutdownAll(servings []*server.Serving) error {
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	errs := make([]error, len(servings))
	var wg sync.WaitGroup
	for i, s := range servings {
		wg.Go(func() { errs[i] = s.Shutdown(shutdown) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// withAuth puts --auth.kubernetes in front of h, when set.
func withAuth(h http.Handler, o *options, restConfig *rest.Config, logger *slog.Logger) (http.Handler, error) {
	if !o.authKubernetes {
		return h, nil
	}
	// Reviews get a client and rate limiter of their own: sharing the
	// informers' let a token flood starve both.
	reviews, err := server.NewReviewClient(restConfig, name+"/"+version.Version)
	if err != nil {
		return nil, err
	}
	auth, err := server.NewKubernetesAuth(server.KubernetesAuthConfig{Client: reviews, CacheTTL: o.authCacheTTL, Audiences: o.authAudiences, Logger: logger})
	if err != nil {
		return nil, err
	}
	logger.Info("scrapes need a Kubernetes bearer token allowed to get the metrics path", "open", server.PublicPaths)
	return auth.Wrap(h), nil
}

// unreachable returns, live, when the first list of every resource failed
// in a way waiting does not fix (refused, unknown host, 401, an untrusted
// certificate): a misconfigured exporter exits at once naming each cause,
// rather than serve nothing and retry forever. Once anything was read, an
// API server that goes away is waited out; then it blocks until ctx ends.
func unreachable(ctx context.Context, src *source.Source, host string) error {
	var u *source.UnreachableError
	if err := src.WaitReady(ctx); errors.As(err, &u) {
		return fmt.Errorf("cluster %s: %w", host, err)
	}
	<-ctx.Done()
	return nil
}

// loadWebConfig reads --web.config.file once, into the private copy
// exporter-toolkit is pointed at (server.WebConfig); nil without one.
// Checked here, not with the flags: the file is mounted only where the
// exporter runs.
func loadWebConfig(flags *web.FlagConfig, logger *slog.Logger) (*server.WebConfig, error) {
	if *flags.WebConfigFile == "" {
		return nil, nil
	}
	w, err := server.LoadWebConfig(*flags.WebConfigFile, maxWebConfigBytes, logger)
	if err != nil {
		return nil, flagError("web.config.file", "%v", err)
	}
	return w, nil
}

// releaseStartupMemory hands the pages of the initial lists back to the OS
// once the first complete render is out. Those lists are the exporter's
// largest allocation: every object as the API server sends it, before the
// transforms trim it, all resources at once. Without this the Go runtime
// keeps their pages until later collections and its background scavenger
// release them, and the resident memory reads as if they were in use.
func releaseStartupMemory(ctx context.Context, ready func() bool) {
	t := time.NewTicker(renderPoll)
	defer t.Stop()
	for !ready() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	debug.FreeOSMemory()
}

// withPprof serves Go's profiles under /debug/pprof/ and the rest with h.
func withPprof(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/", h)
	return mux
}

// readiness is ready once the metrics served reflect a synced source.
type readiness struct {
	*source.Source
	renderer *collector.Renderer
}

func (r readiness) Ready() bool { return r.renderer.Ready() }

func (r readiness) RenderFailure() string { return r.renderer.Failure() }

// statusReport diagnoses the source's current view for the status page.
// A snapshot is a frozen incident: it is evaluated at its capture time,
// as diagnose does, unless --now.
func statusReport(src *source.Source, o *options) func() *diagnose.Report {
	now := evaluationClock(o, src)
	return func() *diagnose.Report {
		return diagnose.New(src.Cluster(now()), src.Status(), diagnose.Options{RunbookBase: o.tool.runbookBase, Public: true})
	}
}
