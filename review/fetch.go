package review

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Querier runs one range query: its series, and the warnings the API
// returned with them (a Thanos partial response). API adapts
// client_golang's v1.API.
type Querier interface {
	QueryRange(ctx context.Context, query string, r v1.Range) (model.Matrix, v1.Warnings, error)
}

// API is a Querier on a Prometheus-compatible HTTP API. MaxSeries bounds
// the series of one answer (0: DefaultMaxSeries); the bytes of an answer
// are bounded by the transport (LimitBody).
type API struct {
	V1        v1.API
	MaxSeries int
}

// DefaultMaxSeries is --max-series' default: a review reads one series
// per build, node or alert of the window, a few thousand in a large
// cluster's worst hour.
const DefaultMaxSeries = 20000

// QueryRange implements Querier.
func (a API) QueryRange(ctx context.Context, query string, r v1.Range) (model.Matrix, v1.Warnings, error) {
	v, warnings, _, err := a.V1.QueryRange(ctx, query, r)
	if err != nil {
		return nil, warnings, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, warnings, fmt.Errorf("query %s: a %s, not a matrix", query, v.Type())
	}
	limit := a.MaxSeries
	if limit <= 0 {
		limit = DefaultMaxSeries
	}
	if len(m) > limit {
		return nil, warnings, &TooManySeriesError{Where: "the querier", Limit: limit}
	}
	return m, warnings, nil
}

// Window is the time range a review reads, and the resolution it reads it
// at.
type Window struct {
	From, To time.Time
	Step     time.Duration
}

// maxPoints bounds the points of one range query (Prometheus refuses more
// than 11,000).
const maxPoints = 1000

// steps are the resolutions a review chooses from: at least the exporter's
// scrape interval, and no more than maxPoints points over the window.
var steps = []time.Duration{
	15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
}

// NewWindow chooses the step for [from, to]: the finest of steps that
// keeps a query under maxPoints points.
func NewWindow(from, to time.Time) (Window, error) {
	if !to.After(from) {
		return Window{}, fmt.Errorf("--to %s is not after --from %s", to.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339))
	}
	w := Window{From: from, To: to, Step: steps[len(steps)-1]}
	for _, s := range steps {
		if to.Sub(from)/s <= maxPoints {
			w.Step = s
			break
		}
	}
	if to.Sub(from)/w.Step > maxPoints {
		return Window{}, fmt.Errorf("the window %s is too long to review: at most %s", to.Sub(from), maxPoints*w.Step)
	}
	return w, nil
}

// Filter narrows a review to a pool, through a federating querier to one
// cluster's series (their external label cluster), and to the exporter's
// series by Selector (label matchers such as job="ocl-exporter", read by
// ParseSelector): a querier may hold series of the same names from other
// jobs.
type Filter struct {
	Pool, Cluster, Selector string
}

// DefaultSelector is --selector's default: the job the bundle's
// ServiceMonitor scrapes, as the OCLExporterDown alert matches it.
const DefaultSelector = `job=~".*ocl-exporter.*"`

// matchers are the label matchers of f, its selector sel parsed, for a
// series with a pool label; cluster-wide alerts have none, which
// pool=~"P|" keeps (P quoted as a regular expression: a pool name is
// matched exactly either way). The alerts are the rules' series, not the
// exporter's: the selector is not theirs.
func (f Filter) matchers(sel []Matcher, alerts bool) string {
	var m []Matcher
	if !alerts {
		m = append(m, sel...)
	}
	if f.Cluster != "" {
		m = append(m, Matcher{"cluster", "=", f.Cluster})
	}
	switch {
	case f.Pool != "" && alerts:
		m = append(m, Matcher{"pool", "=~", regexp.QuoteMeta(f.Pool) + "|"})
	case f.Pool != "":
		m = append(m, Matcher{"pool", "=", f.Pool})
	}
	s := make([]string, len(m))
	for i := range m {
		s[i] = m[i].String()
	}
	return strings.Join(s, ", ")
}

