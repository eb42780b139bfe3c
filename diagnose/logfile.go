package diagnose

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source"
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
		container, file, ok := strings.Cut(p.Annotations[source.AnnotationLogFile], "=")
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
