package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// kind describes how a snapshot document of one group and kind is loaded.
type kind struct {
	version    string
	namespaced bool
	// new returns the typed object to decode into; nil means the kind is
	// kept as metadata only, as the live source does.
	new func() runtime.Object
}

// kinds are the objects a snapshot may hold; anything else is skipped.
var kinds = map[schema.GroupKind]kind{
	{Group: mcfgv1.GroupName, Kind: "MachineOSConfig"}:   {version: "v1", new: func() runtime.Object { return &mcfgv1.MachineOSConfig{} }},
	{Group: mcfgv1.GroupName, Kind: "MachineOSBuild"}:    {version: "v1", new: func() runtime.Object { return &mcfgv1.MachineOSBuild{} }},
	{Group: mcfgv1.GroupName, Kind: "MachineConfigPool"}: {version: "v1", new: func() runtime.Object { return &mcfgv1.MachineConfigPool{} }},
	{Group: mcfgv1.GroupName, Kind: "MachineConfigNode"}: {version: "v1", new: func() runtime.Object { return &mcfgv1.MachineConfigNode{} }},
	{Group: mcfgv1.GroupName, Kind: "MachineConfig"}:     {version: "v1"},
	{Group: configv1.GroupName, Kind: "ClusterOperator"}: {version: "v1", new: func() runtime.Object { return &configv1.ClusterOperator{} }},
	{Group: "", Kind: "Node"}:                            {version: "v1"},
	{Group: "", Kind: "Secret"}:                          {version: "v1", namespaced: true},
	{Group: "", Kind: "ConfigMap"}:                       {version: "v1", namespaced: true},
	{Group: "", Kind: "Pod"}:                             {version: "v1", namespaced: true, new: func() runtime.Object { return &corev1.Pod{} }},
	{Group: "", Kind: "Event"}:                           {version: "v1", namespaced: true, new: func() runtime.Object { return &corev1.Event{} }},
	{Group: "batch", Kind: "Job"}:                        {version: "v1", namespaced: true, new: func() runtime.Object { return &batchv1.Job{} }},
	{Group: "apps", Kind: "Deployment"}:                  {version: "v1", namespaced: true, new: func() runtime.Object { return &appsv1.Deployment{} }},
}

// OpenSnapshot loads a snapshot file or directory tree into memory.
func OpenSnapshot(p string, logger *slog.Logger) (*Memory, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	fsys, root := os.DirFS(p), "."
	if !info.IsDir() {
		fsys, root = os.DirFS(filepath.Dir(p)), filepath.Base(p)
	}
	objs, err := Load(fsys, root, logger)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", p, err)
	}
	return NewMemory(objs)
}

// Load reads every .yaml, .yml and .json file at or under root: single
// objects, kind: List, multi-document files and `oc get -o yaml` output. A
// document it cannot read is an error naming the file and the document;
// kinds the exporter does not use are skipped. Secrets, ConfigMaps, Nodes
// and MachineConfigs are kept as metadata only, data never leaves this
// function. When the same object appears twice, the last one read wins.
func Load(fsys fs.FS, root string, logger *slog.Logger) ([]runtime.Object, error) {
	var files []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(path.Ext(p)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no .yaml, .yml or .json files under %q", root)
	}
	byKey := map[string]runtime.Object{}
	var order []string
	var older olderObjects
	for _, f := range files {
		objs, err := loadFile(fsys, f, logger, &older)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			k := key(o)
			if _, dup := byKey[k]; dup {
				logger.Debug("snapshot object appears more than once; keeping the last", "object", k, "file", f)
			} else {
				order = append(order, k)
			}
			byKey[k] = o
		}
	}
	older.report(logger)
	out := make([]runtime.Object, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out, nil
}

func key(o runtime.Object) string {
	m, _ := o.(metav1.Object)
	return o.GetObjectKind().GroupVersionKind().GroupKind().String() + "/" + m.GetNamespace() + "/" + m.GetName()
}

func loadFile(fsys fs.FS, name string, logger *slog.Logger, older *olderObjects) ([]runtime.Object, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []runtime.Object
	for doc := 1; ; doc++ {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: not valid YAML or JSON: %w", name, doc, err)
		}
		if len(u.Object) == 0 {
			continue // an empty document, e.g. a trailing ---
		}
		objs, err := convertDocument(u, logger, older)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		out = append(out, objs...)
	}
}

func convertDocument(u *unstructured.Unstructured, logger *slog.Logger, older *olderObjects) ([]runtime.Object, error) {
	if _, isList := u.Object["items"]; isList {
		list, err := u.ToList()
		if err != nil {
			return nil, fmt.Errorf("reading %s items: %w", u.GetKind(), err)
		}
		var out []runtime.Object
		for i := range list.Items {
			objs, err := convertDocument(&list.Items[i], logger, older)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	gvk := u.GroupVersionKind()
	if gvk.Kind == "" || u.GetAPIVersion() == "" {
		return nil, errors.New("no apiVersion or kind: this is not a Kubernetes object")
	}
	k, known := kinds[gvk.GroupKind()]
	if !known {
		logger.Debug("skipping a kind the exporter does not use", "kind", gvk.String(), "name", u.GetName())
		return nil, nil
	}
	if gvk.Version != k.version {
		if known, readable := older.upgrade(u, k.version, logger); known {
			if !readable {
				return nil, nil
			}
			return convertDocument(u, logger, older)
		}
		return nil, fmt.Errorf("%s %q has apiVersion %s, but only %s/%s is supported (current OpenShift serves that one)",
			gvk.Kind, u.GetName(), u.GetAPIVersion(), gvk.Group, k.version)
	}
	if u.GetName() == "" {
		return nil, fmt.Errorf("%s has no metadata.name", gvk.Kind)
	}
	if k.namespaced && u.GetNamespace() == "" {
		return nil, fmt.Errorf("%s %q has no metadata.namespace", gvk.Kind, u.GetName())
	}
	var obj runtime.Object
	if k.new == nil {
		meta := &metav1.PartialObjectMetadata{}
		if md, ok := u.Object["metadata"].(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &meta.ObjectMeta); err != nil {
				return nil, fmt.Errorf("%s %q: reading metadata: %w", gvk.Kind, u.GetName(), err)
			}
		}
		obj = meta
	} else {
		obj = k.new()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return nil, fmt.Errorf("%s %q does not match the %s schema: %w", gvk.Kind, u.GetName(), gvk.GroupVersion(), err)
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return []runtime.Object{obj}, nil
}
