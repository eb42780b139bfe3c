//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// failFastBound is how long a command may take to give up on a cluster it
// cannot talk to. It fails in well under a second; the bound is the
// issue's promise, wide enough for a loaded machine. The informers would
// otherwise wait the whole --sync-timeout (60s), or forever when serving.
const failFastBound = 15 * time.Second

// TestUnreachableClusterFailsFast runs the exporter, diagnose and capture
// at their default log level against a kubeconfig whose server nothing
// listens at and one whose token the real API server refuses (401): each
// exits with an error within failFastBound, in at most 5 lines of output,
// naming the cause once rather than once per resource and retry.
func TestUnreachableClusterFailsFast(t *testing.T) {
	nowhere, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	clusters := []struct {
		name, cause string
		edit        func(server, token *string)
	}{
		{"unreachable", "connection refused", func(server, _ *string) { *server = "https://" + nowhere }},
		{"wrong token", "Unauthorized", func(_, token *string) { *token = "not-a-token-the-api-server-knows" }},
	}
	for _, c := range clusters {
		kubeconfig := editedKubeconfig(t, c.edit)
		listen, err := cluster.FreeAddress()
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []struct {
			name string
			args []string
		}{
			{"exporter", []string{"--web.listen-address=" + listen}},
			{"diagnose", []string{"diagnose"}},
			{"capture", []string{"capture", "--output=" + filepath.Join(t.TempDir(), "snap") + "/"}},
		} {
			t.Run(c.name+"/"+cmd.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), failFastBound)
				defer cancel()
				run := exec.CommandContext(ctx, env.exporterBin, append(cmd.args, "--kubeconfig="+kubeconfig)...)
				var out bytes.Buffer
				run.Stdout, run.Stderr = &out, &out
				begin := time.Now()
				err := run.Run()
				took := time.Since(begin)
				t.Logf("%s in %s:\n%s", err, took.Round(time.Millisecond), out.String())
				var exit *exec.ExitError
				switch {
				case ctx.Err() != nil:
					t.Fatalf("still running after %s", failFastBound)
				case !errors.As(err, &exit):
					t.Fatalf("exits %v, want an error status", err)
				}
				lines := strings.Split(strings.TrimSpace(out.String()), "\n")
				if len(lines) > 5 {
					t.Errorf("%d lines of output, want at most 5", len(lines))
				}
				if last := lines[len(lines)-1]; !strings.Contains(last, c.cause) || !strings.Contains(last, "no resource could be listed") {
					t.Errorf("the last line does not name the cause (%s): %s", c.cause, last)
				}
			})
		}
	}
}

// editedKubeconfig is the exporter's kubeconfig with its server or token
// changed by edit.
func editedKubeconfig(t *testing.T, edit func(server, token *string)) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(env.cluster.ExporterKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	edit(&cfg.Clusters[ctx.Cluster].Server, &cfg.AuthInfos[ctx.AuthInfo].Token)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
