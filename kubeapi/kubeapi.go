// Package kubeapi is the exporter's Kubernetes API client: one REST client
// per API group it calls, over one shared transport, decoding with a scheme
// that knows only the kinds the exporter reads. The generated clientsets
// register every kind of every group at init and link a typed client and
// apply configuration for each; this package is what keeps them, and most
// of the binary's size and resident memory, out of the exporter.
package kubeapi

import (
	"context"
	"fmt"
	"net/http"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

type group struct {
	gv       schema.GroupVersion
	protobuf bool
	kinds    []runtime.Object
}

// groups are the group versions the exporter calls and the kinds it sends
// or decodes in each: the reviews --auth.kubernetes makes, and the kinds
// of every resource it reads whole (snapshot.Resources(); the metadata
// client decodes the others itself). Built-in groups are read as
// protobuf, which costs the API server and the exporter less than JSON;
// CRDs only speak JSON.
var groups = func() []group {
	out := []group{
		{authnv1.SchemeGroupVersion, true, []runtime.Object{&authnv1.TokenReview{}, &authnv1.SelfSubjectReview{}}},
		{authzv1.SchemeGroupVersion, true, []runtime.Object{&authzv1.SubjectAccessReview{}}},
	}
	at := map[schema.GroupVersion]int{}
	for _, r := range snapshot.Resources() {
		if r.MetadataOnly {
			continue
		}
		gv := r.GVR.GroupVersion()
		i, ok := at[gv]
		if !ok {
			i, at[gv] = len(out), len(out)
			out = append(out, group{gv: gv, protobuf: r.CRD == ""})
		}
		out[i].kinds = append(out[i].kinds, r.NewObject(), r.NewList())
	}
	return out
}()

var (
	// Scheme knows the kinds in groups, with the meta kinds (options,
	// Status, WatchEvent) of each group version.
	Scheme = newScheme()
	// Codecs encode and decode Scheme's kinds as JSON and protobuf.
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec turns list options into query parameters.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, g := range groups {
		s.AddKnownTypes(g.gv, g.kinds...)
		metav1.AddToGroupVersion(s, g.gv)
	}
	return s
}

// Client talks to one API server.
type Client struct {
	config *rest.Config
	http   *http.Client
	rest   map[schema.GroupVersion]*rest.RESTClient
}

// The rate limits of each group's client when the configuration sets
// none. client-go's defaults (5 requests/s, bursts of 10) throttled the
// first sync: a list read in pages is a request per page, and 635 pages of
// events took 128 s. The first sync of 10,000 nodes in pages of 250 is
// about 100 requests, within one burst; the API server's priority and
// fairness, not the client, protects the server.
const (
	QPS   = 50
	Burst = 100
)

// New builds a client for every group version in groups, all sharing one
// HTTP transport, identified to the API server as userAgent.
func New(cfg *rest.Config, userAgent string) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = QPS, Burst
	}
	h, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the API server's HTTP client: %w", err)
	}
	c := &Client{config: cfg, http: h, rest: map[schema.GroupVersion]*rest.RESTClient{}}
	for _, g := range groups {
		gc := rest.CopyConfig(cfg)
		gv := g.gv
		gc.GroupVersion, gc.APIPath = &gv, "/apis"
		if gv.Group == "" {
			gc.APIPath = "/api"
		}
		gc.NegotiatedSerializer = Codecs.WithoutConversion()
		if g.protobuf {
			gc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
			gc.ContentType = "application/vnd.kubernetes.protobuf"
		}
		rc, err := rest.RESTClientForConfigAndClient(gc, h)
		if err != nil {
			return nil, fmt.Errorf("creating the %s client: %w", gv, err)
		}
		c.rest[gv] = rc
	}
	return c, nil
}

// REST is the client of one group version in groups; it panics on any
// other, which is a programming error.
func (c *Client) REST(gv schema.GroupVersion) rest.Interface {
	rc, ok := c.rest[gv]
	if !ok {
		panic(fmt.Sprintf("kubeapi: no client for %s: snapshot.Resources() reads no resource of it whole", gv))
	}
	return rc
}

// Metadata is a client of the metadata-only API (names, labels and
// annotations of any resource) over the same transport.
func (c *Client) Metadata() (metadata.Interface, error) {
	m, err := metadata.NewForConfigAndClient(c.config, c.http)
	if err != nil {
		return nil, fmt.Errorf("creating the metadata client: %w", err)
	}
	return m, nil
}

// CreateTokenReview asks the API server who a bearer token belongs to.
func (c *Client) CreateTokenReview(ctx context.Context, tr *authnv1.TokenReview) (*authnv1.TokenReview, error) {
	out := &authnv1.TokenReview{}
	err := c.REST(authnv1.SchemeGroupVersion).Post().Resource("tokenreviews").Body(tr).Do(ctx).Into(out)
	return out, err
}

// CreateSubjectAccessReview asks the API server whether a user may do
// something.
func (c *Client) CreateSubjectAccessReview(ctx context.Context, sar *authzv1.SubjectAccessReview) (*authzv1.SubjectAccessReview, error) {
	out := &authzv1.SubjectAccessReview{}
	err := c.REST(authzv1.SchemeGroupVersion).Post().Resource("subjectaccessreviews").Body(sar).Do(ctx).Into(out)
	return out, err
}

// WhoAmI asks the API server which user the client's credentials
// authenticate as (a SelfSubjectReview, served since Kubernetes 1.28,
// OpenShift 4.15); it needs no permission.
func (c *Client) WhoAmI(ctx context.Context) (string, error) {
	out := &authnv1.SelfSubjectReview{}
	err := c.REST(authnv1.SchemeGroupVersion).Post().Resource("selfsubjectreviews").Body(&authnv1.SelfSubjectReview{}).Do(ctx).Into(out)
	return out.Status.UserInfo.Username, err
}
