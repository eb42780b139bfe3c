package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// diagnoseArgsEnv makes the test binary run diagnose with these
// arguments (split on newlines) and exit: the benchmark measures a
// process's peak memory, which only a process of its own has.
const diagnoseArgsEnv = "OCL_EXPORTER_BENCH_DIAGNOSE"

func TestMain(m *testing.M) {
	if args := os.Getenv(diagnoseArgsEnv); args != "" {
		os.Exit(exitStatus(run(context.Background(), strings.Split(args, "\n"), os.Stderr)))
	}
	os.Exit(m.Run())
}

// BenchmarkDiagnoseLargeMustGather: diagnose of a must-gather holding
// about 300 MB of what the exporter does not read (other namespaces'
// pods, Secrets, events and logs, CRDs, Prometheus answers) around the
// OCL objects of seed004-build-failed, as a 4.19 must-gather image writes
// them. Each run is a process of its own; maxrss-MiB is its peak resident
// memory.
func BenchmarkDiagnoseLargeMustGather(b *testing.B) {
	dir := b.TempDir()
	root, err := sourcetest.WriteMustGather("../../testdata/scenarios/seed004-build-failed", dir, sourcetest.MustGatherOptions{Release: 19, At: sourcetest.Now})
	if err != nil {
		b.Fatal(err)
	}
	size, err := writeUnrelated(root, 300<<20)
	if err != nil {
		b.Fatal(err)
	}
	var maxRSS int64
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), diagnoseArgsEnv+"=diagnose\n--snapshot="+root+"\n-o\njson\n--log.level=error")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &stderr
		if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
			b.Fatalf("diagnose: %v (want exit status 1, a failed build):\n%s", err, stderr.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss) // KiB on Linux
		}
	}
	b.ReportMetric(float64(maxRSS)/1024, "maxrss-MiB")
	b.ReportMetric(float64(size)/(1<<20), "MiB-on-disk")
}

// writeUnrelated adds about n bytes of what a must-gather holds and the
// exporter does not read under root's image directory.
func writeUnrelated(root string, n int64) (int64, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	var image string
	for _, e := range entries {
		if e.IsDir() {
			image = filepath.Join(root, e.Name())
		}
	}
	pod := strings.Repeat("    - name: FOO\n      value: "+strings.Repeat("x", 100)+"\n", 40)
	var written int64
	write := func(p, body string) error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		written += int64(len(body))
		return os.WriteFile(p, []byte(body), 0o644)
	}
	for i := 0; written < n; i++ {
		ns := filepath.Join(image, "namespaces", fmt.Sprintf("app-%03d", i))
		var list strings.Builder
		list.WriteString("apiVersion: v1\nitems:\n")
		for j := range 200 {
			fmt.Fprintf(&list, "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: app-%d\n    namespace: app-%03d\n  spec:\n    containers:\n    - name: app\n      env:\n%s", j, i, pod)
		}
		list.WriteString("kind: PodList\nmetadata:\n  resourceVersion: \"1\"\n")
		for _, f := range []struct{ path, body string }{
			{filepath.Join(ns, "core", "pods.yaml"), list.String()},
			{filepath.Join(ns, "core", "secrets.yaml"), strings.ReplaceAll(strings.ReplaceAll(list.String(), "kind: Pod\n", "kind: Secret\n"), "PodList", "SecretList")},
			{filepath.Join(ns, "core", "events.yaml"), strings.ReplaceAll(strings.ReplaceAll(list.String(), "kind: Pod\n", "kind: Event\n"), "PodList", "EventList")},
			{filepath.Join(ns, "pods", "app-0", "app", "app", "logs", "current.log"), strings.Repeat("2025-10-17T12:00:00.000000000Z I1017 12:00:00.000000 1 server.go:42] serving\n", 4000)},
			{filepath.Join(image, "cluster-scoped-resources", "apiextensions.k8s.io", "customresourcedefinitions", fmt.Sprintf("crd%03d.example.com.yaml", i)), strings.Replace(list.String(), "kind: Pod\n", "kind: CustomResourceDefinition\n", 1)},
			{filepath.Join(image, "monitoring", "prometheus", fmt.Sprintf("series-%03d.json", i)), `{"status":"success","data":[` + strings.Repeat(`{"__name__":"up","job":"x"},`, 2000) + `{}]}`},
		} {
			if err := write(f.path, f.body); err != nil {
				return 0, err
			}
		}
	}
	return written, nil
}
