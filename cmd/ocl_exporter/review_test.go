package main

import (
	"bytes"
	"context"
	"encoding/base64"
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
		{[]string{"--prometheus=http://127.0.0.1:1", `--selector=job="x"}) or vector(1) or up{a="`}, "--selector"},
	} {
		out, err := runOutput(t, append([]string{"review", "--log.level=warn"}, tc.args...)...)
		if code := exitCodeOf(err); code != couldNotReview || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, %v (output %q), want 2 naming %q", tc.args, code, err, out, tc.want)
		}
	}
}

// TestReviewSendsTheToken: --bearer-token-file's token goes with every
// query, read again each time (a rotated token is picked up).
func TestReviewSendsTheToken(t *testing.T) {
	token := tokenFile(t, "first\n")
	srv, got := forbidding(t)
	_, err := runOutput(t, "review", "--log.level=warn", "--prometheus="+srv.URL, "--bearer-token-file="+token, "--allow-plaintext-token", "--from=1h",
		"--to="+time.Now().UTC().Format(time.RFC3339))
	if exitCodeOf(err) != couldNotReview || !strings.Contains(err.Error(), "403") {
		t.Fatalf("a 403: %v", err)
	}
	if len(*got) == 0 || (*got)[0] != "Bearer first" {
		t.Errorf("Authorization %q, want Bearer first", *got)
	}
}

// reviewRun runs review with args, and returns its stdout, its stderr and
// its exit status.
func reviewRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	old := stdout
	stdout = &out
	t.Cleanup(func() { stdout = old })
	err := run(context.Background(), append([]string{"review"}, args...), &errOut)
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), exitCodeOf(err)
}

// kubeconfigWithToken is a kubeconfig of the cluster at api.c1.example.com
// whose user holds a token.
func kubeconfigWithToken(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c1, cluster: {server: "https://api.c1.example.com:6443"}}]
users: [{name: u, user: {token: cluster-token}}]
contexts: [{name: c1, context: {cluster: c1, user: u}}]
current-context: c1
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReviewKeepsTheClusterTokenOffPlainHTTP: the kubeconfig's token goes
// to no http:// URL unless --allow-plaintext-token, and sent to a host
// other than the cluster's querier, stderr says so.
func TestReviewKeepsTheClusterTokenOffPlainHTTP(t *testing.T) {
	srv, got := forbidding(t)
	kc := kubeconfigWithToken(t)
	_, errOut, code := reviewRun(t, "--kubeconfig="+kc, "--prometheus="+srv.URL)
	if code != couldNotReview || !strings.Contains(errOut, "--allow-plaintext-token") || len(*got) > 0 {
		t.Errorf("the cluster token over http: exit %d, %d request(s), %s", code, len(*got), errOut)
	}
	_, errOut, code = reviewRun(t, "--kubeconfig="+kc, "--prometheus="+srv.URL, "--allow-plaintext-token")
	if code != couldNotReview || len(*got) == 0 || (*got)[0] != "Bearer cluster-token" {
		t.Fatalf("--allow-plaintext-token: exit %d, Authorization %q", code, *got)
	}
	if !strings.Contains(errOut, "not the cluster's querier") || !strings.Contains(errOut, "127.0.0.1") ||
		!strings.Contains(errOut, "thanos-querier-openshift-monitoring.apps.c1.example.com") {
		t.Errorf("no warning naming the host and the cluster's querier: %s", errOut)
	}
}