// The queries a review runs, by what they answer. Each takes the maximum
// over the exporter's replicas; %s is the filter's matchers.
var queries = map[string]string{
	qExporter:     `max(ocl_exporter_resource_available{%s})`,
	qPhase:        `max by (pool, machineosbuild, phase) (mosb_build_phase{%s}) == 1`,
	qCreated:      `max by (pool, machineosbuild) (mosb_creation_timestamp_seconds{%s})`,
	qStarted:      `max by (pool, machineosbuild) (mosb_build_start_timestamp_seconds{%s})`,
	qEnded:        `max by (pool, machineosbuild) (mosb_build_end_timestamp_seconds{%s})`,
	qPodFailures:  `max by (pool, machineosbuild) (mosb_build_job_failed_pods{%s}) > 0`,
	qBuildFailure: `max by (pool, machineosbuild, class, excerpt) (mosb_failure_info{%s})`,
	qCurrentBuild: `max by (pool, machineosbuild) (mosc_current_build_info{%s})`,
	qSecret:       `max by (pool, field, secret) (mosc_secret_missing{%s}) == 1`,
	qPoolMissing:  `max by (pool) (mosc_pool_missing{%s}) == 1`,
	qOffTarget:    `max by (pool, node) (node_off_target{%s})`,
	qNodeFailure:  `max by (pool, node, class, excerpt) (node_update_failure_info{%s})`,
	qCondition:    `max by (pool, condition) (ocl_pool_condition{condition=~"Updating|Degraded", status="true", %s}) == 1`,
	qPaused:       `max by (pool) (ocl_pool_paused{%s}) == 1`,
	qAlerts:       `max without (alertstate, prometheus_replica) (ALERTS{alertstate="firing", alertname=~"OCL.+", %s})`,
}

// fallbacks answer a query from the series an older exporter wrote, when
// the window holds none of the newer one's. node_off_target has a series
// only for the nodes in flight, so a review of a large cluster reads those
// instead of every node's at every step; history written before it
// existed still reads the mismatch series. A window in which no node moved
// runs both, and finds nothing in either.
var fallbacks = map[string]string{
	qOffTarget: `max by (pool, node) ({__name__=~"node_layered_image_mismatch|node_config_mismatch", %s}) == 1`,
}

const (
	qExporter     = "exporter"
	qPhase        = "phase"
	qCreated      = "created"
	qStarted      = "started"
	qEnded        = "ended"
	qPodFailures  = "podFailures"
	qBuildFailure = "buildFailure"
	qCurrentBuild = "currentBuild"
	qSecret       = "secret"
	qPoolMissing  = "poolMissing"
	qOffTarget    = "offTarget"
	qNodeFailure  = "nodeFailure"
	qCondition    = "condition"
	qPaused       = "paused"
	qAlerts       = "alerts"
)

// Series are the results of the queries, by name.
type Series map[string]model.Matrix

// Fetch runs every query over w, and returns the series with the
// warnings the API returned, each distinct one once with its count,
// bounded (warningTally). An error names the query and, for the failures
// a user can fix (the address, the credentials, a bound), the fix.
func Fetch(ctx context.Context, q Querier, w Window, f Filter) (Series, []string, error) {
	sel, err := ParseSelector(f.Selector)
	if err != nil {
		return nil, nil, fmt.Errorf("--selector %w", err)
	}
	out := Series{}
	var warnings warningTally
	r := v1.Range{Start: w.From, End: w.To, Step: w.Step}
	for _, name := range slices.Sorted(maps.Keys(queries)) {
		fm := f
		if name == qExporter {
			fm.Pool = "" // the exporter's own series have no pool
		}
		m, ws, err := queryRange(ctx, q, queries[name], fm.matchers(sel, name == qAlerts), r)
		warnings.add(ws)
		if fallback, ok := fallbacks[name]; ok && err == nil && len(m) == 0 {
			m, ws, err = queryRange(ctx, q, fallback, fm.matchers(sel, false), r)
			warnings.add(ws)
		}
		if err != nil {
			return nil, nil, err
		}
		out[name] = m
	}
	return out, warnings.lines(), nil
}

