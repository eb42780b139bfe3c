package main

import (
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

// machineConfigForms are the forms BenchmarkDiagnoseMachineConfigs
// reads, in the order TestWriteBenchSnapshots writes them.
var machineConfigForms = []string{"must-gather", "must-gather.tar.gz", "flat-list-yaml", "flat-list-json"}

// BenchmarkDiagnoseMachineConfigs: diagnose of healthy-rollout-done with
// 64 rendered MachineConfigs of about 700 KB beside its own, in each form
// a support engineer receives them: a 4.19 must-gather (one file per
// object, as oc adm inspect writes them), the same as a .tar.gz, and a
// flat snapshot whose MachineConfigs are one `oc get machineconfigs`
// List, in YAML and in JSON. Each run is the binary in a process of its
// own (maxrss-MiB, cpu-s). A process of its own writes them too
// (TestWriteBenchSnapshots): a child's maxrss starts from its parent's
// (the kernel carries the high-water mark across the fork and exec), and
// 45 MB of objects made here would be counted in each run's.
func BenchmarkDiagnoseMachineConfigs(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "ocl_exporter")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	w := exec.Command(os.Args[0], "-test.run=^TestWriteBenchSnapshots$")
	w.Env = append(os.Environ(), benchSnapshotsEnv+"="+dir)
	if out, err := w.CombinedOutput(); err != nil {
		b.Fatalf("writing the snapshots: %v\n%s", err, out)
	}
	for _, form := range machineConfigForms {
		snapshot := filepath.Join(dir, form)
		b.Run(form, func(b *testing.B) {
			size, err := du(snapshot)
			if err != nil {
				b.Fatal(err)
			}
			benchDiagnose(b, bin, snapshot, 0)
			b.ReportMetric(float64(size)/(1<<20), "MiB-on-disk")
		})
	}
}

// benchSnapshotsEnv names the directory TestWriteBenchSnapshots writes
// BenchmarkDiagnoseMachineConfigs' snapshots into.
const benchSnapshotsEnv = "OCL_BENCH_SNAPSHOTS"

// TestWriteBenchSnapshots writes, when OCL_BENCH_SNAPSHOTS names a
// directory, the snapshots of BenchmarkDiagnoseMachineConfigs into it,
// in a process of its own; it does nothing otherwise.
func TestWriteBenchSnapshots(t *testing.T) {
	dir := os.Getenv(benchSnapshotsEnv)
	if dir == "" {
		t.Skip(benchSnapshotsEnv + " is not set: a helper of BenchmarkDiagnoseMachineConfigs")
	}
	const scenario = "../../testdata/scenarios/healthy-rollout-done"
	root, err := sourcetest.WriteMustGather(scenario, filepath.Join(dir, "must-gather"), sourcetest.MustGatherOptions{Release: 19, At: sourcetest.Now})
	if err != nil {
		t.Fatal(err)
	}
	mcDir, err := imageDir(root)
	if err != nil {
		t.Fatal(err)
	}
	mcDir = filepath.Join(mcDir, "cluster-scoped-resources", "machineconfiguration.openshift.io", "machineconfigs")
	if err := sourcetest.WriteMachineConfigFiles(mcDir, bigMachineConfigs, bigMachineConfigSize); err != nil {
		t.Fatal(err)
	}
	if err := sourcetest.WriteTarGz(root, filepath.Join(dir, "must-gather.tar.gz")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name   string
		asJSON bool
	}{{"flat-list-yaml", false}, {"flat-list-json", true}} {
		if _, err := flatWith(scenario, filepath.Join(dir, f.name), f.asJSON); err != nil {
			t.Fatal(err)
		}
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
