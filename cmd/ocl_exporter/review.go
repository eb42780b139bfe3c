package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/alecthomas/units"
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
	selector        string
	bearerTokenFile string
	caFile          string
	insecure        bool
	plaintextToken  bool
	timeout         time.Duration
	headerTimeout   time.Duration
	maxBytes        units.Base2Bytes
	maxSeries       int
	windowSet       bool
}

// couldNotReview is review's exit status when it wrote no report.
const couldNotReview = 2

// maxSecretBytes bounds a token or CA file.
const maxSecretBytes = 1 << 20

func addReviewCommand(app *kingpin.Application, o *toolOptions) {
	r := app.Command(reviewCommand, "Review an OCL incident from history: read the exporter's series and the OCL alerts over a window from Prometheus, Thanos Query or the OpenShift monitoring querier, and write a timeline per pool with time to detect, time to resolve, durations, nodes affected and retries. --example reviews a recorded history built into the binary, no querier needed. Exit 0 with a report (\"no incident\" included), 2 when it could not review (docs/review.md).")
	r.Flag("prometheus", "Base URL of a Prometheus-compatible query API, e.g. http://localhost:9090 or https://thanos-querier-openshift-monitoring.apps.example.com. A user and password in it are sent as the bearer token is. Required unless --example.").StringVar(&o.review.prometheus)
	r.Flag("from", "Start of the window: RFC 3339 (2025-10-17T12:30:00Z), or a duration before --to (6h).").Default("6h").IsSetByUser(&o.review.windowSet).StringVar(&o.review.from)
	r.Flag("to", "End of the window: RFC 3339, or now.").Default("now").IsSetByUser(&o.review.windowSet).StringVar(&o.review.to)
	r.Flag("pool", "Review only this MachineConfigPool (alerts without a pool are kept).").StringVar(&o.pool)
	r.Flag("cluster", "Review only the series with this cluster label, through a querier that federates clusters (Thanos Query).").StringVar(&o.review.cluster)
	r.Flag("selector", "Label matchers that select the exporter's series among those of the same names the querier holds (not applied to ALERTS), written as inside a PromQL selector's braces: job=\"ocl-exporter\", namespace=~\"a|b\". Anything else is refused.").Default(review.DefaultSelector).StringVar(&o.review.selector)
	r.Flag("output", "Report format: text, markdown (for a review document) or json (docs/review.md).").Short('o').Default("text").EnumVar(&o.output, review.Formats...)
	r.Flag("bearer-token-file", "File holding a bearer token to send, read on every query. Default: the token of the cluster configuration when it has one (--kubeconfig, the in-cluster service account, $KUBECONFIG or ~/.kube/config after oc login), none otherwise. Sent to the --prometheus host only, never over http:// without --allow-plaintext-token.").StringVar(&o.review.bearerTokenFile)
	r.Flag("allow-plaintext-token", "Send the bearer token, or the password of --prometheus, over plain http:// (anyone on the path can read it and act as its user). Without it, review refuses to send either to an http:// URL.").BoolVar(&o.review.plaintextToken)
	r.Flag("tls.ca-file", "CA certificates to verify the querier's certificate with, instead of the system's.").StringVar(&o.review.caFile)
	r.Flag("tls.insecure-skip-verify", "Do not verify the querier's certificate.").BoolVar(&o.review.insecure)
	r.Flag("query-timeout", "Time allowed for each range query, answer included.").Default("2m").DurationVar(&o.review.timeout)
	r.Flag("response-header-timeout", "Time allowed for the querier to start answering a query (its response headers): a querier that accepts connections but never answers fails after it.").Default("30s").DurationVar(&o.review.headerTimeout)
	r.Flag("max-response-bytes", "Largest answer read for one query (e.g. 32MiB, 1GiB); a larger one fails the review.").Default(units.Base2Bytes(review.DefaultMaxResponseBytes).String()).BytesVar(&o.review.maxBytes)
	r.Flag("max-series", "Most series read for one query; more fail the review.").Default(strconv.Itoa(review.DefaultMaxSeries)).IntVar(&o.review.maxSeries)
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
func runReview(ctx context.Context, o *options, logger *slog.Logger) error {
	ro := o.tool.review
	w, err := reviewWindow(ro, time.Now())
	if err != nil {
		return exitError{couldNotReview, err}
	}
	var rt http.RoundTripper
	if o.example {
		if ro.prometheus != "" || ro.windowSet || ro.cluster != "" || ro.bearerTokenFile != "" {
			return exitError{couldNotReview, errors.New("--example reviews the history built into the binary: drop --prometheus, --from, --to, --cluster and --bearer-token-file")}
		}
		rec, err := review.Example()
		if err != nil {
			return exitError{couldNotReview, err}
		}
		srv := httptest.NewServer(rec.Handler())
		defer srv.Close()
		ro.prometheus, w, rt = srv.URL, rec.Window(), srv.Client().Transport
		logger.Info("reviewing the built-in example history", "lifecycle", rec.Lifecycle)
	} else {
		u, user, err := querierURL(ro.prometheus)
		if err != nil {
			return exitError{couldNotReview, err}
		}
		if rt, err = reviewTransport(o, u, user, logger); err != nil {
			return exitError{couldNotReview, err}
		}
		ro.prometheus = u.String()
	}
	v1api, err := review.NewAPI(ro.prometheus, review.LimitBody(rt, review.Bounds{Bytes: int64(ro.maxBytes), Series: ro.maxSeries}))
	if err != nil {
		return exitError{couldNotReview, err}
	}
	f := review.Filter{Pool: o.tool.pool, Cluster: ro.cluster, Selector: ro.selector}
	ctx, cancel := context.WithTimeout(ctx, 15*ro.timeout)
	defer cancel()
	series, warnings, err := review.Fetch(ctx, timedQuerier{review.API{V1: v1api, MaxSeries: ro.maxSeries}, ro.timeout}, w, f)
	if err != nil {
		return exitError{couldNotReview, fmt.Errorf("review: %w", err)}
	}
	r, err := review.Build(series, warnings, w, f)
	if err != nil {
		return exitError{couldNotReview, fmt.Errorf("review of %s to %s: %w", w.From.UTC().Format(time.RFC3339), w.To.UTC().Format(time.RFC3339), err)}
	}
	return review.Render(stdout, r, o.tool.output)
}

// timedQuerier bounds each query.
type timedQuerier struct {
	review.Querier
	timeout time.Duration
}

func (q timedQuerier) QueryRange(ctx context.Context, query string, r v1.Range) (model.Matrix, v1.Warnings, error) {
	ctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	return q.Querier.QueryRange(ctx, query, r)
}

// querierURL reads --prometheus: the URL to query, without the user and
// password it may hold, which are credentials like a token. No message
// shows the password, even of a URL that does not parse.
func querierURL(raw string) (*url.URL, *url.Userinfo, error) {
	if raw == "" {
		return nil, nil, flagError("prometheus", "required (or --example)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, flagError("prometheus", "%q is not an http(s) URL", redactURL(raw))
	}
	user := u.User
	u.User = nil
	return u, user, nil
}

// redactURL is raw with its password masked, as url.URL.Redacted masks
// it; of a URL that does not parse, where the user information ends is
// not known (a password may hold '/' or '@'), so everything from the
// scheme to the last '@' is masked.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + len("://")
	}
	at := strings.LastIndex(raw, "@")
	if at < start {
		return raw
	}
	return raw[:start] + "xxxxx" + raw[at:]
}

