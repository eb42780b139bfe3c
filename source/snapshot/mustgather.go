package snapshot

// Must-gathers: the layout `oc adm inspect` writes (openshift/oc
// pkg/cli/admin/inspect/, util.go dirPathForInfo and filenameForInfo,
// namespace.go gatherNamespaceData, pod.go gatherPodData), alone or as
// the must-gather image runs it (openshift/must-gather
// collection-scripts/gather and gather_ppc). Paths decide what is read,
// before a byte of the file is: a must-gather holds the whole cluster, the
// exporter a few kinds in one namespace.

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a snapshot path is.
type pathRole int

const (
	roleObjects     pathRole = iota // objects to decode
	roleSkip                        // nothing the exporter reads
	roleTimestamp                   // when a must-gather was taken
	roleVersion                     // the must-gather image's release
	roleLog                         // a container log a must-gather holds
	roleGatherLog                   // the gather's own log (forms.go)
	roleCleanMark                   // must-gather-clean's watermark
	roleCleanReport                 // must-gather-clean's report
)

const (
	clusterScopedDir = "cluster-scoped-resources"
	namespacesDir    = "namespaces"
)

// mustGatherPath is what a path under cluster-scoped-resources/ or
// namespaces/ holds: the kind (a resource the exporter reads) and the
// namespace ("" for cluster-scoped). ok is false outside that layout.
type mustGatherPath struct {
	role      pathRole
	namespace string
	gk        schema.GroupKind
	// pod and container name a log's pod (roleLog).
	pod, container string
}

// layoutIndex is where a path enters a must-gather's layout: the index
// of its cluster-scoped-resources segment (a group directory follows) or
// namespaces segment (a namespace's own file or a group directory
// follows), -1 outside: a flat snapshot's namespaces/<ns>/secrets.yaml is
// no must-gather's.
func layoutIndex(segs []string) int {
	for i, s := range segs {
		rest := segs[i+1:]
		switch {
		case s == clusterScopedDir && len(rest) >= 2:
			return i
		case s == namespacesDir && len(rest) >= 3, s == namespacesDir && len(rest) == 2 && rest[1] == rest[0]+".yaml":
			return i
		}
	}
	return -1
}

// classifyMustGather decides, from segs (a path split at "/") from its
// layout segment on, what the path holds; mco is the MCO's namespace.
//
//	cluster-scoped-resources/<group>/<resource>.yaml           a List
//	cluster-scoped-resources/<group>/<resource>/<name>.yaml    one object
//	namespaces/<ns>/<group>/<resource>.yaml                    a <Kind>List
//	namespaces/<ns>/<group>/<resource>/<name>.yaml             one object
//	namespaces/<ns>/pods/<pod>/<pod>.yaml                      one Pod
//	namespaces/<ns>/pods/<pod>/<c>/<c>/logs/{current,previous}.log
//
// The group is "core" for the core group.
func classifyMustGather(segs []string, mco string) mustGatherPath {
	skip := mustGatherPath{role: roleSkip}
	ns := ""
	rest := segs[1:]
	if segs[0] == namespacesDir {
		ns, rest = segs[1], segs[2:]
	}
	if ns != "" && rest[0] == "pods" {
		return classifyPodPath(ns, rest[1:], mco)
	}
	if len(rest) < 2 || len(rest) > 3 || !isYAML(rest[len(rest)-1]) {
		return skip
	}
	group, resource := rest[0], rest[1]
	if len(rest) == 2 {
		resource = strings.TrimSuffix(resource, ".yaml")
	}
	if group == "core" {
		group = ""
	}
	for _, r := range Resources() {
		if r.GVR.Group == group && r.GVR.Resource == resource && r.WatchNamespace(mco) == ns {
			return mustGatherPath{role: roleObjects, namespace: ns, gk: schema.GroupKind{Group: group, Kind: r.Kind}}
		}
	}
	return skip
}

