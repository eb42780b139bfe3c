package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

// The rendered MachineConfigs a real cluster keeps: 64 of about 700 KB,
// 45 MB (issue 50's measurement).
const (
	bigMachineConfigs    = 64
	bigMachineConfigSize = 700 << 10
)

// BenchmarkDiagnoseMachineConfigs: diagnose of healthy-rollout-done with
// 64 rendered MachineConfigs of about 700 KB beside its own, in each form
// a support engineer receives them: a 4.19 must-gather (one file per
// object, as oc adm inspect writes them), the same as a .tar.gz, and a
// flat snapshot whose MachineConfigs are one `oc get machineconfigs`
// List, in YAML and in JSON. Each run is the binary in a process of its
// own (maxrss-MiB, cpu-s).
func BenchmarkDiagnoseMachineConfigs(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "ocl_exporter")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	const scenario = "../../testdata/scenarios/healthy-rollout-done"
	root, err := sourcetest.WriteMustGather(scenario, filepath.Join(dir, "mg"), sourcetest.MustGatherOptions{Release: 19, At: sourcetest.Now})
	if err != nil {
		b.Fatal(err)
	}
	mcDir, err := imageDir(root)
	if err != nil {
		b.Fatal(err)
	}
	mcDir = filepath.Join(mcDir, "cluster-scoped-resources", "machineconfiguration.openshift.io", "machineconfigs")
	forms := []struct {
		name  string
		write func() (string, error)
	}{
		{"must-gather", func() (string, error) {
			return root, sourcetest.WriteMachineConfigFiles(mcDir, bigMachineConfigs, bigMachineConfigSize)
		}},
		{"must-gather.tar.gz", func() (string, error) {
			p := filepath.Join(dir, "must-gather.tar.gz")
			return p, tarGz(filepath.Dir(root), p)
		}},
		{"flat-list-yaml", func() (string, error) { return flatWith(scenario, filepath.Join(dir, "flat-yaml"), false) }},
		{"flat-list-json", func() (string, error) { return flatWith(scenario, filepath.Join(dir, "flat-json"), true) }},
	}
	for _, f := range forms {
		snapshot, err := f.write()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f.name, func(b *testing.B) {
			size, err := du(snapshot)
			if err != nil {
				b.Fatal(err)
			}
			benchDiagnose(b, bin, snapshot, 0)
			b.ReportMetric(float64(size)/(1<<20), "MiB-on-disk")
		})
	}
}

func imageDir(root string) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.IsDir() {
			return filepath.Join(root, e.Name()), nil
		}
	}
	return "", fmt.Errorf("no image directory in %s", root)
}

// flatWith copies the scenario's files into out, and the MachineConfigs
// as one List, YAML or JSON, into machineconfigs-rendered.yaml (.json).
func flatWith(scenario, out string, asJSON bool) (string, error) {
	err := filepath.WalkDir(scenario, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(scenario, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, rel), b, 0o644)
	})
	if err != nil {
		return "", err
	}
	ext := ".yaml"
	if asJSON {
		ext = ".json"
	}
	f, err := os.Create(filepath.Join(out, "machineconfigs-rendered"+ext))
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := sourcetest.WriteMachineConfigList(f, bigMachineConfigs, bigMachineConfigSize, asJSON); err != nil {
		return "", err
	}
	return out, f.Close()
}

// tarGz archives dir's tree into p, as `tar czf p -C dir .` does.
func tarGz(dir, p string) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func du(p string) (int64, error) {
	var n int64
	err := filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		n += info.Size()
		return err
	})
	return n, err
}