// queryRange runs the query tmpl with matchers over r.
func queryRange(ctx context.Context, q Querier, tmpl, matchers string, r v1.Range) (model.Matrix, v1.Warnings, error) {
	query := expand(tmpl, matchers)
	m, ws, err := q.QueryRange(ctx, query, r)
	if err != nil {
		return nil, ws, explain(err, query)
	}
	return m, ws, nil
}

// expand is the query tmpl with the filter's matchers.
func expand(tmpl, matchers string) string {
	query := fmt.Sprintf(tmpl, matchers)
	query = strings.ReplaceAll(query, "{}", "")
	return strings.ReplaceAll(query, ", }", "}")
}

// Queries are the queries a review runs, its fallbacks included, without
// a filter: what a history must hold for a review to read it (the
// promtool lifecycle tests the e2e suite reviews hold these series).
func Queries() []string {
	var out []string
	for _, set := range []map[string]string{queries, fallbacks} {
		for _, tmpl := range set {
			out = append(out, expand(tmpl, ""))
		}
	}
	slices.Sort(out)
	return out
}

// explain turns a query's error into one sentence with the fix. Only a
// failed dial or name lookup is blamed on reachability: the client wraps
// every failure of a request, a refused credential or a redirect loop
// included, in a *url.Error, which is a net.Error too.
func explain(err error, query string) error {
	var apiErr *v1.Error
	var tooLarge *TooLargeError
	var tooMany *TooManySeriesError
	var dial *net.OpError
	var dns *net.DNSError
	var untrusted *tls.CertificateVerificationError
	switch {
	case errors.As(err, &tooLarge), errors.As(err, &tooMany), errors.Is(err, ErrCrossHostRedirect):
		return fmt.Errorf("query %s: %w", query, err)
	case errors.Is(err, ErrCredentials):
		return err
	case errors.Is(err, ErrRedirectLoop):
		return fmt.Errorf("%w: the querier redirects in a loop; give --prometheus the URL it ends at (a browser shows it), or fix the proxy or route in front of it", err)
	case strings.Contains(err.Error(), "timeout awaiting response headers"):
		return fmt.Errorf("%w: the querier accepted the connection but sent no answer within --response-header-timeout; it is overloaded or hung (raise --response-header-timeout for a slow querier)", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: the query did not finish within --query-timeout; narrow the window or raise --query-timeout", err)
	case errors.As(err, &apiErr) && apiErr.Type == v1.ErrClient && strings.Contains(apiErr.Msg, "401"):
		return fmt.Errorf("%w: the querier refused the credentials (401); pass --bearer-token-file with a token it accepts", err)
	case errors.As(err, &apiErr) && apiErr.Type == v1.ErrClient && strings.Contains(apiErr.Msg, "403"):
		return fmt.Errorf("%w: the querier forbids these queries (403); the token's identity needs permission to query metrics (on OpenShift, the cluster-monitoring-view role)", err)
	case errors.As(err, &apiErr) && apiErr.Type == v1.ErrClient && strings.Contains(apiErr.Msg, "404"):
		return fmt.Errorf("%w: no query API at --prometheus (404); give the base URL the API's /api/v1 lives under", err)
	case errors.As(err, &untrusted):
		return fmt.Errorf("%w: the querier's certificate is not trusted; pass --tls.ca-file with the CA that signed it", err)
	case errors.As(err, &dial), errors.As(err, &dns):
		return fmt.Errorf("%w: the querier is not reachable; check --prometheus", err)
	}
	return fmt.Errorf("query %s: %w", query, err)
}

// NewAPI is a v1.API on address through rt, following redirects on
// address's host only (SameHostRedirects).
func NewAPI(address string, rt http.RoundTripper) (v1.API, error) {
	u, err := url.Parse(address)
	if err != nil {
		return nil, fmt.Errorf("--prometheus %q: %w", address, err)
	}
	c, err := api.NewClient(api.Config{Address: address, Client: &http.Client{Transport: rt, CheckRedirect: SameHostRedirects(u.Host)}})
	if err != nil {
		return nil, fmt.Errorf("--prometheus %q: %w", address, err)
	}
	return v1.NewAPI(c), nil
}
