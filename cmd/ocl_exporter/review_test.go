package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReviewRefusesBadInput: every command line review cannot run exits 2
// and names the flag.
func TestReviewRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--prometheus"},
		{[]string{"--prometheus=ftp://example.com"}, "--prometheus"},
		{[]string{"--prometheus=http://127.0.0.1:1", "--from=yesterday"}, "--from"},
		{[]string{"--prometheus=http://127.0.0.1:1", "--to=soon"}, "--to"},
		{[]string{"--prometheus=http://127.0.0.1:1", "--from=2025-10-17T12:00:00Z", "--to=2025-10-17T11:00:00Z"}, "is not after"},
		{[]string{"--prometheus=http://127.0.0.1:1", "--bearer-token-file=/nonexistent"}, "--bearer-token-file"},
		{[]string{"--prometheus=http://127.0.0.1:1", "--tls.ca-file=" + os.Args[0]}, "--tls.ca-file"},
		{[]string{"--prometheus=http://127.0.0.1:1", "-o", "html"}, "html"},
		{[]string{"--prometheus=http://127.0.0.1:1", "--kubeconfig=/nonexistent"}, "kubeconfig"},
		{[]string{"--prometheus=http://127.0.0.1:1"}, "not reachable"},
	} {
		out, err := runOutput(t, append([]string{"review", "--log.level=warn"}, tc.args...)...)
		if code := exitStatus(err); code != couldNotReview || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, %v (output %q), want 2 naming %q", tc.args, code, err, out, tc.want)
		}
	}
}

// TestReviewSendsTheToken: --bearer-token-file's token goes with every
// query, read again each time (a rotated token is picked up).
func TestReviewSendsTheToken(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	_, err := runOutput(t, "review", "--log.level=warn", "--prometheus="+srv.URL, "--bearer-token-file="+token, "--from=1h",
		"--to="+time.Now().UTC().Format(time.RFC3339))
	if exitStatus(err) != couldNotReview || !strings.Contains(err.Error(), "403") {
		t.Fatalf("a 403: %v", err)
	}
	if len(got) == 0 || got[0] != "Bearer first" {
		t.Errorf("Authorization %q, want Bearer first", got)
	}
}
