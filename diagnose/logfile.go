package diagnose

import (
	"cmp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// nameLogFiles names, on each finding whose cause was read from a
// container log a must-gather holds (the release left the container no
// termination message), that log file: the evidence to open.
func (r *Report) nameLogFiles(c *analysis.Cluster) {
	files := logFiles(append(append([]*corev1.Pod(nil), c.Pods...), c.BuilderPods...))
	if len(files) == 0 {
		return
	}
	name := func(checks []Check) {
		for i := range checks {
			for j := range checks[i].Findings {
				f := &checks[i].Findings[j]
				if excerpt := strings.TrimSpace(f.Excerpt); excerpt != "" {
					for _, lf := range files {
						if strings.Contains(lf.message, excerpt) {
							f.LogFile = lf.file
							break
						}
					}
				}
			}
		}
	}
	name(r.Cluster)
	for _, p := range r.Pools {
		for _, s := range p.Stages {
			name(s.Checks)
		}
	}
}

type logFile struct{ file, message string }

// logFiles are the messages the snapshot read from log files, with the
// file of each (source.AnnotationLogFile: "<container>=<file>").
func logFiles(pods []*corev1.Pod) []logFile {
	var out []logFile
	for _, p := range pods {
		container, file, ok := strings.Cut(p.Annotations[snapshot.AnnotationLogFile], "=")
		if !ok {
			continue
		}
		for _, ss := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for _, s := range ss {
				for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
					if s.Name == container && t != nil && t.Message != "" {
						out = append(out, logFile{file: file, message: t.Message})
					}
				}
			}
		}
	}
	return out
}

// builderLogCause reads, for a build of MachineOSConfig mosc that never
// started, the builder's last logged error naming mosc, where a snapshot
// holds its log: the cause (an invalid Containerfile, a build object it
// could not create) is written nowhere else. It leaves fd as it is
// without one.
func (b *reportBuilder) builderLogCause(fd *Finding, mosc string) {
	for _, p := range b.c.BuilderPods {
		file, lines, ok := strings.Cut(p.Annotations[snapshot.AnnotationBuilderErrors], "\n")
		if !ok {
			continue
		}
		all := strings.Split(lines, "\n")
		for i := len(all) - 1; i >= 0; i-- {
			if strings.Contains(all[i], mosc) {
				msg := klogMessage(all[i])
				r := classify.Classify(classify.Message{Origin: classify.OriginBuilderPod, Text: msg})
				fd.Class, fd.Excerpt, fd.LogFile = r.Class, cmp.Or(r.Excerpt, msg), file
				return
			}
		}
	}
}

// klogMessage is a klog line's message: after its header
// ("I1017 12:31:15.118235 1 file.go:249] ") and the build controller
// queue's words around the error ("Error executing %q in queue %s: ").
func klogMessage(line string) string {
	_, msg, ok := strings.Cut(line, "] ")
	if !ok {
		return line
	}
	if _, err, ok := strings.Cut(msg, " in queue "); ok && strings.HasPrefix(msg, "Error executing ") {
		if _, e, ok := strings.Cut(err, ": "); ok {
			return e
		}
	}
	return msg
}