// TestReviewRefusesCrossHostRedirects: through the command, a 302 or 307
// to another host ends the review naming that host, and the other host
// never sees the token.
func TestReviewRefusesCrossHostRedirects(t *testing.T) {
	token := tokenFile(t, "secret\n")
	other, leaked := forbidding(t)
	otherHost := strings.TrimPrefix(other.URL, "http://")
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		named := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The same port on another name: another host to the client.
			http.Redirect(w, r, "http://localhost:"+strings.Split(otherHost, ":")[1]+r.URL.RequestURI(), code)
		}))
		_, errOut, exit := reviewRun(t, "--prometheus="+named.URL, "--bearer-token-file="+token, "--allow-plaintext-token")
		if exit != couldNotReview || !strings.Contains(errOut, "localhost:") || !strings.Contains(errOut, "credentials go only to the host") {
			t.Errorf("%d: exit %d, %s", code, exit, errOut)
		}
		named.Close()
	}
	if len(*leaked) > 0 {
		t.Errorf("the other host was asked %d time(s), Authorization %q", len(*leaked), *leaked)
	}
}

// TestReviewBounds: each bound fails naming the flag that raises it; a
// querier that accepts connections and never answers is told apart from
// one that cannot be reached.
func TestReviewBounds(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[` + strings.Repeat(" ", 4096) + `]}}`))
	}))
	defer big.Close()
	if _, errOut, code := reviewRun(t, "--prometheus="+big.URL, "--max-response-bytes=1KiB"); code != couldNotReview || !strings.Contains(errOut, "--max-response-bytes=1024") {
		t.Errorf("a 4 KiB answer under 1KiB: exit %d, %s", code, errOut)
	}
	hang := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer silent.Close()
	defer close(hang)
	_, errOut, code := reviewRun(t, "--prometheus="+silent.URL, "--response-header-timeout=100ms")
	if code != couldNotReview || !strings.Contains(errOut, "accepted the connection but sent no answer") {
		t.Errorf("a querier that never answers: exit %d, %s", code, errOut)
	}
}

// TestReviewExample: review --example writes a report of the built-in
// history with no querier, and refuses a querier or a window beside it.
func TestReviewExample(t *testing.T) {
	out, errOut, code := reviewRun(t, "--example", "-o", "markdown")
	if code != 0 || !strings.HasPrefix(out, "# OCL incident review") || !strings.Contains(out, "Time to detect: 12m") {
		t.Errorf("review --example: exit %d, %s\n%s", code, errOut, out)
	}
	for _, arg := range []string{"--prometheus=http://127.0.0.1:1", "--from=1h", "--cluster=a"} {
		if _, errOut, code := reviewRun(t, "--example", arg); code != couldNotReview || !strings.Contains(errOut, "--example") {
			t.Errorf("--example %s: exit %d, %s", arg, code, errOut)
		}
	}
}

// TestReviewHelpListsItsFlagsFirst: review --help starts with review's
// own flags, the exporter's after them.
func TestReviewHelpListsItsFlagsFirst(t *testing.T) {
	var help bytes.Buffer
	app, _ := newApp(&help)
	app.Terminate(func(int) {})
	_, _ = app.Parse([]string{"review", "--help"})
	own, global := strings.Index(help.String(), "--prometheus="), strings.Index(help.String(), "--kubeconfig=")
	if own < 0 || global < 0 || own > global || !strings.Contains(help.String(), "Global flags:") {
		t.Errorf("review --help lists --prometheus at %d, --kubeconfig at %d:\n%s", own, global, help.String())
	}
}

// tokenFile is a file holding token.
func tokenFile(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// forbidding is a querier that answers 403 and records the Authorization
// header of each request.
func forbidding(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// ocLoginKubeconfig is a kubeconfig laid out as oc login writes one
// (openshift/oc pkg/helpers/kubeconfig/smart_merge.go, CreateConfig: the
// cluster named host:port with dashes, the user user/cluster, the context
// namespace/cluster/user), whose user's token is in a tokenFile holding
// token: a file written by `oc whoami -t > file` ends with a newline.
func ocLoginKubeconfig(t *testing.T, token string) (kubeconfig, tokenPath string) {
	t.Helper()
	tokenPath = tokenFile(t, token)
	kubeconfig = filepath.Join(t.TempDir(), "config")
	cfg := `apiVersion: v1