// classifyPodPath reads namespaces/<ns>/pods/...: the pod's own file and
// its containers' logs, in a namespace whose pods the exporter reads.
func classifyPodPath(ns string, rest []string, mco string) mustGatherPath {
	if ns != mco {
		return mustGatherPath{role: roleSkip}
	}
	pod := schema.GroupKind{Kind: "Pod"}
	switch {
	case len(rest) == 2 && rest[1] == rest[0]+".yaml":
		return mustGatherPath{role: roleObjects, namespace: ns, gk: pod}
	case len(rest) == 5 && rest[1] == rest[2] && rest[3] == "logs" && slices.Contains(logFiles, rest[4]):
		return mustGatherPath{role: roleLog, namespace: ns, gk: pod, pod: rest[0], container: rest[1]}
	}
	return mustGatherPath{role: roleSkip}
}

// logFiles are the files inspect writes a container's log to: the run
// that ended (current) and the one before (previous), each retried with
// InsecureSkipTLSVerifyBackend when the kubelet's certificate fails,
// into a file of its own (pod.go gatherContainerLogs); the first
// attempt's file is then left empty (writer.go simpleFileWriter.Write
// creates it before the request fails).
var logFiles = []string{"current.log", "previous.log", "current.insecure.log", "previous.insecure.log"}

func isYAML(name string) bool { return strings.HasSuffix(name, ".yaml") }

// Must-gather files outside the layout that say when and by which
// release it was taken.
const (
	timestampFile = "timestamp"
	versionFile   = "version"
)

// readTimestamp reads a timestamp file: one line per `oc adm inspect` or
// `oc adm must-gather` start and end, each time.Time's String()
// (inspect.go and mustgather.go logTimestamp, fmt "%v" of time.Now():
// "2025-10-17 13:00:00.123456789 +0000 UTC m=+0.041"). It returns the
// newest, zero when none parses.
func readTimestamp(r io.Reader) time.Time {
	var newest time.Time
	sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
	for sc.Scan() {
		line, _, _ := strings.Cut(strings.TrimSpace(sc.Text()), " m=") // the monotonic clock reading
		t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", line)
		if err == nil && t.After(newest) {
			newest = t
		}
	}
	return newest.UTC()
}

// mustGatherRelease matches the release the must-gather image's version
// file names (collection-scripts/gather: "openshift/must-gather", then
// OS_GIT_VERSION, e.g. "4.18.0-202502101302.p0.g1234567.assembly.stream.el9").
var mustGatherRelease = regexp.MustCompile(`(?m)^openshift/must-gather\s*\n\s*(\d+)\.(\d+)\.`)

// readRelease reads a version file: the major and minor release of the
// must-gather image, ok false for another image's or an unknown one
// (version's fallback "0.0.0-unknown").
func readRelease(r io.Reader) (release, bool) {
	b, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	m := mustGatherRelease.FindSubmatch(b)
	if m == nil {
		return release{}, false
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	rel := release{major, minor}
	return rel, rel.atLeast(4, 1) // not "0.0.0-unknown", an image built without a version
}

type release struct{ major, minor int }

func (r release) String() string { return fmt.Sprintf("%d.%d", r.major, r.minor) }

func (r release) atLeast(major, minor int) bool {
	return r.major > major || (r.major == major && r.minor >= minor)
}

// gatheredIn are the cluster-scoped resources the must-gather image of a
// release gathers, one file per object (Resource.GatheredFrom).
// Namespaced resources are known by the <Kind>List files inspect writes
// for each namespace, empty ones included.
func gatheredIn(r release) []Resource {
	var out []Resource
	for _, res := range Resources() {
		if res.GatheredFrom != 0 && r.atLeast(4, res.GatheredFrom) {
			out = append(out, res)
		}
	}
	return out
}

// gatheredBy notes the resources a must-gather of release r gathers: one
// it holds no file of has none, unless no cluster has none of it or the
// must-gather was altered since (coverage.notCaptured).
func (c *coverage) gatheredBy(r release) {
	c.release = r.String()
	for _, res := range gatheredIn(r) {
		c.gathered[scope{schema.GroupKind{Group: res.GVR.Group, Kind: res.Kind}, ""}] = true
	}
}
