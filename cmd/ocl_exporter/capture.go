package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/source"
)

// kinds names the kind of each watched resource (source/resources.go), as
// a snapshot document spells it; capture_test.go fails when a resource is
// added without one.
var kinds = map[string]string{
	"machineosconfigs":   "MachineOSConfig",
	"machineosbuilds":    "MachineOSBuild",
	"machineconfigpools": "MachineConfigPool",
	"machineconfignodes": "MachineConfigNode",
	"clusteroperators":   "ClusterOperator",
	"nodes":              "Node",
	"machineconfigs":     "MachineConfig",
	"secrets":            "Secret",
	"configmaps":         "ConfigMap",
	"jobs":               "Job",
	"pods":               "Pod",
	"deployments":        "Deployment",
	"events":             "Event",
}

// runCapture lists every watched resource once, as the exporter does
// (same selectors, same transforms: Secrets as metadata only), and writes
// what the caches hold as a snapshot.
func runCapture(ctx context.Context, o *options, logger *slog.Logger) error {
	server := "snapshot " + o.snapshot
	switch {
	case o.example:
		server = "the built-in example"
	case o.snapshot == "":
		cfg, err := source.RESTConfig(o.kubeconfig)
		if err != nil {
			return err
		}
		server = cfg.Host
	}
	src, err := syncedSource(ctx, o, logger)
	if err != nil {
		return err
	}
	for _, st := range src.Status() {
		if !st.Available {
			logger.Warn("not captured: the resource is unavailable", "resource", st.Resource, "reason", st.Reason)
		}
	}
	files, err := captureFiles(src.Cached(), time.Now(), server, o.namespace)
	if err != nil {
		return err
	}
	return writeCapture(o.tool.captureOut, files)
}

// captureFiles renders one multi-document YAML file per resource, each
// starting with a header saying when, from where and what.
func captureFiles(cached []source.Cached, at time.Time, server, namespace string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, c := range cached {
		kind, ok := kinds[c.Resource.GVR.Resource]
		if !ok {
			return nil, fmt.Errorf("capture does not know the kind of %s", c.Resource.Name)
		}
		gvk := c.Resource.GVR.GroupVersion().WithKind(kind)
		var b bytes.Buffer
		fmt.Fprintf(&b, "# ocl_exporter capture of %s at %s from %s (MCO namespace %s): %d object(s),\n",
			c.Resource.Name, at.UTC().Format(time.RFC3339), server, namespace, len(c.Objects))
		b.WriteString("# trimmed as the exporter keeps them")
		if c.Resource.MetadataOnly {
			b.WriteString(", metadata only")
		}
		b.WriteString(". Read it with ocl_exporter --snapshot or diagnose --snapshot.\n")
		objs := slices.Clone(c.Objects)
		slices.SortFunc(objs, func(x, y runtime.Object) int { return strings.Compare(objectKey(x), objectKey(y)) })
		for _, obj := range objs {
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			y, err := yaml.Marshal(obj)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", kind, objectKey(obj), err)
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		files[c.Resource.Name+".yaml"] = b.Bytes()
	}
	return files, nil
}

func objectKey(o runtime.Object) string {
	m, ok := o.(metav1.Object)
	if !ok {
		return ""
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// writeCapture writes the files into a directory (when out is one, or
// ends in /), else concatenated into one file, "-" for standard output.
func writeCapture(out string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	if fi, err := os.Stat(out); (err == nil && fi.IsDir()) || strings.HasSuffix(out, "/") {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("capture --output: %w", err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(out, n), files[n], 0o600); err != nil {
				return fmt.Errorf("capture --output: %w", err)
			}
		}
		return nil
	}
	var all bytes.Buffer
	for _, n := range names {
		all.Write(files[n])
	}
	if out == "-" {
		_, err := stdout.Write(all.Bytes())
		return err
	}
	if err := os.WriteFile(out, all.Bytes(), 0o600); err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	return nil
}
