package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeCluster answers TokenReviews from a token table and
// SubjectAccessReviews from a (user, verb, path) allow list, and counts calls.
type fakeCluster struct {
	users        map[string]authnv1.UserInfo // token -> user
	allowed      map[string]bool             // "user verb path"
	fail         atomic.Bool                 // the API server errors
	tokenReviews atomic.Int32
	sars         atomic.Int32
	mu           sync.Mutex
	lastSAR      authzv1.SubjectAccessReviewSpec
}

func newFakeCluster() *fakeCluster {
	return &fakeCluster{
		users: map[string]authnv1.UserInfo{
			"prometheus-token": {
				Username: "system:serviceaccount:openshift-monitoring:prometheus-k8s", UID: "uid-1",
				Groups: []string{"system:serviceaccounts", "system:authenticated"},
				Extra:  map[string]authnv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"prometheus-k8s-0"}},
			},
			"developer-token": {Username: "developer", Groups: []string{"system:authenticated"}},
		},
		allowed: map[string]bool{"system:serviceaccount:openshift-monitoring:prometheus-k8s get /metrics": true},
	}
}

// clientset adapts a client-go clientset, here the fake one, to Reviewer.
type clientset struct{ kubernetes.Interface }

func (c clientset) CreateTokenReview(ctx context.Context, tr *authnv1.TokenReview) (*authnv1.TokenReview, error) {
	return c.AuthenticationV1().TokenReviews().Create(ctx, tr, metav1.CreateOptions{})
}

func (c clientset) CreateSubjectAccessReview(ctx context.Context, sar *authzv1.SubjectAccessReview) (*authzv1.SubjectAccessReview, error) {
	return c.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
}

func (f *fakeCluster) client() *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		f.tokenReviews.Add(1)
		if f.fail.Load() {
			return true, nil, errors.New("connection refused")
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview).DeepCopy()
		if u, ok := f.users[tr.Spec.Token]; ok {
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: u}
		} else {
			tr.Status = authnv1.TokenReviewStatus{Error: "invalid bearer token"}
		}
		return true, tr, nil
	})
	c.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		f.sars.Add(1)
		if f.fail.Load() {
			return true, nil, errors.New("connection refused")
		}
		sar := a.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview).DeepCopy()
		f.mu.Lock()
		f.lastSAR = sar.Spec
		f.mu.Unlock()
		if na := sar.Spec.NonResourceAttributes; na != nil && sar.Spec.ResourceAttributes == nil {
			sar.Status.Allowed = f.allowed[sar.Spec.User+" "+na.Verb+" "+na.Path]
		}
		if !sar.Status.Allowed {
			sar.Status.Reason = "no RBAC policy matched"
		}
		return true, sar, nil
	})
	return c
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type authFixture struct {
	cluster *fakeCluster
	clock   *clock
	auth    *KubernetesAuth
	handler http.Handler
	logs    *bytes.Buffer
	served  atomic.Int32
}

