package server

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/ocl-exporter/ocl_exporter/kubeapi"
)

// Client-side rate limit of the review client. client-go's default (5
// QPS, burst 10), shared with the informers, let a flood of made-up tokens
// starve valid scrapes and the informers' relists. Reviews get their own
// limiter, high enough that MaxConcurrentReviews, not the limiter, is what
// bounds them.
const (
	reviewQPS   = 100
	reviewBurst = 200
)

// NewReviewClient is the client for TokenReviews and SubjectAccessReviews:
// its own copy of cfg with its own rate limiter, so reviews and the
// informers never wait on each other.
func NewReviewClient(cfg *rest.Config, userAgent string) (Reviewer, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = reviewQPS, reviewBurst
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(reviewQPS, reviewBurst)
	cfg.Timeout = authReviewTimeout
	c, err := kubeapi.New(cfg, userAgent)
	if err != nil {
		return nil, fmt.Errorf("creating the token review client: %w", err)
	}
	return c, nil
}
