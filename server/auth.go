package server

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
)

// Defaults of the Kubernetes authentication of scrapes.
const (
	// DefaultAuthCacheTTL is how long a decision is reused: a scrape every
	// 30s costs two API calls a minute, and a revoked binding stops working
	// within this time.
	DefaultAuthCacheTTL = time.Minute
	// DefaultAuthCacheSize bounds the decisions kept (token hash, verb,
	// path), so a flood of made-up tokens cannot grow memory.
	DefaultAuthCacheSize = 1024
	// DefaultAuthNegativeTTL is how long an invalid token stays refused
	// without a new review: long enough that a flood of one made-up token
	// costs one review every few seconds, short enough that a token that
	// was not valid yet (clock skew) soon is.
	DefaultAuthNegativeTTL = 10 * time.Second
	// DefaultMaxConcurrentReviews bounds reviews in flight, so a flood of
	// made-up tokens cannot queue without end or load the API server.
	DefaultMaxConcurrentReviews = 8
	// authReviewTimeout bounds one TokenReview plus SubjectAccessReview.
	authReviewTimeout = 10 * time.Second
	// reviewQueueWait is the longest a request waits for a free review
	// slot before it gets 429: long enough for the queue ahead of a valid
	// scrape during a flood to drain, short of a scrape timeout.
	reviewQueueWait = 2 * time.Second
)

// errBusy: every review slot stayed taken for reviewQueueWait.
var errBusy = errors.New("too many token reviews in flight")

// PublicPaths stay reachable without a token: the kubelet probes them and
// carries no credentials.
var PublicPaths = []string{"/healthz", "/readyz"}

// Reviewer is the part of the Kubernetes API that KubernetesAuth calls
// (kubeapi.Client live).
type Reviewer interface {
	CreateTokenReview(ctx context.Context, tr *authnv1.TokenReview) (*authnv1.TokenReview, error)
	CreateSubjectAccessReview(ctx context.Context, sar *authzv1.SubjectAccessReview) (*authzv1.SubjectAccessReview, error)
}

