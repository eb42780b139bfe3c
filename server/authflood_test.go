package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/ocl-exporter/ocl_exporter/internal/wait"
)

// fakeAPIServer stands in for the kube-apiserver's review endpoints over
// HTTP, so the review client, its rate limiter and its connection pool are
// the real ones. Every review takes latency (of a synctest bubble's clock
// when served in one).
type fakeAPIServer struct {
	latency             time.Duration
	inflight, maxFlight atomic.Int32
	reviews             atomic.Int32
	mu                  sync.Mutex
	audiences           []string
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if n <= m || f.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(f.latency)
	// client-go sends built-in kinds as protobuf: answer in kind.
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), r.Header.Get("Content-Type"))
	if !ok {
		http.Error(w, "unsupported media type", http.StatusUnsupportedMediaType)
		return
	}
	body, _ := io.ReadAll(r.Body)
	obj, _, err := info.Serializer.Decode(body, nil, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch o := obj.(type) {
	case *authnv1.TokenReview:
		f.reviews.Add(1)
		f.mu.Lock()
		f.audiences = o.Spec.Audiences
		f.mu.Unlock()
		if strings.HasPrefix(o.Spec.Token, "valid-") {
			o.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "system:serviceaccount:openshift-monitoring:prometheus-k8s"}, Audiences: o.Spec.Audiences}
		} else {
			o.Status = authnv1.TokenReviewStatus{Error: "invalid bearer token"}
		}
	case *authzv1.SubjectAccessReview:
		o.Status.Allowed = true
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", info.MediaType)
	w.WriteHeader(http.StatusCreated)
	_ = codecs.EncoderForVersion(info.Serializer, obj.GetObjectKind().GroupVersionKind().GroupVersion()).Encode(obj, w)
}

var codecs = serializer.NewCodecFactory(scheme.Scheme)

// TestTokenFloodDoesNotBreakAValidScrape: 50 clients send made-up tokens
// as fast as they can; meanwhile a scrape with a valid token never seen
// before must be answered 200 within 1s, reviews in flight stay bounded,
// and the flood gets 401 or a quick 429, never a 500. It runs in a
// synctest bubble, the API server's reviews taking 5ms of the bubble's
// clock, so the flood, the review queue and the client's rate limiter
// play out the same on a loaded machine as on an idle one: 1s is the
// bubble's, not the machine's.
func TestTokenFloodDoesNotBreakAValidScrape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &fakeAPIServer{latency: 5 * time.Millisecond}
		pipes := servePipes(t, api)
		client, err := NewReviewClient(&rest.Config{Host: "http://kube-apiserver", Dial: pipes.dial, Proxy: noProxy}, "ocl_exporter-test")
		if err != nil {
			t.Fatal(err)
		}
		auth, err := NewKubernetesAuth(KubernetesAuthConfig{Client: client, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)), Audiences: []string{"ocl-exporter"}})
		if err != nil {
			t.Fatal(err)
		}
		exporter := auth.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "metrics") }))
		scrape := func(token string) int {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			exporter.ServeHTTP(rec, req)
			return rec.Code
		}

		flood, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var sent atomic.Int32
		var mu sync.Mutex
		codes := map[int]int{}
		for w := range 50 {
			wg.Go(func() {
				for i := 0; flood.Err() == nil; i++ {
					code := scrape(fmt.Sprintf("made-up-%d-%d", w, i))
					sent.Add(1)
					mu.Lock()
					codes[code]++
					mu.Unlock()
				}
			})
		}
		// Let the flood build up, then scrape with fresh valid tokens.
		wait.For(t, 20*time.Second, "the flood to send 500 requests", func() error {
			if n := sent.Load(); n < 500 {
				return fmt.Errorf("%d sent", n)
			}
			return nil
		})
		var slowest time.Duration
		for i := range 5 {
			start := time.Now()
			if code := scrape(fmt.Sprintf("valid-rotated-%d", i)); code != http.StatusOK {
				t.Errorf("valid scrape %d during the flood: %d", i, code)
			}
			took := time.Since(start)
			if took > time.Second {
				t.Errorf("valid scrape %d during the flood took %s, over 1s", i, took)
			}
			slowest = max(slowest, took)
		}
		stop()
		wg.Wait()

		if m := api.maxFlight.Load(); m > DefaultMaxConcurrentReviews+1 { // +1: a SubjectAccessReview of a valid scrape
			t.Errorf("%d reviews in flight at once, want at most %d", m, DefaultMaxConcurrentReviews)
		}
		for c, n := range codes {
			if c != http.StatusUnauthorized && c != http.StatusTooManyRequests {
				t.Errorf("the flood got %d %d times", c, n)
			}
		}
		api.mu.Lock()
		defer api.mu.Unlock()
		if len(api.audiences) != 1 || api.audiences[0] != "ocl-exporter" {
			t.Errorf("TokenReview audiences %v, want [ocl-exporter]", api.audiences)
		}
		t.Logf("flood: %d requests, %d TokenReviews, answers %v; the slowest valid scrape took %s", sent.Load(), api.reviews.Load(), codes, slowest)
	})
}

func noProxy(*http.Request) (*url.URL, error) { return nil, nil }

// pipeListener serves HTTP over in-memory pipes (net.Pipe), which a
// synctest bubble can wait on, unlike sockets.
type pipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

// servePipes serves h over a pipeListener until the test ends.
func servePipes(t *testing.T, h http.Handler) *pipeListener {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l
}

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// TestFloodCannotEvictValidDecisions: made-up tokens fill only the
// negative cache.
func TestFloodCannotEvictValidDecisions(t *testing.T) {
	fx := newAuthFixture(t, 4)
	if rec := fx.do("GET", "/metrics", "Bearer prometheus-token"); rec.Code != http.StatusOK {
		t.Fatal(rec.Code)
	}
	for i := range 100 {
		fx.do("GET", "/metrics", fmt.Sprintf("Bearer made-up-%d", i))
	}
	before := fx.cluster.tokenReviews.Load()
	if rec := fx.do("GET", "/metrics", "Bearer prometheus-token"); rec.Code != http.StatusOK {
		t.Fatal(rec.Code)
	}
	if fx.cluster.tokenReviews.Load() != before {
		t.Error("the valid token's decision was evicted by made-up tokens")
	}
}

// TestInvalidTokensAreRefusedBriefly: a refusal is cached for the
// negative TTL only.
func TestInvalidTokensAreRefusedBriefly(t *testing.T) {
	fx := newAuthFixture(t, 0)
	a, err := NewKubernetesAuth(KubernetesAuthConfig{Client: clientset{fx.cluster.client()}, Now: fx.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Wrap(http.NotFoundHandler())
	do := func() {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "Bearer made-up")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	do()
	do()
	fx.clock.advance(DefaultAuthNegativeTTL)
	do()
	if got := fx.cluster.tokenReviews.Load(); got != 2 {
		t.Errorf("%d TokenReviews, want 2: one cached refusal, then one after the negative TTL", got)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
