package analysis

// The messages that explain a build's failure, read from its pods, its
// Job and their events, and the class they decide.

import (
	"slices"
	"sort"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// causeOf returns the class of the first message with a known cause,
// else Unknown with the first excerpt found, so an alert can still quote
// something.
func causeOf(msgs []classify.Message) classify.Result {
	out := classify.Result{Class: classify.Unknown}
	for _, m := range msgs {
		r := classify.Classify(m)
		if r.Class != classify.Unknown {
			return r
		}
		if out.Excerpt == "" {
			out.Excerpt = r.Excerpt
		}
	}
	return out
}

// failureMessages lists what may explain a build's failure, most specific
// first: the Interrupted condition (the Job was deleted), the failed pods
// newest first, the other pods, the Job's failure conditions, the Failed
// condition, and, only when no pod is left, the Warning events about the
// Job and its pods, then those about the build itself. The Failed
// condition said only "Build Failed" until OCPBUGS-112465
// (machine-config-operator#6431 on main, 5.1; #6463; backports #6479 to
// release-4.22, #6527 to release-4.19), which writes the failure's message
// there: it outlives the pods and the events' TTL.
func (c *Cluster) failureMessages(b *mcfgv1.MachineOSBuild, job *batchv1.Job, pods []*corev1.Pod) []classify.Message {
	var msgs []classify.Message
	if cond := FindCondition(b.Status.Conditions, conditionInterrupted); cond != nil && cond.Status == metav1.ConditionTrue {
		msgs = append(msgs, classify.Message{Origin: classify.OriginBuildCondition, Reason: cond.Reason, Text: cond.Message})
	}
	for _, failed := range []bool{true, false} {
		for _, p := range pods {
			if buildPodFailed(p) == failed {
				msgs = append(msgs, podMessages(p)...)
			}
		}
	}
	if job != nil {
		for _, jc := range job.Status.Conditions {
			if (jc.Type == batchv1.JobFailed || jc.Type == batchv1.JobFailureTarget) && jc.Status == corev1.ConditionTrue {
				msgs = append(msgs, classify.Message{Origin: classify.OriginJobCondition, Reason: jc.Reason, Text: jc.Message})
			}
		}
	}
	if cond := FindCondition(b.Status.Conditions, conditionFailed); cond != nil && cond.Status == metav1.ConditionTrue {
		msgs = append(msgs, classify.Message{Origin: classify.OriginBuildCondition, Reason: cond.Reason, Text: cond.Message})
	}
	if len(pods) == 0 {
		msgs = append(msgs, c.jobEventMessages(jobName(b))...)
		msgs = append(msgs, c.buildEventMessages(b.Name)...)
	}
	return msgs
}

// buildEventMessages are the build controller's Warning events about the
// MachineOSBuild (BuildFailed, JobFailed, BuildInterrupted), newest first.
func (c *Cluster) buildEventMessages(build string) []classify.Message {
	return eventMessages(c.ObjectEvents, func(e *corev1.Event) bool {
		return e.InvolvedObject.Kind == KindMachineOSBuild && e.InvolvedObject.Name == build
	})
}

// podMessages lists a pod's failure signals: its own status reason
// (Evicted), then the containers that failed (the image-build log tail
// first, as init containers come first), then the waiting reasons.
func podMessages(p *corev1.Pod) []classify.Message {
	var msgs []classify.Message
	if p.Status.Reason != "" {
		msgs = append(msgs, classify.Message{Origin: classify.OriginPodStatus, Reason: p.Status.Reason, Text: p.Status.Message})
	}
	for _, s := range containerStatuses(p) {
		if t := s.State.Terminated; t != nil && (t.ExitCode != 0 || t.Reason == reasonOOMKilled) {
			msgs = append(msgs, terminatedMessage(s.Name, t))
		}
	}
	return append(msgs, waitingMessages(p)...)
}

// terminatedMessage reads the image-build container's message as its log
// tail (terminationMessagePolicy FallbackToLogsOnError), unless the
// kubelet's reason already says why it died.
func terminatedMessage(container string, t *corev1.ContainerStateTerminated) classify.Message {
	origin := classify.OriginContainerTerminated
	if container == imageBuildContainer && t.Reason != reasonOOMKilled {
		origin = classify.OriginBuildLog
	}
	return classify.Message{Origin: origin, Reason: t.Reason, Text: t.Message}
}

// schedulingMessages is the pod's PodScheduled=False condition, read as a
// pod status reason (Unschedulable).
func schedulingMessages(p *corev1.Pod) []classify.Message {
	for _, pc := range p.Status.Conditions {
		if pc.Type == corev1.PodScheduled && pc.Status == corev1.ConditionFalse && pc.Reason != "" {
			return []classify.Message{{Origin: classify.OriginPodStatus, Reason: pc.Reason, Text: pc.Message}}
		}
	}
	return nil
}

func waitingMessages(p *corev1.Pod) []classify.Message {
	var msgs []classify.Message
	for _, s := range containerStatuses(p) {
		if w := s.State.Waiting; w != nil && w.Reason != "" {
			msgs = append(msgs, classify.Message{Origin: classify.OriginPodWaiting, Reason: w.Reason, Text: w.Message})
		}
	}
	return msgs
}

func containerStatuses(p *corev1.Pod) []corev1.ContainerStatus {
	return append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
}

// buildPodFailed: the pod failed, or a container of a pod that is never
// restarted exited non-zero, so the pod ends Failed once the others stop.
// The 4.16 and 4.17 bare build pod stays Running with its wait-for-done
// container waiting for a digest that never comes, and the build
// controller marks the build Failed on the first such container
// (release-4.16 pkg/controller/build/build_controller.go isBuildPodError).
func buildPodFailed(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	return p.Spec.RestartPolicy == corev1.RestartPolicyNever && slices.ContainsFunc(containerStatuses(p), func(s corev1.ContainerStatus) bool {
		return s.State.Terminated != nil && s.State.Terminated.ExitCode != 0
	})
}

func podDone(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

// jobEventMessages are the Warning events about the Job and its pods,
// newest first: what is left once the pods are gone.
func (c *Cluster) jobEventMessages(job string) []classify.Message {
	return c.jobEvents(job, func(*corev1.Event) bool { return true })
}

// jobCreateFailures are the Job controller's FailedCreate events last seen
// after since, newest first: the pod it could not create.
func (c *Cluster) jobCreateFailures(job string, since time.Time) []classify.Message {
	return c.jobEvents(job, func(e *corev1.Event) bool {
		return e.Reason == reasonFailedCreate && e.InvolvedObject.Kind == kindJob && EventLastSeen(e).After(since)
	})
}

func (c *Cluster) jobEvents(job string, keep func(*corev1.Event) bool) []classify.Message {
	return eventMessages(c.Events, func(e *corev1.Event) bool {
		return e.Namespace == c.Namespace && aboutJob(e.InvolvedObject, job) && keep(e)
	})
}

// eventMessages are the Warning events of all that keep selects, newest
// first.
func eventMessages(all []*corev1.Event, keep func(*corev1.Event) bool) []classify.Message {
	var events []*corev1.Event
	for _, e := range all {
		if e.Type == corev1.EventTypeWarning && keep(e) {
			events = append(events, e)
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return EventLastSeen(events[j]).Before(EventLastSeen(events[i])) })
	var msgs []classify.Message
	for _, e := range events {
		msgs = append(msgs, classify.Message{Origin: classify.OriginEvent, Reason: e.Reason, Text: e.Message})
	}
	return msgs
}

// aboutJob reports whether an event is about the Job or one of its pods,
// named <job>-<suffix> by the Job controller.
func aboutJob(o corev1.ObjectReference, job string) bool {
	switch o.Kind {
	case kindJob:
		return o.Name == job
	case "Pod":
		suffix, ok := strings.CutPrefix(o.Name, job+"-")
		return ok && suffix != "" && !strings.Contains(suffix, "-")
	}
	return false
}
