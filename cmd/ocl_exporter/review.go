package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
	"github.com/ocl-exporter/ocl_exporter/review"
	"github.com/ocl-exporter/ocl_exporter/source"
)

const reviewCommand = "review"

// reviewOptions are review's flags.
type reviewOptions struct {
	prometheus      string
	from, to        string
	cluster         string
	bearerTokenFile string
	caFile          string
	insecure        bool
	timeout         time.Duration
}

// couldNotReview is review's exit status when it wrote no report.
const couldNotReview = 2

// maxSecretBytes bounds a token or CA file.
const maxSecretBytes = 1 << 20

func addReviewCommand(app *kingpin.Application, o *toolOptions) {
	r := app.Command(reviewCommand, "Review an OCL incident from history: read the exporter's series and the OCL alerts over a window from Prometheus, Thanos Query or the OpenShift monitoring querier, and write a timeline per pool with time to detect, time to resolve, durations, nodes affected and retries. Exit 0 with a report (\"no incident\" included), 2 when it could not review.")
	r.Flag("prometheus", "Base URL of a Prometheus-compatible query API, e.g. http://localhost:9090 or https://thanos-querier-openshift-monitoring.apps.example.com.").Required().StringVar(&o.review.prometheus)
	r.Flag("from", "Start of the window: RFC 3339 (2025-10-17T12:30:00Z), or a duration before --to (6h).").Default("6h").StringVar(&o.review.from)
	r.Flag("to", "End of the window: RFC 3339, or now.").Default("now").StringVar(&o.review.to)
	r.Flag("pool", "Review only this MachineConfigPool (alerts without a pool are kept).").StringVar(&o.pool)
	r.Flag("cluster", "Review only the series with this cluster label, through a querier that federates clusters (Thanos Query).").StringVar(&o.review.cluster)
	r.Flag("output", "Report format: text, markdown (for a review document) or json (docs/review.md).").Short('o').Default("text").EnumVar(&o.output, review.Formats...)
	r.Flag("bearer-token-file", "File holding a bearer token to send, read on every query. Default: the token of the cluster configuration when it has one (--kubeconfig, the in-cluster service account, $KUBECONFIG or ~/.kube/config after oc login), none otherwise.").StringVar(&o.review.bearerTokenFile)
	r.Flag("tls.ca-file", "CA certificates to verify the querier's certificate with, instead of the system's.").StringVar(&o.review.caFile)
	r.Flag("tls.insecure-skip-verify", "Do not verify the querier's certificate.").BoolVar(&o.review.insecure)
	r.Flag("query-timeout", "Time allowed for each range query.").Default("2m").DurationVar(&o.review.timeout)
}

// reviewWindow reads --from and --to at now.
func reviewWindow(o reviewOptions, now time.Time) (review.Window, error) {
	to := now
	if o.to != "now" {
		t, err := time.Parse(time.RFC3339, o.to)
		if err != nil {
			return review.Window{}, flagError("to", "%q is neither RFC 3339 nor now", o.to)
		}
		to = t
	}
	from, err := time.Parse(time.RFC3339, o.from)
	if err != nil {
		d, derr := time.ParseDuration(o.from)
		if derr != nil || d <= 0 {
			return review.Window{}, flagError("from", "%q is neither RFC 3339 nor a positive duration", o.from)
		}
		from = to.Add(-d)
	}
	return review.NewWindow(from, to)
}

// runReview writes one report, or explains why it could not.
func runReview(ctx context.Context, o *options) error {
	w, err := reviewWindow(o.tool.review, time.Now())
	if err != nil {
		return exitCode{couldNotReview, err}
	}
	rt, err := reviewTransport(o)
	if err != nil {
		return exitCode{couldNotReview, err}
	}
	if u, err := url.Parse(o.tool.review.prometheus); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitCode{couldNotReview, flagError("prometheus", "%q is not an http(s) URL", o.tool.review.prometheus)}
	}
	v1api, err := review.NewAPI(o.tool.review.prometheus, api.Config{RoundTripper: rt})
	if err != nil {
		return exitCode{couldNotReview, err}
	}
	f := review.Filter{Pool: o.tool.pool, Cluster: o.tool.review.cluster}
	ctx, cancel := context.WithTimeout(ctx, 15*o.tool.review.timeout)
	defer cancel()
	series, err := review.Fetch(ctx, timedQuerier{review.API{V1: v1api}, o.tool.review.timeout}, w, f)
	if err != nil {
		return exitCode{couldNotReview, fmt.Errorf("review: %w", err)}
	}
	r, err := review.Build(series, w, f)
	if err != nil {
		return exitCode{couldNotReview, fmt.Errorf("review of %s to %s: %w", w.From.UTC().Format(time.RFC3339), w.To.UTC().Format(time.RFC3339), err)}
	}
	return review.Render(stdout, r, o.tool.output)
}

// timedQuerier bounds each query.
type timedQuerier struct {
	review.Querier
	timeout time.Duration
}

func (q timedQuerier) QueryRange(ctx context.Context, query string, r v1.Range) (model.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	return q.Querier.QueryRange(ctx, query, r)
}

// reviewTransport is the HTTP transport to the querier: its TLS options and
// the bearer token, from --bearer-token-file or the kubeconfig.
func reviewTransport(o *options) (http.RoundTripper, error) {
	ro := o.tool.review
	// InsecureSkipVerify only on --tls.insecure-skip-verify, the user's choice.
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: ro.insecure}
	if ro.caFile != "" {
		pem, err := readSmallFile("tls.ca-file", ro.caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, flagError("tls.ca-file", "%s holds no PEM certificate", ro.caFile)
		}
		tlsConfig.RootCAs = pool
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = tlsConfig
	token, err := reviewToken(o)
	if err != nil {
		return nil, err
	}
	if token == nil {
		return base, nil
	}
	return bearer{token: token, next: base}, nil
}

// reviewToken returns a function reading the bearer token, or nil for none.
func reviewToken(o *options) (func() (string, error), error) {
	if path := o.tool.review.bearerTokenFile; path != "" {
		if _, err := readSmallFile("bearer-token-file", path); err != nil {
			return nil, err
		}
		return func() (string, error) {
			b, err := readSmallFile("bearer-token-file", path)
			return strings.TrimSpace(string(b)), err
		}, nil
	}
	cfg, err := source.RESTConfig(o.kubeconfig)
	switch {
	case err != nil && o.kubeconfig != "":
		return nil, err
	case err != nil:
		return nil, nil // no cluster configuration: no token
	}
	switch {
	case cfg.BearerToken != "":
		t := cfg.BearerToken
		return func() (string, error) { return t, nil }, nil
	case cfg.BearerTokenFile != "":
		return func() (string, error) {
			b, err := readSmallFile("kubeconfig tokenFile", cfg.BearerTokenFile)
			return strings.TrimSpace(string(b)), err
		}, nil
	}
	return nil, nil
}

func readSmallFile(flag, path string) ([]byte, error) {
	f, err := regularfile.Open(path, maxSecretBytes)
	if err != nil {
		return nil, flagError(flag, "%v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, flagError(flag, "%v", err)
	}
	return b, nil
}

// bearer sends a bearer token with every request.
type bearer struct {
	token func() (string, error)
	next  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	t, err := b.token()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t)
	return b.next.RoundTrip(req)
}
