package kubeapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// TestReviewsRoundTrip sends a TokenReview and a SubjectAccessReview to a
// server that decodes them as the API server does and answers in kind.
func TestReviewsRoundTrip(t *testing.T) {
	const protobuf = "application/vnd.kubernetes.protobuf"
	info, _ := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), protobuf)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != protobuf {
			t.Errorf("%s %s as %q, want a protobuf POST", r.Method, r.URL, r.Header.Get("Content-Type"))
		}
		body, _ := io.ReadAll(r.Body)
		obj, _, err := Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil { // t.Fatal must not be called from the handler's goroutine
			t.Errorf("decoding the request: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var out runtime.Object
		switch o := obj.(type) {
		case *authnv1.TokenReview:
			if r.URL.Path != "/apis/authentication.k8s.io/v1/tokenreviews" {
				t.Errorf("TokenReview sent to %s", r.URL.Path)
			}
			o.Status = authnv1.TokenReviewStatus{Authenticated: o.Spec.Token == "good", User: authnv1.UserInfo{Username: "prometheus"}}
			out = o
		case *authzv1.SubjectAccessReview:
			if r.URL.Path != "/apis/authorization.k8s.io/v1/subjectaccessreviews" {
				t.Errorf("SubjectAccessReview sent to %s", r.URL.Path)
			}
			o.Status.Allowed = o.Spec.User == "prometheus" && o.Spec.NonResourceAttributes.Path == "/metrics"
			out = o
		}
		b, err := runtime.Encode(Codecs.EncoderForVersion(info.Serializer, obj.GetObjectKind().GroupVersionKind().GroupVersion()), out)
		if err != nil {
			t.Errorf("encoding the answer: %v", err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", protobuf)
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL}, "test")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.CreateTokenReview(context.Background(), &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: "good"}})
	if err != nil || !tr.Status.Authenticated || tr.Status.User.Username != "prometheus" {
		t.Fatalf("TokenReview: %+v, %v", tr, err)
	}
	sar, err := c.CreateSubjectAccessReview(context.Background(), &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: "prometheus", NonResourceAttributes: &authzv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
	}})
	if err != nil || !sar.Status.Allowed {
		t.Fatalf("SubjectAccessReview: %+v, %v", sar, err)
	}
}

// TestRateLimitsFitAFirstSync: without limits of its own in the
// configuration, every group's client allows QPS requests a second in
// bursts of Burst, not client-go's 5 and 10, which throttled a first sync
// read in pages; limits the configuration sets are kept.
func TestRateLimitsFitAFirstSync(t *testing.T) {
	for _, c := range []struct {
		cfg  rest.Config
		want float32
	}{
		{rest.Config{Host: "https://api.example:6443"}, QPS},
		{rest.Config{Host: "https://api.example:6443", QPS: 7, Burst: 9}, 7},
	} {
		api, err := New(&c.cfg, "test")
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if got := api.REST(g.gv).GetRateLimiter().QPS(); got != c.want {
				t.Errorf("config QPS %v: the %s client allows %v requests/s, want %v", c.cfg.QPS, g.gv, got, c.want)
			}
		}
	}
}
