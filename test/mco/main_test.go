//go:build e2emco

// Package mco replays incidents with the machine-config-operator deciding:
// its own build controller (machine-os-builder) and node controller, built
// from the MCO's source by make e2e-mco, run against a real etcd and
// kube-apiserver and write MachineOSBuilds, Jobs, ConfigMaps, Secrets, pool
// status and node annotations. The tests play only what surrounds them in a
// cluster (the Job controller and kubelet for build pods, the
// machine-config-daemon's node annotations, the registry's digest, the
// render controller's rendered config), each test naming which and why. The
// exporter built from this repository watches the API server live; its
// series at each step of an incident are laid out on the hand-written
// lifecycle's minutes and judged by promtool against the lifecycle's
// expected alerts, and the objects the MCO wrote are compared with the
// lifecycle's stages. See CONTRIBUTING.md, "Integration tests".
package mco

import (
	"fmt"
	"os"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

const repoRoot = "../.."

// tools are the binaries make e2e-mco builds and names.
var tools = map[string]string{}

var toolVars = []string{"E2E_ETCD", "E2E_KUBE_APISERVER", "E2E_PROMTOOL", "E2E_MCO_DIR", "E2E_MCO_BUILDER", "E2E_MCO_NODE"}

// exporterBin is the exporter built from this repository for the suite.
var exporterBin string

func TestMain(m *testing.M) {
	for _, name := range toolVars {
		tools[name] = os.Getenv(name)
		if _, err := os.Stat(tools[name]); err != nil {
			fmt.Fprintf(os.Stderr, "e2e-mco: $%s=%q: %v; run the suite with make e2e-mco, which builds and sets it\n", name, tools[name], err)
			os.Exit(1)
		}
	}
	dir, err := os.MkdirTemp("", "ocl-exporter-e2e-mco-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e-mco:", err)
		os.Exit(1)
	}
	if exporterBin, err = cluster.BuildExporter(repoRoot, dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-mco:", err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
