package snapshot

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
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
	// Resource is the resource as Resources() names it.
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
	if rec.Resource != "" {
		st.claims.records = true
	}
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

// anyNamespace is the scope of a claim that names no namespace: a file
// named after a resource, or a List of it, that holds no object.
const anyNamespace = "*"

// scope is a kind in one namespace ("" for cluster-scoped kinds).
type scope struct {
	gk schema.GroupKind
	ns string
}

// coverage is what a snapshot says it captured: a resource by its own
// capture record, or a kind in a namespace by an object, a List or a file
// named after it. A resource is captured when its record says so or its
// kind is captured in the namespace it is watched in; anything else the
// snapshot does not hold at all.
type coverage struct {
	scopes   map[scope]bool
	recorded map[string]bool   // resource names a record says were captured
	failed   map[string]string // resource name -> why it was not captured
	// at is the newest time a record or a must-gather's timestamp gives,
	// zero without one.
	at time.Time
	// gathered are the scopes the must-gather image of release gathers
	// (gatheredBy), forms what was done to the must-gather since.
	gathered map[scope]bool
	release  string
	forms    forms
}

func newCoverage() *coverage {
	return &coverage{scopes: map[scope]bool{}, recorded: map[string]bool{}, failed: map[string]string{}, gathered: map[scope]bool{}}
}

// claims are what one file says it holds, committed when the file has
// been read whole: the kinds it is named after or holds a List of, the
// namespaces of its objects, the namespace its must-gather path names.
// A file of capture records claims only through its records: its objects
// belong to the sections the records announce.
type claims struct {
	kinds   map[schema.GroupKind]bool
	objects map[scope]bool
	// pathNamespace is the namespace a must-gather path names ("" for
	// cluster-scoped-resources/), nil outside a must-gather.
	pathNamespace *string
	records       bool
}

func newClaims() *claims {
	return &claims{kinds: map[schema.GroupKind]bool{}, objects: map[scope]bool{}}
}

// name notes the kind a file is named after ("secrets.yaml",
// "jobs.batch.yaml", as `capture` and oc get write them).
func (cl *claims) name(file string) {
	base := strings.TrimSuffix(path.Base(file), path.Ext(file))
	for _, r := range Resources() {
		if base == r.GVR.Resource || base == r.Name {
			cl.kinds[schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}] = true
		}
	}
}

// list notes the kind of a typed List ("SecretList"); an untyped "List",
// as `oc get -o yaml` writes it, is known by its items, or when empty by
// its file's name.
func (cl *claims) list(tm typeMeta) {
	if gk, ok := listOf(tm); ok {
		cl.kinds[gk] = true
	}
}

// listOf is the kind a typed List of a read kind holds.
func listOf(tm typeMeta) (schema.GroupKind, bool) {
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	k, ok := strings.CutSuffix(tm.Kind, "List")
	if !ok || k == "" || err != nil {
		return schema.GroupKind{}, false
	}
	gk := gv.WithKind(k).GroupKind()
	_, known := kinds[gk]
	return gk, known
}

func (cl *claims) object(gk schema.GroupKind, ns string) { cl.objects[scope{gk, ns}] = true }

// commit adds what the file claims to c: each kind in the namespace its
// path names, else in its objects' namespaces, else (a List or a file
// with none) in any.
func (c *coverage) commit(cl *claims) {
	if cl.records {
		return
	}
	for s := range cl.objects {
		cl.kinds[s.gk] = true
	}
	for gk := range cl.kinds {
		switch {
		case cl.pathNamespace != nil:
			c.scopes[scope{gk, *cl.pathNamespace}] = true
		case slices.ContainsFunc(slices.Collect(maps.Keys(cl.objects)), func(s scope) bool { return s.gk == gk }):
			for s := range cl.objects {
				if s.gk == gk {
					c.scopes[s] = true
				}
			}
		default:
			c.scopes[scope{gk, anyNamespace}] = true
		}
	}
}

func (c *coverage) record(rec CaptureRecord) {
	c.seen(rec.Time)
	for _, r := range Resources() {
		if r.Name != rec.Resource {
			continue
		}
		if !rec.Captured {
			c.failed[r.Name] = strings.TrimSpace(string(rec.Problem) + ": " + rec.Reason)
			return
		}
		c.recorded[r.Name] = true
		return
	}
	// a resource this version does not watch
}

// seen keeps the newest capture time.
func (c *coverage) seen(t *metav1.Time) {
	if t != nil && t.After(c.at) {
		c.at = t.Time
	}
}

// cut records that file holds resource incompletely: the resource is not
// captured, whatever else the snapshot holds of its kind.
func (c *coverage) cut(file, resource, what string) {
	c.failed[resource] = fmt.Sprintf("%s holds it incompletely (%s); capture it again", file, what)
}

// notCaptured returns, by resource name, the error a backend gives for
// each resource the snapshot did not capture, the MCO's namespace being
// mco.
func (c *coverage) notCaptured(mco string) map[string]error {
	out := map[string]error{}
	for _, r := range Resources() {
		gk := schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}
		s := scope{gk, r.WatchNamespace(mco)}
		why, failed := c.failed[r.Name]
		if !failed {
			why, failed = c.forms.lost[s]
		}
		switch {
		case failed:
			out[r.Name] = &NotCapturedError{Resource: r.Name, Why: why}
		case c.recorded[r.Name], c.scopes[scope{gk, anyNamespace}], c.scopes[s]:
		case c.gathered[s] && !r.NeverNone && !c.forms.altered():
			// gathered, and none
		default:
			out[r.Name] = c.absent(r, s)
		}
	}
	return out
}

// absent is the error for r, of which the snapshot holds nothing in s.
func (c *coverage) absent(r Resource, s scope) error {
	why := c.forms.absentWhy(s)
	if why == "" && c.gathered[s] {
		why = fmt.Sprintf("the must-gather image of %s gathers them, yet the must-gather holds no file of them: a cluster always has some, so they were removed after the gather", c.release)
	}
	switch {
	case why != "":
		return &NotCapturedError{Resource: r.Name, Why: why}
	case r.Namespaced:
		return &NotCapturedError{Resource: r.Name, Namespace: s.ns}
	}
	return &NotCapturedError{Resource: r.Name}
}
