package review

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                               "0s",
		400 * time.Millisecond:          "0s",
		10 * time.Second:                "10s",
		20 * time.Second:                "20s",
		time.Minute:                     "1m",
		2*time.Minute + 30*time.Second:  "2m30s",
		10*time.Minute + 10*time.Second: "10m10s",
		45 * time.Minute:                "45m",
		time.Hour:                       "1h",
		time.Hour + 20*time.Minute:      "1h20m",
		time.Hour + 10*time.Second:      "1h0m10s",
		2*time.Hour + 30*time.Minute + 30*time.Second: "2h30m30s",
		100 * time.Hour:   "100h",
		-90 * time.Second: "-1m30s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// fakePrometheus answers every range query with the exporter's series
// (for the query of ocl_exporter_resource_available) or none, and with
// warnings.
func fakePrometheus(t *testing.T, warnings []string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := model.Matrix{}
		if strings.Contains(r.FormValue("query"), "ocl_exporter_resource_available") {
			m = model.Matrix{present(model.Metric{}, 0, 61, 1)}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "warnings": warnings,
			"data": map[string]any{"resultType": "matrix", "result": m}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func fetchFrom(t *testing.T, url string, rt http.RoundTripper, maxSeries int) (Series, []string, error) {
	t.Helper()
	a, err := NewAPI(url, rt)
	if err != nil {
		t.Fatal(err)
	}
	return Fetch(context.Background(), API{V1: a, MaxSeries: maxSeries}, window, Filter{})
}

// TestPartialAnswersConcludeNothing: a Thanos partial-response warning is
// in every output, and the window never reads "No incident".
func TestPartialAnswersConcludeNothing(t *testing.T) {
	const warning = "No StoreAPIs matched for this query; partial response"
	s, ws, err := fetchFrom(t, fakePrometheus(t, []string{warning}).URL, http.DefaultTransport, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(s, ws, window, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Partial || r.Incident || len(r.Warnings) != 1 {
		t.Fatalf("partial %v, incident %v, warnings %q: want partial, one warning", r.Partial, r.Incident, r.Warnings)
	}
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Render(&b, r, format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "partial response") || strings.Contains(b.String(), "No incident:") {
			t.Errorf("%s: the warning is dropped or no incident is concluded:\n%s", format, b.String())
		}
	}
	// Without the warning, the same answers read "No incident".
	s, ws, _ = fetchFrom(t, fakePrometheus(t, nil).URL, http.DefaultTransport, 0)
	if r, err := Build(s, ws, window, Filter{}); err != nil || r.Partial {
		t.Errorf("a whole answer reads partial: %v", err)
	}
}

// TestImplausibleSamples: NaN, ±Inf, negative or huge counts and times in
// year 300,000 give no negative number, no time JSON cannot write, and a
// warning naming the series.
func TestImplausibleSamples(t *testing.T) {
	b := model.Metric{"pool": "worker", "machineosbuild": "b1"}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -5, 1e300, 1e16} {
		s := Series{
			qExporter:     {present(model.Metric{}, 0, 61, 1)},
			qCreated:      {present(b, 0, 61, v)},
			qStarted:      {present(b, 0, 61, float64(minute(30).Unix()))},
			qEnded:        {present(b, 0, 61, v)},
			qPodFailures:  {present(b, 0, 61, v)},
			qBuildFailure: {present(model.Metric{"pool": "worker", "machineosbuild": "b1", "class": "x"}, 5, 10, 1)},
		}
		// A sample timestamped far outside the window.
		s[qPodFailures][0].Values = append(s[qPodFailures][0].Values, model.SamplePair{Timestamp: model.Time(math.MaxInt64 / 2), Value: 3})
		r, err := Build(s, nil, window, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary.FailedPods < 0 || r.Summary.FailedPods > maxCount {
			t.Errorf("%g: %d failed pods", v, r.Summary.FailedPods)
		}
		bb := r.Pools[0].Builds[0]
		if bb.Duration != nil && *bb.Duration < 0 || bb.Ended != nil || bb.Created != nil {
			t.Errorf("%g: build %+v", v, bb)
		}
		if len(r.Warnings) == 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "mosb_build_end_timestamp_seconds") {
			t.Errorf("%g: warnings %q", v, r.Warnings)
		}
		for _, format := range Formats {
			if err := Render(&bytes.Buffer{}, r, format); err != nil {
				t.Errorf("%g: -o %s: %v", v, format, err)
			}
		}
	}
}

// TestHostileLabels: label values the querier returns cannot move the
// terminal or add markup: escapes are dropped in every format, and in
// markdown no value makes a heading, a link or HTML.
func TestHostileLabels(t *testing.T) {
	evil := "w\x1b[2J\x1b]0;pwned\x07\r\n# Injected <script>alert(1)</script> [x](https://evil.example) \u202eeman"
	b := model.Metric{"pool": model.LabelValue(evil), "machineosbuild": model.LabelValue(evil)}
	s := Series{
		qExporter: {present(model.Metric{}, 0, 61, 1)},
		qPhase:    {present(model.Metric{"pool": b["pool"], "machineosbuild": b["machineosbuild"], "phase": model.LabelValue(evil)}, 0, 61, 1)},
		qBuildFailure: {present(model.Metric{"pool": b["pool"], "machineosbuild": b["machineosbuild"], "class": model.LabelValue(evil),
			"excerpt": model.LabelValue(evil)}, 5, 10, 1)},
		qAlerts: {present(model.Metric{model.AlertNameLabel: model.LabelValue(evil), "severity": model.LabelValue(evil), "pool": b["pool"],
			"reason": model.LabelValue(evil)}, 15, 40, 1)},
	}
	r, err := Build(s, []string{evil}, window, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		var out bytes.Buffer
		if err := Render(&out, r, format); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(out.String(), "\x1b\x07\r\u202e") {
			t.Errorf("%s carries a control or bidi character:\n%q", format, out.String())
		}
		if format != "markdown" {
			continue
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "# OCL incident review") &&
				!strings.HasPrefix(line, "## ") && !strings.HasPrefix(line, "### ") || strings.Contains(line, "# Injected") && !strings.Contains(line, `\# Injected`) && !strings.Contains(line, "`") {
				t.Errorf("a value makes markup: %q", line)
			}
		}
		for _, raw := range []string{"<script>", "[x](https://evil"} {
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.Contains(outsideCode(line), raw) {
					t.Errorf("markdown keeps %q outside code: %q", raw, line)
				}
			}
		}
	}
}

