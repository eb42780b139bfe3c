package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// BenchmarkDiagnoseLargeMustGather: diagnose of a must-gather holding
// about 300 MB of what the exporter does not read (other namespaces'
// pods, Secrets, events and logs, CRDs, Prometheus answers) around the
// OCL objects of seed004-build-failed, as a 4.19 must-gather image writes
// them. Each run is the ocl_exporter binary, built here, in a process of
// its own; maxrss-MiB is its peak resident memory.
func BenchmarkDiagnoseLargeMustGather(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "ocl_exporter")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	root, err := sourcetest.WriteMustGather("../../testdata/scenarios/seed004-build-failed", dir, sourcetest.MustGatherOptions{Release: 19, At: sourcetest.Now})
	if err != nil {
		b.Fatal(err)
	}
	size, err := writeUnrelated(root, 300<<20)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	benchDiagnose(b, bin, root, 1)
	b.ReportMetric(float64(size)/(1<<20), "MiB-on-disk")
}

// benchDiagnose runs diagnose --snapshot=snapshot once per iteration, each
// a process of its own that must exit with exit, and reports its peak
// resident memory (maxrss-MiB) and the CPU it used (cpu-s, user and
// system, per run).
func benchDiagnose(b *testing.B, bin, snapshot string, exit int) {
	b.Helper()
	var maxRSS int64
	var cpu time.Duration
	runs := 0
	for b.Loop() {
		cmd := exec.Command(bin, "diagnose", "--snapshot="+snapshot, "-o", "json", "--log.level=error")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &stderr
		if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != exit {
			b.Fatalf("diagnose: %v (want exit status %d):\n%s", err, exit, stderr.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss) // KiB on Linux
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		runs++
	}
	b.ReportMetric(float64(maxRSS)/1024, "maxrss-MiB")
	b.ReportMetric(cpu.Seconds()/float64(runs), "cpu-s")
}

// writeUnrelated adds about n bytes of what a must-gather holds and the
// exporter does not read under root's image directory. It writes as it
// goes: the benchmark's own peak memory must stay below diagnose's, since
// a child's maxrss starts from its parent's (the kernel carries the
// high-water mark across the fork and exec).
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
	env := strings.Repeat("    - name: FOO\n      value: "+strings.Repeat("x", 100)+"\n", 40)
	var written int64
	write := func(p string, parts func(w io.Writer) error) error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		cw := &countingWriter{w: bufio.NewWriter(f)}
		if err := parts(cw); err != nil {
			f.Close()
			return err
		}
		written += cw.n
		if err := cw.w.(*bufio.Writer).Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	list := func(ns, kind string) func(w io.Writer) error {
		return func(w io.Writer) error {
			fmt.Fprint(w, "apiVersion: v1\nitems:\n")
			for j := range 200 {
				fmt.Fprintf(w, "- apiVersion: v1\n  kind: %s\n  metadata:\n    name: app-%d\n    namespace: %s\n  spec:\n    containers:\n    - name: app\n      env:\n%s", kind, j, ns, env)
			}
			_, err := fmt.Fprintf(w, "kind: %sList\nmetadata:\n  resourceVersion: \"1\"\n", kind)
			return err
		}
	}
	repeat := func(s string, k int) func(w io.Writer) error {
		return func(w io.Writer) error {
			for range k {
				if _, err := io.WriteString(w, s); err != nil {
					return err
				}
			}
			return nil
		}
	}
	series := func(k int) func(w io.Writer) error { // a Prometheus answer
		return func(w io.Writer) error {
			if _, err := io.WriteString(w, `{"status":"success","data":[`); err != nil {
				return err
			}
			if err := repeat(`{"__name__":"up","job":"x"},`, k)(w); err != nil {
				return err
			}
			_, err := io.WriteString(w, `{}]}`)
			return err
		}
	}
	for i := 0; written < n; i++ {
		name := fmt.Sprintf("app-%03d", i)
		ns := filepath.Join(image, "namespaces", name)
		for _, f := range []struct {
			path  string
			parts func(w io.Writer) error
		}{
			{filepath.Join(ns, "core", "pods.yaml"), list(name, "Pod")},
			{filepath.Join(ns, "core", "secrets.yaml"), list(name, "Secret")},
			{filepath.Join(ns, "core", "events.yaml"), list(name, "Event")},
			{filepath.Join(ns, "pods", "app-0", "app", "app", "logs", "current.log"), repeat("2025-10-17T12:00:00.000000000Z I1017 12:00:00.000000 1 server.go:42] serving\n", 4000)},
			{filepath.Join(image, "cluster-scoped-resources", "apiextensions.k8s.io", "customresourcedefinitions", "crd"+name+".example.com.yaml"), list("", "CustomResourceDefinition")},
			{filepath.Join(image, "monitoring", "prometheus", "series-"+name+".json"), series(2000)},
		} {
			if err := write(f.path, f.parts); err != nil {
				return 0, err
			}
		}
	}
	return written, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