func newAuthFixture(t *testing.T, size int) *authFixture {
	t.Helper()
	fx := &authFixture{cluster: newFakeCluster(), clock: &clock{t: time.Unix(1_700_000_000, 0)}, logs: &bytes.Buffer{}}
	auth, err := NewKubernetesAuth(KubernetesAuthConfig{
		Client: clientset{fx.cluster.client()}, CacheTTL: time.Minute, NegativeTTL: time.Minute, CacheSize: size, Now: fx.clock.now,
		Logger: slog.New(slog.NewTextHandler(fx.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	fx.auth = auth
	fx.handler = auth.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fx.served.Add(1)
		fmt.Fprintln(w, "served")
	}))
	return fx
}

func (fx *authFixture) do(method, path, authorization string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	fx.handler.ServeHTTP(rec, req)
	return rec
}

func TestKubernetesAuthDecisions(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, authorization string
		want                              int
		wantReviews                       int32 // TokenReviews
		wantSARs                          int32
	}{
		{"no token", "GET", "/metrics", "", http.StatusUnauthorized, 0, 0},
		{"basic auth is no bearer token", "GET", "/metrics", "Basic dXNlcjpwYXNz", http.StatusUnauthorized, 0, 0},
		{"empty bearer token", "GET", "/metrics", "Bearer  ", http.StatusUnauthorized, 0, 0},
		{"invalid token", "GET", "/metrics", "Bearer made-up", http.StatusUnauthorized, 1, 0},
		{"valid token, no RBAC", "GET", "/metrics", "Bearer developer-token", http.StatusForbidden, 1, 1},
		{"valid token, RBAC allows", "GET", "/metrics", "Bearer prometheus-token", http.StatusOK, 1, 1},
		{"scheme is case insensitive", "GET", "/metrics", "bearer prometheus-token", http.StatusOK, 1, 1},
		{"allowed verb is get only", "POST", "/metrics", "Bearer prometheus-token", http.StatusForbidden, 1, 1},
		{"allowed path is /metrics only", "GET", "/", "Bearer prometheus-token", http.StatusForbidden, 1, 1},
		{"healthz open", "GET", "/healthz", "", http.StatusOK, 0, 0},
		{"readyz open", "GET", "/readyz", "", http.StatusOK, 0, 0},
		{"readyz open with a bad token", "GET", "/readyz", "Bearer made-up", http.StatusOK, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newAuthFixture(t, 0)
			rec := fx.do(tc.method, tc.path, tc.authorization)
			if rec.Code != tc.want {
				t.Fatalf("%s %s: %d %q, want %d", tc.method, tc.path, rec.Code, rec.Body.String(), tc.want)
			}
			if got := fx.served.Load() == 1; got != (tc.want == http.StatusOK) {
				t.Errorf("the protected handler ran: %v", got)
			}
			if tc.want == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if got := fx.cluster.tokenReviews.Load(); got != tc.wantReviews {
				t.Errorf("TokenReviews: %d, want %d", got, tc.wantReviews)
			}
			if got := fx.cluster.sars.Load(); got != tc.wantSARs {
				t.Errorf("SubjectAccessReviews: %d, want %d", got, tc.wantSARs)
			}
		})
	}
}

func TestKubernetesAuthReviewsTheTokensUser(t *testing.T) {
	fx := newAuthFixture(t, 0)
	if rec := fx.do("GET", "/metrics", "Bearer prometheus-token"); rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	got := fx.cluster.lastSAR
	want := fx.cluster.users["prometheus-token"]
	if got.User != want.Username || got.UID != want.UID || strings.Join(got.Groups, ",") != strings.Join(want.Groups, ",") {
		t.Errorf("SubjectAccessReview user %q uid %q groups %v, want %+v", got.User, got.UID, got.Groups, want)
	}
	if v := got.Extra["authentication.kubernetes.io/pod-name"]; len(v) != 1 || v[0] != "prometheus-k8s-0" {
		t.Errorf("SubjectAccessReview extra %v", got.Extra)
	}
	if got.ResourceAttributes != nil || got.NonResourceAttributes == nil || *got.NonResourceAttributes != (authzv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}) {
		t.Errorf("SubjectAccessReview attributes %+v %+v, want nonResourceURL get /metrics", got.ResourceAttributes, got.NonResourceAttributes)
	}
	rec := fx.do("GET", "/metrics", "Bearer developer-token")
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `"developer" may not get /metrics`) {
		t.Errorf("403 body %q should name the user, the verb and the path", rec.Body)
	}
}

func TestKubernetesAuthCachesDecisions(t *testing.T) {
	fx := newAuthFixture(t, 0)
	calls := func() (int32, int32) { return fx.cluster.tokenReviews.Load(), fx.cluster.sars.Load() }
	for i := range 5 {
		if rec := fx.do("GET", "/metrics", "Bearer prometheus-token"); rec.Code != http.StatusOK {
			t.Fatalf("scrape %d: %d", i, rec.Code)
		}
		if rec := fx.do("GET", "/metrics", "Bearer made-up"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("scrape %d: %d", i, rec.Code)
		}
		if rec := fx.do("GET", "/metrics", "Bearer developer-token"); rec.Code != http.StatusForbidden {
			t.Fatalf("scrape %d: %d", i, rec.Code)
		}
		fx.clock.advance(10 * time.Second)
	}
	if tr, sar := calls(); tr != 3 || sar != 2 {
		t.Fatalf("within the TTL: %d TokenReviews and %d SubjectAccessReviews, want 3 and 2", tr, sar)
	}
	fx.clock.advance(time.Minute)
	fx.do("GET", "/metrics", "Bearer prometheus-token")
	if tr, sar := calls(); tr != 4 || sar != 3 {
		t.Fatalf("after the TTL: %d TokenReviews and %d SubjectAccessReviews, want 4 and 3", tr, sar)
	}
}