// reviewTransport is the HTTP transport to the querier u: its TLS
// options, the time to its first answer, and the credentials (the user
// and password of --prometheus, or a bearer token from
// --bearer-token-file or the cluster configuration), for u's host only
// and over https unless --allow-plaintext-token.
func reviewTransport(o *options, u *url.URL, user *url.Userinfo, logger *slog.Logger) (http.RoundTripper, error) {
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
	base.ResponseHeaderTimeout = ro.headerTimeout
	header, what, err := reviewCredentials(o, u, user, logger)
	switch {
	case err != nil:
		return nil, err
	case header == nil:
		return base, nil
	}
	if u.Scheme == "http" && !ro.plaintextToken {
		return nil, flagError("prometheus", "%s is plain http: review will not send %s where anyone on the path can read it; use https, or --allow-plaintext-token if this path is private (a port-forward to localhost)", u, what)
	}
	return review.Credentials{Scheme: u.Scheme, Host: u.Host, Header: header, Next: base, Log: logger}, nil
}

// reviewCredentials returns the Authorization header to send and what it
// holds, or nil for none: the user and password of --prometheus, else a
// bearer token.
func reviewCredentials(o *options, u *url.URL, user *url.Userinfo, logger *slog.Logger) (func() (string, error), string, error) {
	if user == nil {
		token, from, err := reviewToken(o, u, logger)
		if token == nil || err != nil {
			return nil, "", err
		}
		return review.BearerHeader(from, token), "the bearer token", nil
	}
	if o.tool.review.bearerTokenFile != "" {
		return nil, "", flagError("prometheus", "holds a user and password and --bearer-token-file a token: give one of them")
	}
	return review.BasicHeader(user), "the password of --prometheus", nil
}