// KubernetesAuthConfig configures KubernetesAuth.
type KubernetesAuthConfig struct {
	// Client reviews tokens (TokenReview) and access (SubjectAccessReview).
	Client Reviewer
	// CacheTTL is how long a decision is reused; 0 means DefaultAuthCacheTTL.
	CacheTTL time.Duration
	// CacheSize bounds the cached decisions, and separately the cached
	// refusals of invalid tokens; 0 means DefaultAuthCacheSize.
	CacheSize int
	// NegativeTTL is how long an invalid token's refusal is reused; 0
	// means DefaultAuthNegativeTTL.
	NegativeTTL time.Duration
	// MaxConcurrentReviews bounds reviews in flight; 0 means
	// DefaultMaxConcurrentReviews.
	MaxConcurrentReviews int
	// Audiences, when set, are sent with every TokenReview: only tokens
	// issued for one of them are accepted. Empty means the API server's
	// own audience, which service account tokens carry by default.
	Audiences []string
	Logger    *slog.Logger
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

// KubernetesAuth authenticates and authorizes requests the way
// kube-rbac-proxy and kube-state-metrics' auth filter do: the bearer token
// goes to a TokenReview, the user it names to a SubjectAccessReview for the
// lower-cased HTTP method (GET: "get") on the request path as a
// nonResourceURL. No or an invalid token: 401; denied: 403; the API server
// unreachable: 500, not cached; all review slots busy: 429. Decisions are
// cached for a short time under a SHA-256 hash of the token: the token
// itself is neither kept nor logged. Refusals of invalid tokens live in a
// cache of their own, so a flood of made-up tokens cannot evict the
// decisions of valid ones.
type KubernetesAuth struct {
	client    Reviewer
	logger    *slog.Logger
	now       func() time.Time
	ttl       time.Duration
	negTTL    time.Duration
	audiences []string
	cache     *decisionCache
	negative  *decisionCache
	reviews   chan struct{} // a slot per review in flight
	flight    singleflight.Group
}

// NewKubernetesAuth checks the configuration and builds the middleware.
func NewKubernetesAuth(cfg KubernetesAuthConfig) (*KubernetesAuth, error) {
	if cfg.Client == nil {
		return nil, errors.New("kubernetes authentication needs an API client")
	}
	if cfg.CacheTTL < 0 || cfg.CacheSize < 0 || cfg.NegativeTTL < 0 || cfg.MaxConcurrentReviews < 0 {
		return nil, fmt.Errorf("kubernetes authentication: negative cache TTL %s or %s, cache size %d or concurrent reviews %d",
			cfg.CacheTTL, cfg.NegativeTTL, cfg.CacheSize, cfg.MaxConcurrentReviews)
	}
	a := &KubernetesAuth{client: cfg.Client, logger: cfg.Logger, now: cfg.Now, ttl: cfg.CacheTTL, negTTL: cfg.NegativeTTL, audiences: cfg.Audiences}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.ttl == 0 {
		a.ttl = DefaultAuthCacheTTL
	}
	if a.negTTL == 0 {
		a.negTTL = DefaultAuthNegativeTTL
	}
	size := cfg.CacheSize
	if size == 0 {
		size = DefaultAuthCacheSize
	}
	a.cache, a.negative = newDecisionCache(size), newDecisionCache(size)
	slots := cfg.MaxConcurrentReviews
	if slots == 0 {
		slots = DefaultMaxConcurrentReviews
	}
	a.reviews = make(chan struct{}, slots)
	return a, nil
}

// Wrap protects next: every path but PublicPaths needs a token that may
// access it.
func (a *KubernetesAuth) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range PublicPaths {
			if r.URL.Path == p {
				next.ServeHTTP(w, r)
				return
			}
		}
		token, ok := bearerToken(r)
		if !ok {
			unauthorized(w)
			return
		}
		key := decisionKey{token: sha256.Sum256([]byte(token)), verb: strings.ToLower(r.Method), path: r.URL.Path}
		d, err := a.decide(r.Context(), key, token)
		if errors.Is(err, errBusy) {
			a.logger.Debug("refusing a request: every token review slot is busy", "path", key.path)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Too Many Requests: token reviews are saturated, retry later", http.StatusTooManyRequests)
			return
		}
		if err != nil {
			a.logger.Warn("cannot review the scrape's token; is the API server reachable and may the exporter create tokenreviews and subjectaccessreviews?",
				"verb", key.verb, "path", key.path, "err", err)
			http.Error(w, "Internal Server Error: cannot review the token", http.StatusInternalServerError)
			return
		}
		switch {
		case !d.authenticated:
			a.logger.Debug("unauthenticated request", "path", key.path, "reason", d.reason)
			unauthorized(w)
		case !d.allowed:
			a.logger.Debug("forbidden request", "user", d.user, "verb", key.verb, "path", key.path, "reason", d.reason)
			http.Error(w, fmt.Sprintf("Forbidden: user %q may not %s %s", d.user, key.verb, key.path), http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ocl_exporter"`)
	http.Error(w, "Unauthorized", http.StatusUnauthorized)
}

// bearerToken reads "Authorization: Bearer TOKEN" (the scheme is case
// insensitive, RFC 7235).
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// decide answers from the cache, else reviews once for all concurrent
// requests with the same key.
func (a *KubernetesAuth) decide(ctx context.Context, key decisionKey, token string) (decision, error) {
	now := a.now()
	if d, ok := a.cache.get(key, now); ok {
		return d, nil
	}
	if d, ok := a.negative.get(key, now); ok {
		return d, nil
	}
	flightKey := hex.EncodeToString(key.token[:]) + " " + key.verb + " " + key.path
	v, err, _ := a.flight.Do(flightKey, func() (any, error) {
		wait := time.NewTimer(reviewQueueWait)
		defer wait.Stop()
		select {
		case a.reviews <- struct{}{}:
			defer func() { <-a.reviews }()
		case <-wait.C:
			return decision{}, errBusy
		}
		// Detached from the first caller, so its disconnect does not fail
		// the others waiting on the same review.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), authReviewTimeout)
		defer cancel()
		d, err := a.review(ctx, token, key.verb, key.path)
		if err != nil {
			return decision{}, err
		}
		if d.authenticated {
			a.cache.put(key, d, a.now().Add(a.ttl))
		} else {
			a.negative.put(key, d, a.now().Add(a.negTTL))
		}
		return d, nil
	})
	if err != nil {
		return decision{}, err
	}
	return v.(decision), nil
}

func (a *KubernetesAuth) review(ctx context.Context, token, verb, path string) (decision, error) {
	tr, err := a.client.CreateTokenReview(ctx,
		&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token, Audiences: a.audiences}})
	if err != nil {
		return decision{}, fmt.Errorf("tokenreview: %w", err)
	}
	if !tr.Status.Authenticated {
		return decision{reason: tr.Status.Error}, nil
	}
	u := tr.Status.User
	extra := make(map[string]authzv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar, err := a.client.CreateSubjectAccessReview(ctx, &authzv1.SubjectAccessReview{
		Spec: authzv1.SubjectAccessReviewSpec{
			User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
			NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: verb},
		},
	})
	if err != nil {
		return decision{}, fmt.Errorf("subjectaccessreview for %q: %w", u.Username, err)
	}
	reason := sar.Status.Reason
	if sar.Status.EvaluationError != "" {
		reason = strings.TrimSpace(reason + " " + sar.Status.EvaluationError)
	}
	return decision{authenticated: true, allowed: sar.Status.Allowed && !sar.Status.Denied, user: u.Username, reason: reason}, nil
}

type decision struct {
	authenticated, allowed bool
	user, reason           string
}

// decisionKey holds the token's hash, never the token.
type decisionKey struct {
	token      [sha256.Size]byte
	verb, path string
}

type cacheEntry struct {
	key     decisionKey
	d       decision
	expires time.Time
}

// decisionCache is a size-bounded LRU whose entries expire.
type decisionCache struct {
	mu      sync.Mutex
	size    int
	order   *list.List // front: most recently used
	entries map[decisionKey]*list.Element
}

func newDecisionCache(size int) *decisionCache {
	return &decisionCache{size: size, order: list.New(), entries: make(map[decisionKey]*list.Element, size)}
}

func (c *decisionCache) get(k decisionKey, now time.Time) (decision, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[k]
	if !ok {
		return decision{}, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.entries, k)
		return decision{}, false
	}
	c.order.MoveToFront(el)
	return e.d, true
}

func (c *decisionCache) put(k decisionKey, d decision, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		el.Value = &cacheEntry{key: k, d: d, expires: expires}
		c.order.MoveToFront(el)
		return
	}
	c.entries[k] = c.order.PushFront(&cacheEntry{key: k, d: d, expires: expires})
	for c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
}

func (c *decisionCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
