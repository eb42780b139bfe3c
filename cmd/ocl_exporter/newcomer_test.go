package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source"
)

// TestHelpListsOnlyFlagsThatApply: each command's --help lists its own
// flags and the global ones that apply to it, none of the exporter's
// serving flags; the exporter's lists them, with its own port.
func TestHelpListsOnlyFlagsThatApply(t *testing.T) {
	serving := []string{"--web.listen-address", "--web.config.file", "--auth.kubernetes", "--collector.", "--web.max-requests", ":9100"}
	for _, c := range []struct {
		command []string
		want    []string
		not     []string
	}{
		{[]string{"diagnose"}, []string{"--pool=", "--kubeconfig=", "--snapshot=", "--log.level=", "--web.runbook-url="}, serving},
		{[]string{"capture"}, []string{"force", "--kubeconfig=", "--mco.namespace="}, append(serving, "--web.runbook-url", "--now")},
		{[]string{"review"}, []string{"--prometheus=", "--kubeconfig="}, append(serving, "--snapshot=", "--mco.namespace")},
		{[]string{"serve"}, []string{"--web.listen-address=", ":29100", "--auth.kubernetes", "--snapshot="}, []string{":9100"}},
		{nil, []string{"--web.listen-address=", "--snapshot="}, []string{":9100"}},
	} {
		var help bytes.Buffer
		app, _ := newApp(&help)
		app.Terminate(func(int) {})
		_, _ = app.Parse(append(c.command, "--help"))
		for _, w := range c.want {
			if !strings.Contains(help.String(), w) {
				t.Errorf("%v --help lacks %s:\n%s", c.command, w, help.String())
			}
		}
		for _, n := range c.not {
			if strings.Contains(help.String(), n) {
				t.Errorf("%v --help lists %s, which does not apply to it:\n%s", c.command, n, help.String())
			}
		}
	}
}

// TestPathFlagsExpandTilde: a shell leaves ~ after = alone
// (--kubeconfig=~/.kube/config), so the flags expand it.
func TestPathFlagsExpandTilde(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".kube", "config"), []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"capture", "--kubeconfig=~/.kube/config", "--output=~/snap/"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".kube", "config"); o.kubeconfig != want {
		t.Errorf("--kubeconfig=~/.kube/config read as %q, want %q", o.kubeconfig, want)
	}
	if want := filepath.Join(home, "snap"); o.tool.capture.out != want+"/" && o.tool.capture.out != want {
		t.Errorf("--output=~/snap/ read as %q, want %q", o.tool.capture.out, want+"/")
	}
	o, err = parseFlags([]string{"diagnose", "--snapshot=~"}, &bytes.Buffer{})
	if err != nil || o.snapshot != home {
		t.Errorf("--snapshot=~ read as %q (%v), want %q", o.snapshot, err, home)
	}
}

// refusingKubeconfig is a kubeconfig whose server refuses connections.
func refusingKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
  name: c
contexts:
- context: {cluster: c, user: u}
  name: ctx
current-context: ctx
users:
- name: u
  user: {token: abc}
`
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNoClusterExitsTheSame: capture exits 2, as diagnose does, when it
// has no cluster (no configuration, or one that refuses connections), and
// neither logs a warning before the one line that says why.
func TestNoClusterExitsTheSame(t *testing.T) {
	refusing := refusingKubeconfig(t)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir()) // no ~/.kube/config
	for _, args := range [][]string{
		{"capture", "--output=" + filepath.Join(t.TempDir(), "snap") + "/"},
		{"diagnose"},
		{"capture", "--kubeconfig=" + refusing, "--output=" + filepath.Join(t.TempDir(), "snap") + "/"},
		{"diagnose", "--kubeconfig=" + refusing},
	} {
		var logs bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		err := run(ctx, append(args, "--sync-timeout=60s"), &logs)
		cancel()
		if code := exitCodeOf(err); code != 2 || err == nil {
			t.Errorf("%v: exit status %d (%v), want 2 with the cause", args, code, err)
		}
		if logs.Len() > 0 {
			t.Errorf("%v: logged before the error line:\n%s", args, logs.String())
		}
	}
}

// TestUnknownPoolListsThePools: --pool with a name no pool has says which
// pools there are.
func TestUnknownPoolListsThePools(t *testing.T) {
	out, code := diagnoseRun(t, "--example", "--pool=nosuchpool")
	if out = strings.Join(strings.Fields(out), " "); code != 2 || !strings.Contains(out, `no MachineConfigPool or MachineOSConfig names pool "nosuchpool"; the pools are: canary, edge, gpu, infra, layered`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestIdentityFallsBackToTheKubeconfig: where no SelfSubjectReview is
// answered, the identity is the kubeconfig's user and context; offline
// there is none.
func TestIdentityFallsBackToTheKubeconfig(t *testing.T) {
	kc := refusingKubeconfig(t)
	cfg, err := source.RESTConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := identity(t.Context(), cfg, kc), "kubeconfig user u (context ctx)"; got != want {
		t.Errorf("identity = %q, want %q", got, want)
	}
	if got := identity(t.Context(), nil, ""); got != "" {
		t.Errorf("offline identity = %q, want none", got)
	}
}
