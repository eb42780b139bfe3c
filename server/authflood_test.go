package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// fakeAPIServer stands in for the kube-apiserver's review endpoints over
// real HTTP, so the review client, its rate limiter and its connection
// pool are the real ones. Every review takes latency.
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
// before must be answered 200 before its 1s deadline, reviews in flight
// stay bounded, and the flood gets 401 or a quick 429, never a 500.
func TestTokenFloodDoesNotBreakAValidScrape(t *testing.T) {
	if raceDetector {
		t.Skip("measures capacity; the race detector slows every request (make test runs it without -race)")
	}
	api := &fakeAPIServer{latency: 5 * time.Millisecond}
	apiServer := httptest.NewServer(api)
	defer apiServer.Close()
	client, err := NewReviewClient(&rest.Config{Host: apiServer.URL}, "ocl_exporter-test")
	if err != nil {
		t.Fatal(err)
	}
	auth, err := NewKubernetesAuth(KubernetesAuthConfig{Client: client, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)), Audiences: []string{"ocl-exporter"}})
	if err != nil {
		t.Fatal(err)
	}
	exporter := httptest.NewServer(auth.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "metrics") })))
	defer exporter.Close()

	scrape := func(ctx context.Context, token string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, exporter.URL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	flood, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	var wg sync.WaitGroup
	var sent atomic.Int32
	codes := sync.Map{}
	for w := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; flood.Err() == nil; i++ {
				code, err := scrape(flood, fmt.Sprintf("made-up-%d-%d", w, i))
				if err == nil {
					sent.Add(1)
					n, _ := codes.LoadOrStore(code, new(atomic.Int32))
					n.(*atomic.Int32).Add(1)
				}
			}
		}()
	}
	// Let the flood build up, then scrape with fresh valid tokens.
	for sent.Load() < 500 && flood.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		code, err := scrape(ctx, fmt.Sprintf("valid-rotated-%d", i))
		cancel()
		if err != nil || code != http.StatusOK {
			t.Errorf("valid scrape %d during the flood: %d %v", i, code, err)
		}
	}
	stop()
	wg.Wait()

	if m := api.maxFlight.Load(); m > DefaultMaxConcurrentReviews+1 { // +1: a SubjectAccessReview of a valid scrape
		t.Errorf("%d reviews in flight at once, want at most %d", m, DefaultMaxConcurrentReviews)
	}
	codes.Range(func(k, v any) bool {
		if c := k.(int); c != http.StatusUnauthorized && c != http.StatusTooManyRequests {
			t.Errorf("the flood got %d %d times", c, v.(*atomic.Int32).Load())
		}
		return true
	})
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.audiences) != 1 || api.audiences[0] != "ocl-exporter" {
		t.Errorf("TokenReview audiences %v, want [ocl-exporter]", api.audiences)
	}
	t.Logf("flood: %d requests, %d TokenReviews", sent.Load(), api.reviews.Load())
}

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