// outsideCode is line without its code spans.
func outsideCode(line string) string {
	var b strings.Builder
	for i, part := range strings.Split(line, "`") {
		if i%2 == 0 {
			b.WriteString(part)
		}
	}
	return b.String()
}

func TestFetchSelectsTheExportersSeries(t *testing.T) {
	var r recorder
	if _, _, err := Fetch(context.Background(), &r, window, Filter{Selector: DefaultSelector, Pool: "p"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range r.queries {
		if strings.Contains(q, DefaultSelector) == strings.Contains(q, "ALERTS") {
			t.Errorf("%s: the selector is on ALERTS or off an exporter series", q)
		}
	}
}

// TestFetchBounds: an answer too large, with too many series, or that
// never starts fails naming the flag that raises the bound.
func TestFetchBounds(t *testing.T) {
	srv := fakePrometheus(t, nil)
	if _, _, err := fetchFrom(t, srv.URL, LimitBody(http.DefaultTransport, Bounds{Bytes: 100}), 0); err == nil || !strings.Contains(err.Error(), "--max-response-bytes=100") {
		t.Errorf("a large answer: %v", err)
	}
	many := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		m := model.Matrix{}
		for i := range 3 {
			m = append(m, present(model.Metric{"node": model.LabelValue(strconv.Itoa(i))}, 0, 1, 1))
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": m}})
	}))
	defer many.Close()
	if _, _, err := fetchFrom(t, many.URL, http.DefaultTransport, 2); err == nil || !strings.Contains(err.Error(), "--max-series=2") {
		t.Errorf("three series: %v", err)
	}
	// Counted as the answer streams, before it is decoded.
	if _, _, err := fetchFrom(t, many.URL, LimitBody(http.DefaultTransport, Bounds{Bytes: 1 << 20, Series: 2}), 1000); err == nil || !strings.Contains(err.Error(), "--max-series=2") {
		t.Errorf("three series, streamed: %v", err)
	}
	hang := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer silent.Close()
	defer close(hang)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 50 * time.Millisecond
	_, _, err := fetchFrom(t, silent.URL, tr, 0)
	if err == nil || !strings.Contains(err.Error(), "--response-header-timeout") || strings.Contains(err.Error(), "not reachable") {
		t.Errorf("a querier that never answers: %v", err)
	}
}

// TestRedirectsStayOnTheHost: a 302 or 307 to another host is refused,
// naming it, and the other host never sees the token.
func TestRedirectsStayOnTheHost(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		named := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, code)
		}))
		host := strings.TrimPrefix(named.URL, "http://")
		rt := Credentials{Scheme: "http", Host: host, Header: secret, Next: http.DefaultTransport, Log: discard}
		_, _, err := fetchFrom(t, named.URL, rt, 0)
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(other.URL, "http://")) || strings.Contains(err.Error(), "not reachable") {
			t.Errorf("%d: %v, want a refusal naming the other host", code, err)
		}
		named.Close()
	}
	// Nor from https to http on the same host.
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+r.URL.Path, http.StatusFound)
	}))
	defer tlsSrv.Close()
	if _, _, err := fetchFrom(t, tlsSrv.URL, tlsSrv.Client().Transport, 0); err == nil || !strings.Contains(err.Error(), "from https to http") {
		t.Errorf("https to http: %v", err)
	}
	// Credentials never go elsewhere, redirect or not.
	rt := Credentials{Scheme: "http", Host: "querier.example", Header: secret, Next: http.DefaultTransport, Log: discard}
	req, _ := http.NewRequest(http.MethodGet, other.URL, nil)
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	for _, a := range leaked {
		if a != "" {
			t.Errorf("the other host got Authorization %q", a)
		}
	}
}