// reviewToken returns a function reading the bearer token and where it
// comes from, or nil for none. A token file is read on every query and
// wins over an inline token, as client-go's bearer round tripper reads
// rest.Config's BearerTokenFile (clientcmd sets both from a kubeconfig's
// tokenFile, BearerToken as read, newline included). The cluster's token
// is meant for the cluster's own querier: sent anywhere else, it is said.
func reviewToken(o *options, querier *url.URL, logger *slog.Logger) (func() (string, error), string, error) {
	if path := o.tool.review.bearerTokenFile; path != "" {
		if _, err := readSmallFile("bearer-token-file", path); err != nil {
			return nil, "", err
		}
		return tokenFromFile("bearer-token-file", path), "--bearer-token-file " + path, nil
	}
	// Its token file is read here, with checks, on every query.
	cfg, err := source.LoadRESTConfig(o.kubeconfig)
	switch {
	case err != nil && o.kubeconfig != "":
		return nil, "", err
	case err != nil:
		return nil, "", nil // no cluster configuration: no token
	}
	var token func() (string, error)
	var from string
	switch {
	case cfg.BearerTokenFile != "":
		token, from = tokenFromFile("kubeconfig tokenFile", cfg.BearerTokenFile), "the kubeconfig's tokenFile "+cfg.BearerTokenFile
	case cfg.BearerToken != "":
		t := cfg.BearerToken
		token, from = func() (string, error) { return t, nil }, "the kubeconfig's token"
	default:
		return nil, "", nil
	}
	if want := clusterQueriers(cfg.Host); !slices.Contains(want, querier.Hostname()) {
		logger.Warn("sending the cluster's bearer token to a host that is not the cluster's querier; pass --bearer-token-file with a token meant for it if it is not",
			"host", querier.Hostname(), "cluster_querier", strings.Join(want, " or "))
	}
	return token, from, nil
}

// tokenFromFile reads the token in path on every call.
func tokenFromFile(flag, path string) func() (string, error) {
	return func() (string, error) {
		b, err := readSmallFile(flag, path)
		return string(b), err
	}
}

// clusterQueriers are the host names of the querier of the cluster whose
// API server is apiServer: OpenShift's thanos-querier Service, and its
// Route under the cluster's apps domain (api.<cluster domain> serves the
// API, apps.<cluster domain> the routes).
func clusterQueriers(apiServer string) []string {
	out := []string{"thanos-querier.openshift-monitoring.svc", "thanos-querier.openshift-monitoring.svc.cluster.local"}
	u, err := url.Parse(apiServer)
	if err != nil {
		return out
	}
	if domain, ok := strings.CutPrefix(u.Hostname(), "api."); ok {
		out = append(out, "thanos-querier-openshift-monitoring.apps."+domain)
	}
	return out
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

// usageTemplate is kingpin's default with one change: a command's help
// lists its own flags first, then the global ones (kingpin lists them
// mixed, globals first, so review's --prometheus came after forty lines of
// the exporter's flags), and only the global flags that apply to it
// (globalFlagUse).
var usageTemplate = strings.Replace(kingpin.DefaultUsageTemplate, `{{if .Context.Flags -}}
Flags:
{{.Context.Flags|FlagsToTwoColumns|FormatTwoColumns}}
{{end -}}`, `{{if .Context.SelectedCommand -}}
{{if .Context.SelectedCommand.Flags -}}
Flags of {{.Context.SelectedCommand.FullCommand}}:
{{.Context.SelectedCommand.Flags|FlagsToTwoColumns|FormatTwoColumns}}
{{end -}}
Global flags:
{{flagsOf .Context.SelectedCommand .App.Flags|FlagsToTwoColumns|FormatTwoColumns}}
{{else if .Context.Flags -}}
Flags:
{{.Context.Flags|FlagsToTwoColumns|FormatTwoColumns}}
{{end -}}`, 1)
