package source

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A capture record is the document `ocl_exporter capture` writes at the
// top of each resource's file: whether the resource was read, and if not
// why. It is how a capture tells "none" from "could not read". A captured
// resource's record also says how many objects follow, and a second
// record (End) follows them: a file cut short (a copy that stopped, a
// full disk) lacks it, and the resource is then not captured rather than
// read as holding fewer objects (missing Secrets would read as "missing
// secret"). Records written before 0.2 have neither: their resources are
// read as complete, as they were.
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
	// Objects is how many objects of a captured resource follow, up to
	// the End record.
	Objects *int `json:"objects,omitempty"`
	// End closes the objects of Resource.
	End bool `json:"end,omitempty"`
	// Time is when the capture was taken: a snapshot is evaluated then,
	// not when it is read. A record may carry only a time (a snapshot
	// saved with oc get, such as examples/snapshot).
	Time *metav1.Time `json:"time,omitempty"`
}

// section is a captured resource whose objects are being read: its
// record announced want objects, seen were read so far.
type section struct {
	resource   string
	want, seen int
}

// captureRecord reads a capture record of the file: a start opens a
// section (closing one left open as cut), an end closes it.
func (st *fileState) captureRecord(raw []byte) error {
	var rec CaptureRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return fmt.Errorf("%s: %w", CaptureRecordKind, err)
	}
	if rec.End {
		switch open := st.open; {
		case open == nil || open.resource != rec.Resource:
			st.cov.cut(st.name, rec.Resource, "an end record without its start")
		case open.seen != open.want:
			st.cov.cut(st.name, rec.Resource, fmt.Sprintf("%d objects where its record announced %d", open.seen, open.want))
		}
		st.open = nil
		return nil
	}
	st.closeCut()
	st.cov.record(rec)
	if rec.Captured && rec.Objects != nil {
		st.open = &section{resource: rec.Resource, want: *rec.Objects}
	}
	return nil
}

// closeCut marks a section still open, at the next record or the end of
// the file, as cut short.
func (st *fileState) closeCut() {
	if o := st.open; o != nil {
		st.cov.cut(st.name, o.resource, fmt.Sprintf("cut short after %d of its %d objects, before its end record", o.seen, o.want))
		st.open = nil
	}
}

// counted adds n objects read to the open section.
func (st *fileState) counted(n int) {
	if st.open != nil {
		st.open.seen += n
	}
}

// coverage is what a snapshot says about each kind: captured (an object of
// it, a List of it, a record saying so) or recorded as not captured.
// Anything else it does not hold at all.
type coverage struct {
	kinds  map[schema.GroupKind]bool
	failed map[string]string // resource name -> why it was not captured
	// at is the newest time a record gives, zero without one.
	at time.Time
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

func (c *coverage) record(rec CaptureRecord) {
	if rec.Time != nil && rec.Time.After(c.at) {
		c.at = rec.Time.Time
	}
	for _, r := range Resources() {
		if r.Name != rec.Resource {
			continue
		}
		if !rec.Captured {
			c.failed[r.Name] = strings.TrimSpace(string(rec.Problem) + ": " + rec.Reason)
			return
		}
		c.kinds[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] = true
		return
	}
	// a resource this version does not watch
}

// cut records that file holds resource incompletely: the resource is not
// captured, whatever else the snapshot holds of its kind.
func (c *coverage) cut(file, resource, what string) {
	c.failed[resource] = fmt.Sprintf("%s holds it incompletely (%s); capture it again", file, what)
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
