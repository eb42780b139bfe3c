package snapshot

// The writer of what the snapshot reader reads: `ocl_exporter capture`
// renders each watched resource's cache as one file, and WriteCapture
// puts the files in place.

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Cached is one watched resource and the objects its cache holds, trimmed
// as the exporter keeps them.
type Cached struct {
	Resource Resource
	Objects  []runtime.Object
}

// CaptureFiles renders one multi-document YAML file per resource, each
// starting with a header saying when, from where (server) and what, then
// the resource's CaptureRecord: captured, or not and why, so that "none"
// and "could not read" differ when the snapshot is read back. status is
// each resource's by name.
func CaptureFiles(cached []Cached, status map[string]ResourceStatus, at time.Time, server, namespace string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var errs []error
	for _, c := range cached {
		st, ok := status[c.Resource.Name]
		b, err := captureFile(c, st, ok && st.Available, at, server, namespace)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files[c.Resource.Name+".yaml"] = b
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("capture: %w", errors.Join(errs...))
	}
	return files, nil
}

// captureFile renders one resource's file: its header and record, then,
// when captured, its objects and the end record.
func captureFile(c Cached, st ResourceStatus, captured bool, at time.Time, server, namespace string) ([]byte, error) {
	r := c.Resource
	rec := CaptureRecord{
		APIVersion: CaptureRecordAPIVersion, Kind: CaptureRecordKind,
		Resource: r.Name, Captured: captured, Problem: st.Problem, Reason: st.Reason,
		Time: &metav1.Time{Time: at.UTC().Truncate(time.Second)},
	}
	var b bytes.Buffer
	if !captured {
		fmt.Fprintf(&b, "# ocl_exporter capture of %s at %s from %s (MCO namespace %s): NOT CAPTURED, the resource\n"+
			"# could not be read (see the record below); a snapshot read from it treats %s as unknown, not empty.\n",
			r.Name, at.UTC().Format(time.RFC3339), server, namespace, r.Name)
		if err := writeDocument(&b, rec, r.Name); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	rec.Objects = new(len(c.Objects))
	fmt.Fprintf(&b, "# ocl_exporter capture of %s at %s from %s (MCO namespace %s): %d object(s),\n",
		r.Name, at.UTC().Format(time.RFC3339), server, namespace, len(c.Objects))
	b.WriteString("# trimmed as the exporter keeps them")
	if r.MetadataOnly {
		b.WriteString(", metadata only")
	}
	b.WriteString(". Read it with ocl_exporter --snapshot or diagnose --snapshot.\n")
	if err := writeDocument(&b, rec, r.Name); err != nil {
		return nil, err
	}
	gvk := r.GVR.GroupVersion().WithKind(r.Kind)
	objs := slices.Clone(c.Objects)
	slices.SortFunc(objs, func(x, y runtime.Object) int { return strings.Compare(objectKey(x), objectKey(y)) })
	var errs []error
	for _, obj := range objs {
		obj = obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		if err := writeDocument(&b, obj, r.Kind+" "+objectKey(obj)); err != nil {
			errs = append(errs, err)
		}
	}
	// The end record: a reader tells a whole file from a cut one.
	end := CaptureRecord{APIVersion: rec.APIVersion, Kind: rec.Kind, Resource: rec.Resource, End: true}
	if err := writeDocument(&b, end, r.Name); err != nil {
		errs = append(errs, err)
	}
	return b.Bytes(), errors.Join(errs...)
}

// writeDocument appends v to b as one YAML document; what names v in an
// error.
func writeDocument(b *bytes.Buffer, v any, what string) error {
	y, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	b.WriteString("---\n")
	b.Write(y)
	return nil
}

// objectKey orders a resource's objects: by namespace, then name.
func objectKey(o runtime.Object) string {
	m, ok := o.(metav1.Object)
	if !ok {
		return ""
	}
	return m.GetNamespace() + "/" + m.GetName()
}
