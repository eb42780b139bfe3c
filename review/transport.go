package review

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
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

// limitBody bounds the bytes of every response body.
type limitBody struct {
	next  http.RoundTripper
	limit int64
}

// LimitBody returns next with every response body cut at limit bytes: a
// read past it fails with a *TooLargeError.
func LimitBody(next http.RoundTripper, limit int64) http.RoundTripper {
	return limitBody{next: next, limit: limit}
}

func (l limitBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > l.limit {
		resp.Body.Close()
		return nil, &TooLargeError{Host: req.URL.Host, Limit: l.limit}
	}
	resp.Body = &limitedReader{ReadCloser: resp.Body, left: l.limit, err: &TooLargeError{Host: req.URL.Host, Limit: l.limit}}
	return resp, nil
}

type limitedReader struct {
	io.ReadCloser
	left int64
	err  error
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
	return n, err
}

// Bearer sends the token Token returns to Host only: a request to any
// other host (a redirect the client followed) goes without it, and the
// log says so.
type Bearer struct {
	Host  string
	Token func() (string, error)
	Next  http.RoundTripper
	Log   *slog.Logger
}

// RoundTrip implements http.RoundTripper.
func (b Bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != b.Host {
		b.Log.Warn("not sending the bearer token to a host --prometheus does not name", "host", req.URL.Host, "prometheus", b.Host)
		return b.Next.RoundTrip(req)
	}
	t, err := b.Token()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t)
	return b.Next.RoundTrip(req)
}

// ErrCrossHostRedirect is a querier's redirect to another host, or to
// another scheme (https to http) on its own.
var ErrCrossHostRedirect = errors.New("redirected to another host")

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
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}
