package review

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// DefaultMaxResponseBytes is --max-response-bytes' default. A review's
// largest answer, one series per node over 1,000 steps, is about 20 KB a
// node: 32 MiB holds a 1,000-node rollout with room to spare, and a
// 1-million-series answer (about 70 MB) is refused after reading 32 MiB.
const DefaultMaxResponseBytes = 32 << 20

// TooLargeError is an answer that went past --max-response-bytes.
type TooLargeError struct {
	Host  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer of %s is larger than --max-response-bytes=%d; narrow the review (--from/--to, --pool, --cluster, --selector) or raise --max-response-bytes", e.Host, e.Limit)
}

// TooManySeriesError is an answer that holds more than --max-series
// series.
type TooManySeriesError struct {
	Where string // the host or the query
	Limit int
}

func (e *TooManySeriesError) Error() string {
	return fmt.Sprintf("the answer of %s holds more than --max-series=%d series; narrow the review (--pool, --cluster, --selector) or raise --max-series", e.Where, e.Limit)
}

// Bounds of one answer.
type Bounds struct {
	Bytes  int64
	Series int
}

// limitBody bounds the bytes and series of every response body.
type limitBody struct {
	next   http.RoundTripper
	bounds Bounds
}

// LimitBody returns next with every response body cut at b.Bytes bytes,
// or at the series past b.Series (counted as the body streams, so that a
// million series are refused after reading b.Series of them, not decoded
// first): a read past a bound fails with a *TooLargeError or a
// *TooManySeriesError. API checks the series again once decoded.
func LimitBody(next http.RoundTripper, b Bounds) http.RoundTripper {
	return limitBody{next: next, bounds: b}
}

func (l limitBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	tooLarge := &TooLargeError{Host: req.URL.Host, Limit: l.bounds.Bytes}
	if resp.ContentLength > l.bounds.Bytes {
		resp.Body.Close()
		return nil, tooLarge
	}
	resp.Body = &limitedReader{ReadCloser: resp.Body, left: l.bounds.Bytes, err: tooLarge,
		series: seriesCounter{limit: l.bounds.Series, err: &TooManySeriesError{Where: req.URL.Host, Limit: l.bounds.Series}}}
	return resp, nil
}

type limitedReader struct {
	io.ReadCloser
	left   int64
	err    error
	series seriesCounter
}

func (r *limitedReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		// One byte more tells a body of exactly limit bytes from a longer one.
		var one [1]byte
		if n, _ := r.ReadCloser.Read(one[:]); n > 0 {
			return 0, r.err
		}
		return r.ReadCloser.Read(p[:0])
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.ReadCloser.Read(p)
	r.left -= int64(n)
	if serr := r.series.add(p[:n]); serr != nil {
		return 0, serr
	}
	return n, err
}

// seriesKey opens each series of a matrix or vector answer. In a JSON
// string its quotes are escaped, so the bytes occur only as the key
// (Prometheus and Thanos write no space before the brace; an answer that
// does is still bounded by API once decoded).
var seriesKey = []byte(`"metric":{`)

// seriesCounter counts the series of an answer as it streams.
type seriesCounter struct {
	limit, seen int
	tail        []byte // the last bytes read, for a key split across reads
	err         error
}

func (c *seriesCounter) add(p []byte) error {
	if c.limit <= 0 {
		return nil
	}
	// A key split across reads: the tail (shorter than the key) and the
	// start of p.
	c.seen += bytes.Count(append(c.tail, p[:min(len(p), len(seriesKey)-1)]...), seriesKey)
	c.seen += bytes.Count(p, seriesKey)
	c.tail = append(c.tail, p[max(0, len(p)-len(seriesKey)+1):]...)
	c.tail = c.tail[max(0, len(c.tail)-len(seriesKey)+1):]
	if c.seen > c.limit {
		return c.err
	}
	return nil
}

// Credentials send the Authorization header Header returns (a bearer
// token, or the user and password --prometheus holds) to Host, over
// Scheme, only: a request to any other host or over another scheme (a
// redirect the client followed, https to http) goes without it, and the
// log says so.
type Credentials struct {
	Scheme, Host string
	Header       func() (string, error)
	Next         http.RoundTripper
	Log          *slog.Logger
}

// ErrCredentials is a credential review could not read or cannot send.
var ErrCredentials = errors.New("cannot send the credentials")

// BearerHeader is the header that sends the token token returns. A token
// is trimmed of surrounding white space, as client-go reads a token file
// (transport.fileTokenSource); one that still holds a character no HTTP
// header carries, or none at all, is refused naming where it came from.
func BearerHeader(from string, token func() (string, error)) func() (string, error) {
	return func() (string, error) {
		t, err := token()
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrCredentials, err)
		}
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			return "", fmt.Errorf("%w: %s holds no token", ErrCredentials, from)
		case !httpguts.ValidHeaderFieldValue(t):
			return "", fmt.Errorf("%w: the token of %s holds a line break or control character, which an HTTP header cannot carry; check what wrote it", ErrCredentials, from)
		}
		return "Bearer " + t, nil
	}
}

// BasicHeader is the header that sends user's name and password.
func BasicHeader(user *url.Userinfo) func() (string, error) {
	password, _ := user.Password()
	h := "Basic " + base64.StdEncoding.EncodeToString([]byte(user.Username()+":"+password))
	return func() (string, error) { return h, nil }
}

// RoundTrip implements http.RoundTripper.
func (c Credentials) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != c.Host || req.URL.Scheme != c.Scheme {
		c.Log.Warn("not sending the credentials to a host or scheme --prometheus does not name", "url", req.URL.Scheme+"://"+req.URL.Host, "prometheus", c.Scheme+"://"+c.Host)
		return c.Next.RoundTrip(req)
	}
	h, err := c.Header()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", h)
	return c.Next.RoundTrip(req)
}

// ErrCrossHostRedirect is a querier's redirect to another host, or to
// another scheme (https to http) on its own.
var ErrCrossHostRedirect = errors.New("redirected to another host")

// ErrRedirectLoop is a querier that redirects more than maxRedirects
// times: to itself, or between http and https behind a proxy.
var ErrRedirectLoop = errors.New("a redirect loop")

// maxRedirects is net/http's default bound.
const maxRedirects = 10

// SameHostRedirects is an http.Client CheckRedirect that follows
// redirects on the host --prometheus names only: the credentials are for
// that host. A redirect elsewhere (a login page, another cluster) fails
// naming the host, so the user can point --prometheus there knowingly.
func SameHostRedirects(host string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && req.URL.Scheme != via[0].URL.Scheme && req.URL.Host == host {
			return fmt.Errorf("%w: %s redirected from %s to %s; review does not follow it", ErrCrossHostRedirect, host, via[0].URL.Scheme, req.URL.Scheme)
		}
		if req.URL.Host != host {
			return fmt.Errorf("%w: %s sent review to %s; credentials go only to the host --prometheus names: give --prometheus=%s if that is the querier", ErrCrossHostRedirect, host, req.URL.Host, (&url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host}).String())
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("%w: %s redirected review %d times, the last time to %s", ErrRedirectLoop, host, len(via), req.URL.Path)
		}
		return nil
	}
}
