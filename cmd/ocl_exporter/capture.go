package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
// what the caches hold as a snapshot. A resource it could not read is
// recorded as not captured, with the reason, in its file; when none could
// be read it writes nothing and fails.
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
	src, _, err := syncedSource(ctx, o, logger)
	if err != nil {
		return err
	}
	status := map[string]source.ResourceStatus{}
	var unavailable []error
	for _, st := range src.Status() {
		status[st.Resource] = st
		if !st.Available { // logged in one line by syncedSource
			unavailable = append(unavailable, fmt.Errorf("%s: %s", st.Resource, st.Reason))
		}
	}
	if len(unavailable) == len(status) {
		return fmt.Errorf("capture: nothing captured, no resource could be read:\n%w", errors.Join(unavailable...))
	}
	files, err := captureFiles(src.Cached(), status, time.Now(), server, o.namespace)
	if err != nil {
		return err
	}
	return writeCapture(o.tool.captureOut, files, o.tool.force)
}

// captureFiles renders one multi-document YAML file per resource, each
// starting with a header saying when, from where and what, then the
// resource's source.CaptureRecord: captured, or not and why, so that
// "none" and "could not read" differ when the snapshot is read back.
func captureFiles(cached []source.Cached, status map[string]source.ResourceStatus, at time.Time, server, namespace string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var errs []error
	for _, c := range cached {
		kind, ok := kinds[c.Resource.GVR.Resource]
		if !ok {
			errs = append(errs, fmt.Errorf("capture does not know the kind of %s", c.Resource.Name))
			continue
		}
		st, ok := status[c.Resource.Name]
		rec := source.CaptureRecord{
			APIVersion: source.CaptureRecordAPIVersion, Kind: source.CaptureRecordKind,
			Resource: c.Resource.Name, Captured: ok && st.Available, Problem: st.Problem, Reason: st.Reason,
			Time: &metav1.Time{Time: at.UTC().Truncate(time.Second)},
		}
		if rec.Captured {
			rec.Objects = new(len(c.Objects))
		}
		var b bytes.Buffer
		if rec.Captured {
			fmt.Fprintf(&b, "# ocl_exporter capture of %s at %s from %s (MCO namespace %s): %d object(s),\n",
				c.Resource.Name, at.UTC().Format(time.RFC3339), server, namespace, len(c.Objects))
			b.WriteString("# trimmed as the exporter keeps them")
			if c.Resource.MetadataOnly {
				b.WriteString(", metadata only")
			}
			b.WriteString(". Read it with ocl_exporter --snapshot or diagnose --snapshot.\n")
		} else {
			fmt.Fprintf(&b, "# ocl_exporter capture of %s at %s from %s (MCO namespace %s): NOT CAPTURED, the resource\n"+
				"# could not be read (see the record below); a snapshot read from it treats %s as unknown, not empty.\n",
				c.Resource.Name, at.UTC().Format(time.RFC3339), server, namespace, c.Resource.Name)
		}
		y, err := yaml.Marshal(rec)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Resource.Name, err))
			continue
		}
		b.WriteString("---\n")
		b.Write(y)
		if !rec.Captured {
			files[c.Resource.Name+".yaml"] = b.Bytes()
			continue
		}
		gvk := c.Resource.GVR.GroupVersion().WithKind(kind)
		objs := slices.Clone(c.Objects)
		slices.SortFunc(objs, func(x, y runtime.Object) int { return strings.Compare(objectKey(x), objectKey(y)) })
		for _, obj := range objs {
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			y, err := yaml.Marshal(obj)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", kind, objectKey(obj), err))
				continue
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		// The end record: a reader tells a whole file from a cut one.
		y, err = yaml.Marshal(source.CaptureRecord{APIVersion: rec.APIVersion, Kind: rec.Kind, Resource: rec.Resource, End: true})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Resource.Name, err))
			continue
		}
		b.WriteString("---\n")
		b.Write(y)
		files[c.Resource.Name+".yaml"] = b.Bytes()
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("capture: %w", errors.Join(errs...))
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

// dashValues rewrites "-o -" and "--output -" as "--output=-": kingpin
// reads a lone "-" after a flag as an empty value.
func dashValues(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if (args[i] == "-o" || args[i] == "--output") && i+1 < len(args) && args[i+1] == "-" {
			out = append(out, "--output=-")
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// writeCapture writes the files into a directory (when out is one, or
// ends in /), else concatenated into one file, "-" for standard output.
// Nothing is written in place: the files are made in a new private
// directory (or temporary file) next to out and renamed into place, so a
// failure leaves nothing behind, a link planted at out or in it is
// replaced rather than followed, and no file of an earlier capture
// survives for a later --snapshot to read. An existing file, or a
// non-empty directory, is replaced only with force.
func writeCapture(out string, files map[string][]byte, force bool) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	if out == "-" {
		for _, n := range names {
			if _, err := stdout.Write(files[n]); err != nil {
				return fmt.Errorf("capture: writing to standard output: %w", err)
			}
		}
		return nil
	}
	if out == "" {
		return errors.New("capture --output: empty path; use - for standard output")
	}
	fi, statErr := os.Lstat(out)
	if (statErr == nil && fi.IsDir()) || strings.HasSuffix(out, "/") {
		return writeCaptureDir(filepath.Clean(out), names, files, force)
	}
	if statErr == nil && !force {
		return fmt.Errorf("capture --output=%s: already exists; pass --force to replace it", out)
	}
	if statErr == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("capture --output=%s: a %s, not a file", out, fi.Mode().Type())
	}
	var all bytes.Buffer
	for _, n := range names {
		all.Write(files[n])
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".capture-*.tmp") // O_EXCL, 0600
	if err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	_, err = f.Write(all.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), out) // replaces a link, never follows it
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("capture --output: %w", err)
	}
	return nil
}

// writeCaptureDir writes the files into a new directory next to dir and
// renames it into place. An existing dir that is not empty is replaced
// only with force, and only when it holds nothing but snapshot files: a
// directory with anything else in it is not a capture's to delete.
func writeCaptureDir(dir string, names []string, files map[string][]byte, force bool) error {
	entries, err := os.ReadDir(dir)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("capture --output: %w", err)
	}
	if len(entries) > 0 {
		if !force {
			return fmt.Errorf("capture --output=%s/: the directory is not empty; pass --force to replace it, or name a new one", dir)
		}
		for _, e := range entries {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					continue
				}
			}
			return fmt.Errorf("capture --output=%s/: holds %s, which is not a snapshot file; --force replaces only a directory of snapshot files", dir, e.Name())
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".capture-*") // new, 0700: nothing planted in it
	if err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once renamed; the leftovers of a failure otherwise
	var errs []error
	for _, n := range names {
		if err := writeNew(filepath.Join(tmp, n), files[n]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("capture --output: nothing written: %w", errors.Join(errs...))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	if !exists {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("capture --output: %w", err)
		}
		return nil
	}
	// A directory cannot be renamed over a non-empty one: move the old one
	// aside, put the new one in place, then remove the old one.
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("capture --output: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return errors.Join(fmt.Errorf("capture --output: %w", err), os.Rename(old, dir))
	}
	return os.RemoveAll(old)
}

// writeNew creates name, which must not exist (O_EXCL, and O_NOFOLLOW so a
// link is never followed), mode 0600.
func writeNew(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
