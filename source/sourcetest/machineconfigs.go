package sourcetest

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// RenderedMachineConfig returns the i-th of a cluster's rendered
// MachineConfigs, of about size bytes once written as YAML, as the render controller writes them
// (machine-config-operator pkg/controller/render/render_controller.go
// generateRenderedMachineConfig: the pool's MachineConfigs merged into one
// Ignition config, owned by the pool, stamped with the controller's
// version and the release image). Real clusters keep every rendered
// config a pool ever had: 64 of about 700 KB, 45 MB, are ordinary.
//
// The bulk is what makes them large: Ignition files as data URLs, the
// templates' text files percent-encoded on one line and the binary ones
// (certificates bundles, kubelet's CA) in base64, and systemd units as
// multi-line strings.
func RenderedMachineConfig(i, size int) map[string]any {
	rng := rand.New(rand.NewPCG(uint64(i), uint64(size))) // the same object every run
	pool := []string{"worker", "master", "infra", "layered"}[i%4]
	sum := sha256.Sum256(fmt.Appendf(nil, "%s-%d", pool, i))
	name := "rendered-" + pool + "-" + hex.EncodeToString(sum[:16])
	return map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1",
		"kind":       "MachineConfig",
		"metadata": map[string]any{
			"name": name,
			"annotations": map[string]any{
				"machineconfiguration.openshift.io/generated-by-controller-version": "7ac4feee7f69c29d95f70454442eaf3876429b1a",
				"machineconfiguration.openshift.io/release-image-version":           "4.19.17",
			},
			"creationTimestamp": "2025-10-17T07:30:50Z",
			"generation":        int64(1),
			"ownerReferences": []any{map[string]any{
				"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool", "name": pool,
				"blockOwnerDeletion": true, "controller": true, "uid": "7a3e9327-6570-4567-9777-9f6b28734884",
			}},
			"resourceVersion": strconv.Itoa(49207 + i),
			"uid":             fmt.Sprintf("ea23306c-d390-4477-b2c2-%012d", i),
		},
		"spec": map[string]any{
			"baseOSExtensionsContainerImage": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + hex.EncodeToString(sum[:]),
			"config":                         ignitionConfig(rng, size),
			"extensions":                     []any{},
			"fips":                           false,
			"kernelArguments":                []any{"systemd.unified_cgroup_hierarchy=1", "cgroup_no_v1=\"all\"", "psi=0"},
			"kernelType":                     "default",
			"osImageURL":                     "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + hex.EncodeToString(sum[:]),
		},
	}
}

// ignitionConfig is an Ignition config of about size bytes: a third
// base64 files, a third percent-encoded text files, a third units.
func ignitionConfig(rng *rand.Rand, size int) map[string]any {
	var files, units []any
	line := func() string {
		words := []string{"ExecStart=/usr/bin/kubelet", "--config=/etc/kubernetes/kubelet.conf", "--node-ip=${KUBELET_NODE_IP}", "# see kubelet(8)", "Environment=\"KUBELET_LOG_LEVEL=2\"", "[Service]", "Restart=always"}
		return words[rng.IntN(len(words))] + fmt.Sprintf(" %d", rng.IntN(1<<20))
	}
	for written, i := 0, 0; written < size; i++ {
		var b strings.Builder
		for b.Len() < 4096+rng.IntN(8192) {
			b.WriteString(line() + "\n")
		}
		text := b.String()
		switch i % 3 {
		case 0:
			files = append(files, map[string]any{"path": fmt.Sprintf("/etc/pki/ca-trust/source/anchors/ca-%d.pem", i), "mode": 420, "overwrite": true,
				"contents": map[string]any{"source": "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(text))}})
		case 1:
			files = append(files, map[string]any{"path": fmt.Sprintf("/etc/kubernetes/conf.d/%02d.conf", i), "mode": 420, "overwrite": true,
				"contents": map[string]any{"source": "data:," + url.PathEscape(text)}})
		default:
			units = append(units, map[string]any{"name": fmt.Sprintf("unit-%d.service", i), "enabled": true, "contents": text})
		}
		written += len(text) * 4 / 3
	}
	return map[string]any{
		"ignition": map[string]any{"version": "3.5.0"},
		"passwd":   map[string]any{"users": []any{map[string]any{"name": "core", "sshAuthorizedKeys": []any{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEXAMPLE core"}}}},
		"storage":  map[string]any{"files": files},
		"systemd":  map[string]any{"units": units},
	}
}

// WriteMachineConfigFiles writes n rendered MachineConfigs of about size
// bytes under dir, each in its own file, as oc adm inspect does (util.go
// dirPathForInfo, filenameForInfo), one at a time: a benchmark's own
// memory must stay below what it measures.
func WriteMachineConfigFiles(dir string, n, size int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		mc := RenderedMachineConfig(i, size)
		y, err := yaml.Marshal(mc)
		if err != nil {
			return err
		}
		name, _, _ := unstructured.NestedString(mc, "metadata", "name")
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), y, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteMachineConfigList writes n rendered MachineConfigs of about size
// bytes to w as one List, as `oc get machineconfigs -o yaml` (items as
// block sequence entries at column 0) or `-o json` (indented by four
// spaces) prints it, one object at a time.
func WriteMachineConfigList(w io.Writer, n, size int, asJSON bool) error {
	bw := bufio.NewWriter(w)
	// bufio.Writer keeps its first error for Flush, which returns it
	put := func(parts ...string) {
		for _, p := range parts {
			_, _ = bw.WriteString(p)
		}
	}
	if asJSON {
		put("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")
	} else {
		put("apiVersion: v1\nitems:\n")
	}
	for i := range n {
		mc := RenderedMachineConfig(i, size)
		if asJSON {
			j, err := json.MarshalIndent(mc, "        ", "    ")
			if err != nil {
				return err
			}
			put("        ")
			put(string(j))
			if i < n-1 {
				put(",")
			}
			put("\n")
			continue
		}
		y, err := yaml.Marshal(mc)
		if err != nil {
			return err
		}
		for j, line := range strings.SplitAfter(strings.TrimSuffix(string(y), "\n"), "\n") {
			if j == 0 {
				put("- ")
			} else {
				put("  ")
			}
			put(line)
		}
		put("\n")
	}
	if asJSON {
		put("    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	} else {
		put("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	}
	return bw.Flush()
}
