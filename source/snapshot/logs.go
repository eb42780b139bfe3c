package snapshot

// Container logs in a must-gather: the build pods' and the
// machine-os-builder's, read only where a container died without a
// termination message, which the kubelet fills with the log's end only
// under terminationMessagePolicy FallbackToLogsOnError (the build pods
// from OCPBUGS-84516; not the bare build pods of 4.16 and 4.17).

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// AnnotationLogFile is set on a pod whose termination message a snapshot's
// log file supplied: "<container>=<file>", the evidence to show.
const AnnotationLogFile = "ocl-exporter.io/log-file"

// AnnotationBuilderErrors is set on a machine-os-builder pod whose
// container log a snapshot holds: the log's file, then the errors at its
// end (klogError), one a line. Where a build never started (an
// invalid Containerfile, a build object the controller could not
// create), that log is the only place the cause is written.
const AnnotationBuilderErrors = "ocl-exporter.io/builder-errors"

// builderContainer is the machine-os-builder Deployment's container
// (machine-config-operator manifests/machineosbuilder/deployment.yaml).
const builderContainer = "machine-os-builder"

// logPods are the pods whose logs may say why a build failed: the build
// pods (their image-build container, where buildah runs) and the
// machine-os-builder's (every container).
func logPods(r Resource) (container string, ok bool) {
	switch {
	case r.GVR.Resource != "pods":
		return "", false
	case r.Name == "pods@machine-os-builder":
		return "", true
	}
	return imageBuildContainer, true
}

const imageBuildContainer = "image-build"

// logContainer is the container of p whose log the snapshot may read:
// "" when none, "*" for every container.
func logContainer(p *corev1.Pod) string {
	out := ""
	for _, r := range Resources() {
		c, ok := logPods(r)
		sel, err := labels.Parse(r.LabelSelector)
		if !ok || err != nil || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		if c == "" {
			return "*"
		}
		out = c
	}
	return out
}

// attachLogs reads, for each pod of the MCO's namespace among objs whose
// container died without a message, the end of the log of that
// container's run (current.log for the run that ended, previous.log for
// the one before a restart), and gives it to the container as the
// kubelet would have, naming the file on the pod.
func (l loader) attachLogs(t *tree, logs []treeFile, objs []runtime.Object) error {
	files := map[string]treeFile{}
	for _, f := range logs {
		base := path.Base(f.name)
		k := f.pod + "/" + f.container + "/" + strings.Replace(base, ".insecure.log", ".log", 1)
		// The insecure retry's file is there only when the first
		// attempt failed, leaving its own empty or partial.
		if had, ok := files[k]; !ok || had.size == 0 || (base != path.Base(had.name) && f.size > 0 && strings.HasSuffix(base, ".insecure.log")) {
			files[k] = f
		}
	}
	for _, o := range objs {
		p, ok := o.(*corev1.Pod)
		if !ok || p.Namespace != l.namespace || len(files) == 0 {
			continue
		}
		want := logContainer(p)
		if want == "" {
			continue
		}
		if f, ok := files[p.Name+"/"+builderContainer+"/current.log"]; ok && want == "*" {
			if err := l.builderErrors(t, f, p); err != nil {
				return err
			}
		}
		for _, s := range statusesOf(p) {
			if want != "*" && s.Name != want {
				continue
			}
			for _, c := range []struct {
				t    *corev1.ContainerStateTerminated
				file string
			}{{s.State.Terminated, "current.log"}, {s.LastTerminationState.Terminated, "previous.log"}} {
				f, ok := files[p.Name+"/"+s.Name+"/"+c.file]
				if !ok || c.t == nil || c.t.ExitCode == 0 || c.t.Message != "" {
					continue
				}
				msg, err := l.logTail(t, f)
				if err != nil {
					return err
				}
				if msg == "" {
					continue
				}
				c.t.Message = msg
				if p.Annotations == nil {
					p.Annotations = map[string]string{}
				}
				p.Annotations[AnnotationLogFile] = s.Name + "=" + f.name
			}
		}
	}
	return nil
}

// statusesOf points at the pod's init and app container statuses.
func statusesOf(p *corev1.Pod) []*corev1.ContainerStatus {
	var out []*corev1.ContainerStatus
	for _, ss := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range ss {
			out = append(out, &ss[i])
		}
	}
	return out
}

// logTimestamp is the time `oc adm inspect` asks each log line to start
// with (pod.go gatherContainerLogs: PodLogOptions.Timestamps).
var logTimestamp = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d) `)

// klogError is a klog line that reports an error, its time stripped: at
// level E, or the build controller's queue reporting a sync that failed,
// which it logs at level I (machine-config-operator
// pkg/controller/common/wrappedqueue.go: "Error executing %q in queue %s:
// %v", "Dropping item %s out of queue %s: %v").
var klogError = regexp.MustCompile(`(?m)^(E\d{4} .*|[IW]\d{4} .*\] (Error executing|Dropping item) .*)$`)

// builderErrors notes on the builder pod p the error lines at the end of
// its log f.
func (l loader) builderErrors(t *tree, f treeFile, p *corev1.Pod) error {
	r, err := t.open(f.name)
	if err != nil {
		return err
	}
	defer r.Close()
	b, err := tail(r, f.size, builderLogBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	lines := klogError.FindAll(logTimestamp.ReplaceAll(b, nil), -1)
	if len(lines) == 0 {
		return nil
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[AnnotationBuilderErrors] = f.name + "\n" + string(bytes.ToValidUTF8(bytes.Join(lines, []byte("\n")), nil))
	return nil
}

// builderLogBytes is how much of the end of the builder's log is searched
// for errors: the controller logs every sync, and retries a failing one
// with back-off, so its last errors are near the end.
const builderLogBytes = 16 << 10

// logTail is the end of a log file, as the kubelet's FallbackToLogsOnError
// keeps it (the last 2048 bytes, at most 80 lines), each line's timestamp
// removed.
func (l loader) logTail(t *tree, f treeFile) (string, error) {
	r, err := t.open(f.name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := tail(r, f.size, logTailBytes)
	if err != nil {
		return "", fmt.Errorf("%s: %w", f.name, err)
	}
	if int64(len(b)) == logTailBytes && f.size > logTailBytes {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:] // a line cut in two
		}
	}
	b = logTimestamp.ReplaceAll(b, nil)
	lines := bytes.SplitAfter(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	return string(bytes.ToValidUTF8(bytes.Join(lines, nil), nil)), nil
}