clusters:
- cluster:
    server: https://api.c1.example.com:6443
  name: api-c1-example-com:6443
contexts:
- context:
    cluster: api-c1-example-com:6443
    namespace: default
    user: kube:admin/api-c1-example-com:6443
  name: default/api-c1-example-com:6443/kube:admin
current-context: default/api-c1-example-com:6443/kube:admin
kind: Config
preferences: {}
users:
- name: kube:admin/api-c1-example-com:6443
  user:
    tokenFile: ` + tokenPath + "\n"
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, tokenPath
}

// TestReviewReadsAKubeconfigTokenFile: the token of a kubeconfig's
// tokenFile is sent without its trailing newline; one that holds a line
// break inside is refused naming the file, and nothing blames the
// querier's reachability.
func TestReviewReadsAKubeconfigTokenFile(t *testing.T) {
	srv, got := forbidding(t)
	kc, _ := ocLoginKubeconfig(t, "sha256~w4Kk2nOq\n")
	_, errOut, code := reviewRun(t, "--kubeconfig="+kc, "--prometheus="+srv.URL, "--allow-plaintext-token", "--log.level=error")
	if code != couldNotReview || !strings.Contains(errOut, "403") || len(*got) == 0 || (*got)[0] != "Bearer sha256~w4Kk2nOq" {
		t.Fatalf("a tokenFile with a newline: exit %d, Authorization %q, %s", code, *got, errOut)
	}
	*got = nil
	kc, path := ocLoginKubeconfig(t, "sha256~w4Kk\n2nOq\n")
	_, errOut, code = reviewRun(t, "--kubeconfig="+kc, "--prometheus="+srv.URL, "--allow-plaintext-token", "--log.level=error")
	if code != couldNotReview || !strings.Contains(errOut, "tokenFile "+path+" holds a line break") || strings.Contains(errOut, "not reachable") || len(*got) > 0 {
		t.Errorf("a tokenFile with a line break inside: exit %d, %d request(s), %s", code, len(*got), errOut)
	}
}

// TestReviewKeepsThePasswordOffPlainHTTP: the user and password of
// --prometheus follow the token's rules (never over http without
// --allow-plaintext-token, only to that host), and no message shows the
// password, of a URL that parses or not.
func TestReviewKeepsThePasswordOffPlainHTTP(t *testing.T) {
	const password = "s3cr3t-pw"
	srv, got := forbidding(t)
	withUser := strings.Replace(srv.URL, "http://", "http://alice:"+password+"@", 1)
	out, errOut, code := reviewRun(t, "--prometheus="+withUser)
	if code != couldNotReview || !strings.Contains(errOut, "--allow-plaintext-token") || len(*got) > 0 {
		t.Errorf("a password over http: exit %d, %d request(s), %s", code, len(*got), errOut)
	}
	for _, args := range [][]string{
		{"--prometheus=" + withUser + "%zz"},
		{"--prometheus=http://alice:" + password + "/x@querier.example:9090"},
		{"--prometheus=" + withUser, "--bearer-token-file=" + tokenFile(t, "t\n"), "--allow-plaintext-token"},
	} {
		out, errOut, code := reviewRun(t, args...)
		if code != couldNotReview || !strings.Contains(errOut, "--prometheus") || strings.Contains(out+errOut, password) || len(*got) > 0 {
			t.Errorf("%q: exit %d, %d request(s), %s", args, code, len(*got), out+errOut)
		}
	}
	_, errOut, code = reviewRun(t, "--prometheus="+withUser, "--allow-plaintext-token")
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+password)); code != couldNotReview || len(*got) == 0 || (*got)[0] != want {
		t.Errorf("--allow-plaintext-token: exit %d, Authorization %q, want %q", code, *got, want)
	}
	if strings.Contains(out+errOut, password) {
		t.Errorf("the password is shown: %s", out+errOut)
	}
}