func TestKubernetesAuthCacheIsBounded(t *testing.T) {
	fx := newAuthFixture(t, 2)
	for i := range 10 {
		fx.do("GET", "/metrics", fmt.Sprintf("Bearer made-up-%d", i))
	}
	if n := fx.auth.negative.len(); n != 2 {
		t.Errorf("cache holds %d decisions, want the bound 2", n)
	}
	// The least recently used decision went first: token 9 is still
	// cached, token 0 is reviewed again.
	before := fx.cluster.tokenReviews.Load()
	for _, tok := range []string{"made-up-9", "made-up-0"} {
		fx.do("GET", "/metrics", "Bearer "+tok)
	}
	if got := fx.cluster.tokenReviews.Load() - before; got != 1 {
		t.Errorf("%d TokenReviews for one cached and one evicted token, want 1", got)
	}
}

func TestKubernetesAuthAPIErrorsAreNotCached(t *testing.T) {
	fx := newAuthFixture(t, 0)
	fx.cluster.fail.Store(true)
	for range 2 {
		if rec := fx.do("GET", "/metrics", "Bearer prometheus-token"); rec.Code != http.StatusInternalServerError {
			t.Fatalf("API server down: %d, want 500", rec.Code)
		}
	}
	if got := fx.cluster.tokenReviews.Load(); got != 2 {
		t.Errorf("%d TokenReviews, want 2: an error must not be cached", got)
	}
	fx.cluster.fail.Store(false)
	if rec := fx.do("GET", "/metrics", "Bearer prometheus-token"); rec.Code != http.StatusOK {
		t.Errorf("API server back: %d, want 200", rec.Code)
	}
}

func TestKubernetesAuthNeverLogsOrKeepsTheToken(t *testing.T) {
	fx := newAuthFixture(t, 0)
	fx.do("GET", "/metrics", "Bearer made-up")
	fx.do("GET", "/metrics", "Bearer developer-token")
	fx.cluster.fail.Store(true)
	fx.do("GET", "/", "Bearer prometheus-token")
	logs := fx.logs.String()
	if logs == "" {
		t.Fatal("expected debug and warning logs")
	}
	for _, tok := range []string{"made-up", "developer-token", "prometheus-token"} {
		if strings.Contains(logs, tok) {
			t.Errorf("the logs contain the token %q:\n%s", tok, logs)
		}
	}
}

// heldReviewer answers every review as allowed for prometheus once
// release is closed, counting the TokenReviews it was sent.
type heldReviewer struct {
	release chan struct{}
	reviews atomic.Int32
}

func (h *heldReviewer) CreateTokenReview(_ context.Context, tr *authnv1.TokenReview) (*authnv1.TokenReview, error) {
	h.reviews.Add(1)
	<-h.release
	tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "prometheus"}}
	return tr, nil
}

func (h *heldReviewer) CreateSubjectAccessReview(_ context.Context, sar *authzv1.SubjectAccessReview) (*authzv1.SubjectAccessReview, error) {
	sar.Status.Allowed = true
	return sar, nil
}

// TestKubernetesAuthSharesConcurrentReviews runs in a synctest bubble: once
// every scrape is blocked (synctest.Wait), all eight are inside the
// authenticator together, and one TokenReview must serve them all.
func TestKubernetesAuthSharesConcurrentReviews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reviewer := &heldReviewer{release: make(chan struct{})}
		a, err := NewKubernetesAuth(KubernetesAuthConfig{Client: reviewer})
		if err != nil {
			t.Fatal(err)
		}
		h := a.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		codes := make(chan int, 8)
		for range cap(codes) {
			go func() {
				req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				req.Header.Set("Authorization", "Bearer prometheus-token")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				codes <- rec.Code
			}()
		}
		synctest.Wait()
		if got := reviewer.reviews.Load(); got != 1 {
			t.Errorf("%d TokenReviews under way for eight concurrent scrapes with one token, want 1", got)
		}
		close(reviewer.release)
		for range cap(codes) {
			if c := <-codes; c != http.StatusOK {
				t.Errorf("concurrent scrape: %d", c)
			}
		}
		if got := reviewer.reviews.Load(); got != 1 {
			t.Errorf("%d TokenReviews in all, want 1", got)
		}
	})
}

func TestNewKubernetesAuthRejectsBadConfig(t *testing.T) {
	if _, err := NewKubernetesAuth(KubernetesAuthConfig{}); err == nil {
		t.Error("no client: want an error")
	}
	if _, err := NewKubernetesAuth(KubernetesAuthConfig{Client: clientset{fake.NewClientset()}, CacheTTL: -time.Second}); err == nil {
		t.Error("negative TTL: want an error")
	}
}