var discard = slog.New(slog.DiscardHandler)

// secret sends the bearer token "secret".
var secret = BearerHeader("test", func() (string, error) { return "secret", nil })

// TestSeriesCounter: the series keys of an answer are counted whatever
// the reads cut them at, and a key inside a label value is not one.
func TestSeriesCounter(t *testing.T) {
	answer := []byte(`{"data":{"result":[{"metric":{"a":"\"metric\":{"},"values":[]},{"metric":{},"values":[]},{"metric":{"x":"y"},"values":[]}]}}`)
	for chunk := 1; chunk <= len(answer); chunk++ {
		c := seriesCounter{limit: 100}
		for i := 0; i < len(answer); i += chunk {
			if err := c.add(answer[i:min(i+chunk, len(answer))]); err != nil {
				t.Fatal(err)
			}
		}
		if c.seen != 3 {
			t.Errorf("reads of %d bytes: %d series, want 3", chunk, c.seen)
		}
	}
}

// TestCredentialsKeepToTheirScheme: Credentials for an https querier add no token
// to a plain http request to the same host, however the client got there.
func TestCredentialsKeepToTheirScheme(t *testing.T) {
	var got []string
	plain := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer plain.Close()
	host := strings.TrimPrefix(plain.URL, "http://")
	for _, scheme := range []string{"https", "http"} {
		rt := Credentials{Scheme: scheme, Host: host, Header: secret, Next: http.DefaultTransport, Log: discard}
		req, _ := http.NewRequest(http.MethodGet, plain.URL, nil)
		if resp, err := rt.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	if want := []string{"", "Bearer secret"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Authorization for https credentials, then http ones: %q, want %q", got, want)
	}
}

// TestFetchNamesTheCause: a redirect loop, a token no header can carry
// and an untrusted certificate are each named, and none is blamed on
// reachability (the client wraps all three in a *url.Error, a net.Error).
func TestFetchNamesTheCause(t *testing.T) {
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
	}))
	defer loop.Close()
	ok := fakePrometheus(t, nil)
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	untrusted.StartTLS()
	defer untrusted.Close()
	newline := BearerHeader("kubeconfig tokenFile /tmp/token", func() (string, error) { return "sha256~abc\ndef\n", nil })
	for _, tc := range []struct {
		name, url string
		rt        http.RoundTripper
		want      string
	}{
		{"redirect loop", loop.URL, http.DefaultTransport, "redirects in a loop"},
		{"token with a line break", ok.URL, Credentials{Scheme: "http", Host: strings.TrimPrefix(ok.URL, "http://"), Header: newline, Next: http.DefaultTransport, Log: discard},
			"the token of kubeconfig tokenFile /tmp/token holds a line break"},
		{"untrusted certificate", untrusted.URL, http.DefaultTransport, "--tls.ca-file"},
	} {
		_, _, err := fetchFrom(t, tc.url, tc.rt, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "not reachable") {
			t.Errorf("%s: %v, want it to say %q and not blame reachability", tc.name, err, tc.want)
		}
	}
}

// TestBearerHeaderTrims: a token file's trailing newline is not sent, as
// client-go reads a token file; an empty one is refused naming it.
func TestBearerHeaderTrims(t *testing.T) {
	h, err := BearerHeader("f", func() (string, error) { return " sha256~abc\n", nil })()
	if err != nil || h != "Bearer sha256~abc" {
		t.Errorf("a token with a newline: %q, %v", h, err)
	}
	if _, err := BearerHeader("the file f", func() (string, error) { return "\n", nil })(); err == nil || !strings.Contains(err.Error(), "the file f holds no token") {
		t.Errorf("an empty token: %v", err)
	}
}

// TestWarningsCountedAndBounded: a warning repeated is shown once with its
// count, and past maxWarnings distinct ones the rest are only counted.
func TestWarningsCountedAndBounded(t *testing.T) {
	sent := []string{"partial response", "partial response"}
	for i := range 2 * maxWarnings {
		sent = append(sent, fmt.Sprintf("store %02d did not answer", i))
	}
	var queries int
	srv := fakePrometheus(t, sent)
	counting := roundTripFunc(func(r *http.Request) (*http.Response, error) { queries++; return http.DefaultTransport.RoundTrip(r) })
	_, ws, err := fetchFrom(t, srv.URL, counting, 0)
	if err != nil {
		t.Fatal(err)
	}
	more := (2*maxWarnings - (maxWarnings - 1)) * queries // the stores past the first maxWarnings-1, in every answer
	want := []string{
		fmt.Sprintf("partial response (%d times)", 2*queries),
		fmt.Sprintf("store 00 did not answer (%d times)", queries),
		fmt.Sprintf("%d more warning(s) not shown: a review shows the first %d distinct warnings", more, maxWarnings),
	}
	if len(ws) != maxWarnings+1 || ws[0] != want[0] || ws[1] != want[1] || ws[len(ws)-1] != want[2] {
		t.Errorf("%d warning lines:\n%s\nwant %d, starting %q and ending %q", len(ws), strings.Join(ws, "\n"), maxWarnings+1, want[:2], want[2])
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
