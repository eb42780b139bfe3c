package source

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A capture record is the document `ocl_exporter capture` writes at the
// top of each resource's file: whether the resource was read, and if not
// why. It is how a capture tells "none" from "could not read".
const (
	CaptureRecordGroup      = "ocl-exporter.io"
	CaptureRecordAPIVersion = CaptureRecordGroup + "/v1"
	CaptureRecordKind       = "CaptureRecord"
)

// CaptureRecord is one resource's capture outcome.
type CaptureRecord struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Resource is the resource as source.Resources() names it.
	Resource string `json:"resource"`
	// Captured is true when the resource was read: its objects follow in
	// the same file, none meaning none.
	Captured bool `json:"captured"`
	// Problem and Reason say why it was not captured.
	Problem Problem `json:"problem,omitempty"`
	Reason  string  `json:"reason,omitempty"`
}

// coverage is what a snapshot says about each kind: captured (an object of
// it, a List of it, a record saying so) or recorded as not captured.
// Anything else it does not hold at all.
type coverage struct {
	kinds  map[schema.GroupKind]bool
	failed map[string]string // resource name -> why it was not captured
}

func newCoverage() *coverage {
	return &coverage{kinds: map[schema.GroupKind]bool{}, failed: map[string]string{}}
}

// file notes the kind a file is named after ("secrets.yaml",
// "jobs.batch.yaml", as `capture` and the README's oc commands write
// them): it holds that resource, none if it holds no object.
func (c *coverage) file(name string) {
	base := strings.TrimSuffix(path.Base(name), path.Ext(name))
	for _, r := range Resources() {
		if base == r.GVR.Resource || base == r.Name {
			c.kinds[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] = true
		}
	}
}

// list notes the kind of a typed List ("SecretList"); an untyped "List",
// as `oc get -o yaml` writes it, is known by its items, or when empty by
// its file's name.
func (c *coverage) list(tm typeMeta) {
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if k, ok := strings.CutSuffix(tm.Kind, "List"); ok && k != "" && err == nil {
		if _, known := kinds[gv.WithKind(k).GroupKind()]; known {
			c.kinds[gv.WithKind(k).GroupKind()] = true
		}
	}
}

func (c *coverage) record(raw []byte) error {
	var rec CaptureRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return fmt.Errorf("%s: %w", CaptureRecordKind, err)
	}
	for _, r := range Resources() {
		if r.Name != rec.Resource {
			continue
		}
		if !rec.Captured {
			c.failed[r.Name] = strings.TrimSpace(string(rec.Problem) + ": " + rec.Reason)
			return nil
		}
		c.kinds[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] = true
		return nil
	}
	return nil // a resource this version does not watch
}

// notCaptured returns, by resource name, the error a backend gives for
// each resource the snapshot did not capture.
func (c *coverage) notCaptured() map[string]error {
	out := map[string]error{}
	for _, r := range Resources() {
		if why, failed := c.failed[r.Name]; failed {
			out[r.Name] = &NotCapturedError{Resource: r.Name, Why: why}
		} else if !c.kinds[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] {
			out[r.Name] = &NotCapturedError{Resource: r.Name}
		}
	}
	return out
}
