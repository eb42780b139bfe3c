//go:build scale

package scale

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// change is one write of the churn at a time of the simulated hour: a
// patch of an object or its status, a creation or a deletion.
type change struct {
	at   time.Duration
	kind string // what the change stands for, counted per hour
	// verb is "patch", "status", "create" or "delete"; res the object's
	// apiVersion/kind, name and namespace; body the patch (a strategic
	// merge patch for nodes, a merge patch otherwise) or the object.
	verb            string
	apiVersion, res string
	name, namespace string
	body            []byte
}

// hour is the simulated hour.
const hour = time.Hour

// Node update timeline, after the MCO's order (machine-config-daemon's
// update, upgrade_monitor.go's MachineConfigNode conditions): cordon,
// drain, the OS and files, reboot, uncordon. Six minutes a node, as a
// drained and rebooted cloud node takes.
const nodeUpdate = 6 * time.Minute

// rolloutPool is the pool the hour rolls out a new image to, 10% of its
// nodes at a time; buildPool builds a new image every 30 minutes.
const (
	rolloutPool = "layered0"
	buildPool   = "layered1"
)

// plan is the hour of changes of a cluster of nodes created by objects:
// each node's status every 5 minutes (the kubelet's
// nodeStatusReportFrequency, and on change: NotReady and Ready while it
// reboots), the rollout of rolloutPool's image (its nodes' annotations,
// spec and MachineConfigNodes, the pool's counts, the MCD's events), a
// MachineOSBuild of buildPool every 30 minutes (its Job, pod, status,
// events, the MachineOSConfig), and unrelated Normal events, one every
// 10 s. tag makes the names of this run's new configs, images and
// builds unique.
func plan(nodes []string, pools map[string]string, start time.Time, tag string) []change {
	var out []change
	for i, n := range nodes {
		offset := time.Duration(i) * 5 * time.Minute / time.Duration(len(nodes))
		for at := offset; at < hour; at += 5 * time.Minute {
			out = append(out, heartbeat(n, at, start))
		}
	}
	out = append(out, rollout(nodes, pools, start, tag)...)
	for b, at := 0, time.Duration(0); at < hour; b, at = b+1, at+30*time.Minute {
		out = append(out, build(fmt.Sprintf("%s-%s-%d", buildPool, tag, b), at, start)...)
	}
	for at := time.Duration(0); at < hour; at += 10 * time.Second {
		out = append(out, event(fmt.Sprintf("workload.%s.%d", tag, at/time.Second), "default", at, start, "Normal", "Pulled", "Pod", "workload-0", "Container image pulled"))
	}
	slices.SortStableFunc(out, func(a, b change) int { return int(a.at - b.at) })
	return out
}

func ts(start time.Time, at time.Duration) string {
	return start.Add(at).UTC().Format(time.RFC3339)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and numbers
	}
	return b
}

// nodeConditions are the kubelet's, Ready with readiness.
func nodeConditions(heartbeat string, ready bool) []any {
	var conds []any
	for _, c := range []string{"MemoryPressure", "DiskPressure", "PIDPressure"} {
		conds = append(conds, map[string]any{"type": c, "status": "False", "lastHeartbeatTime": heartbeat})
	}
	status, reason := "True", "KubeletReady"
	if !ready {
		status, reason = "False", "KubeletNotReady"
	}
	return append(conds, map[string]any{"type": "Ready", "status": status, "reason": reason, "lastHeartbeatTime": heartbeat})
}

func heartbeat(node string, at time.Duration, start time.Time) change {
	body := mustJSON(map[string]any{"status": map[string]any{"conditions": nodeConditions(ts(start, at), true)}})
	return change{at: at, kind: "node status", verb: "status", apiVersion: "v1", res: "Node", name: node, body: body}
}

// rollout updates rolloutPool's nodes in batches of 10%, each as the MCO
// does, the pool and its MachineOSConfig targeting a new image first.
func rollout(nodes []string, pools map[string]string, start time.Time, tag string) []change {
	var members []string
	for _, n := range nodes {
		if pools[n] == rolloutPool {
			members = append(members, n)
		}
	}
	config, image := "rendered-"+rolloutPool+"-"+tag, "quay.io/example/os@sha256:"+fmt.Sprintf("%064x", len(tag)+len(members))
	mcp := "machineconfiguration.openshift.io/v1"
	out := []change{
		{kind: "pool", verb: "patch", apiVersion: mcp, res: "MachineConfigPool", name: rolloutPool,
			body: mustJSON(map[string]any{"spec": map[string]any{"maxUnavailable": "10%", "configuration": map[string]any{"name": config}}})},
		{kind: "MachineOSConfig", verb: "status", apiVersion: mcp, res: "MachineOSConfig", name: rolloutPool,
			body: mustJSON(map[string]any{"status": map[string]any{"currentImagePullSpec": image}})},
	}
	batch := (len(members) + 9) / 10
	updated := 0
	for i, n := range members {
		at := time.Duration(i/batch)*nodeUpdate + time.Duration(i%batch)*2*time.Second
		if at+nodeUpdate > hour {
			break
		}
		out = append(out, updateNode(n, config, image, at, start)...)
		updated++
		out = append(out, change{at: at + nodeUpdate, kind: "pool", verb: "status", apiVersion: mcp, res: "MachineConfigPool", name: rolloutPool,
			body: mustJSON(map[string]any{"status": map[string]any{"updatedMachineCount": updated}})})
	}
	return out
}

// mcnStep is a step of a node's update: MachineConfigNode conditions
// set, node annotations, spec or readiness changed, an event posted.
type mcnStep struct {
	after       time.Duration
	conditions  map[string]string // type: status
	annotations map[string]string
	cordon      *bool
	ready       *bool
	event       string
}

func updateNode(node, config, image string, at time.Duration, start time.Time) []change {
	yes, no := true, false
	steps := []mcnStep{
		{0, nil, map[string]string{analysis.NodeAnnotationDesiredConfig: config, analysis.NodeAnnotationDesiredImage: image}, nil, nil, ""},
		{2 * time.Second, map[string]string{"Updated": "False", "UpdatePrepared": "Unknown"}, map[string]string{analysis.NodeAnnotationState: "Working"}, nil, nil, ""},
		{5 * time.Second, map[string]string{"UpdatePrepared": "True", "UpdateExecuted": "Unknown"}, nil, nil, nil, ""},
		{8 * time.Second, map[string]string{"Cordoned": "True"}, nil, &yes, nil, ""},
		{10 * time.Second, map[string]string{"Drained": "Unknown"}, nil, nil, nil, "Drain"},
		{70 * time.Second, map[string]string{"Drained": "True"}, nil, nil, nil, ""},
		{72 * time.Second, map[string]string{"AppliedFilesAndOS": "Unknown"}, nil, nil, nil, "OSUpdateStarted"},
		{180 * time.Second, map[string]string{"AppliedFilesAndOS": "True", "UpdateExecuted": "True", "UpdatePostActionComplete": "Unknown", "RebootedNode": "Unknown"}, nil, nil, nil, "Reboot"},
		{190 * time.Second, nil, nil, nil, &no, ""},
		{300 * time.Second, map[string]string{"RebootedNode": "True", "UpdatePostActionComplete": "True"}, nil, nil, &yes, ""},
		{310 * time.Second, map[string]string{"Resumed": "True", "UpdateComplete": "True"},
			map[string]string{analysis.NodeAnnotationCurrentConfig: config, analysis.NodeAnnotationCurrentImage: image, analysis.NodeAnnotationState: "Done"}, nil, nil, ""},
		{315 * time.Second, map[string]string{"Uncordoned": "True", "Updated": "True"}, nil, &no, nil, "NodeDone"},
	}
	mcp := "machineconfiguration.openshift.io/v1"
	out := []change{{at: at, kind: "MachineConfigNode", verb: "patch", apiVersion: mcp, res: "MachineConfigNode", name: node,
		body: mustJSON(map[string]any{"spec": map[string]any{"configVersion": map[string]any{"desired": config}}})}}
	conditions := map[string]string{}
	for i, s := range steps {
		when := at + s.after
		if s.annotations != nil || s.cordon != nil {
			patch := map[string]any{}
			if s.annotations != nil {
				patch["metadata"] = map[string]any{"annotations": s.annotations}
			}
			if s.cordon != nil {
				patch["spec"] = map[string]any{"unschedulable": *s.cordon}
			}
			out = append(out, change{at: when, kind: "node", verb: "patch", apiVersion: "v1", res: "Node", name: node, body: mustJSON(patch)})
		}
		if s.ready != nil {
			body := mustJSON(map[string]any{"status": map[string]any{"conditions": nodeConditions(ts(start, when), *s.ready)}})
			out = append(out, change{at: when, kind: "node status", verb: "status", apiVersion: "v1", res: "Node", name: node, body: body})
		}
		if s.conditions != nil {
			for t, st := range s.conditions {
				conditions[t] = st
			}
			out = append(out, change{at: when, kind: "MachineConfigNode", verb: "status", apiVersion: mcp, res: "MachineConfigNode", name: node,
				body: mcnStatus(conditions, image, ts(start, when))})
		}
		if s.event != "" {
			out = append(out, event(fmt.Sprintf("%s.%s.%d", node, config, i), snapshot.EventNamespace, when, start, "Normal", s.event, "Node", node, s.event+" on "+node))
		}
	}
	return out
}

// mcnTypes are the MachineConfigNode conditions of a cluster without
// ImageModeStatusReporting, in the MCD's order.
var mcnTypes = []string{"UpdatePrepared", "UpdateExecuted", "UpdatePostActionComplete", "UpdateComplete", "Updated", "Resumed",
	"Drained", "AppliedFilesAndOS", "Cordoned", "Uncordoned", "RebootedNode", "NodeDegraded"}

// mcnStatus is a MachineConfigNode's status with every condition: those
// reached as set, the others not yet occurred (upgrade_monitor.go).
func mcnStatus(set map[string]string, image, now string) []byte {
	var conds []any
	for _, t := range mcnTypes {
		status, reason, message := "False", "NotYetOccurred", "This node has not yet entered the "+t+" phase"
		if s, ok := set[t]; ok {
			status, reason, message = s, t, "Action during update to "+image+": "+t
		}
		conds = append(conds, map[string]any{"type": t, "status": status, "reason": reason, "message": message, "lastTransitionTime": now})
	}
	return mustJSON(map[string]any{"status": map[string]any{"conditions": conds}})
}

// build is a MachineOSBuild of buildPool from its creation to its
// success: its Job and pod, their events (a Warning among them, which the
// exporter's narrow event watches pass), the MachineOSConfig's current
// build and image, the ephemeral objects deleted.
func build(name string, at time.Duration, start time.Time) []change {
	mcp := "machineconfiguration.openshift.io/v1"
	job := "build-" + name
	labels := map[string]any{snapshot.LabelOnClusterLayering: "", analysis.LabelMachineOSBuild: name, analysis.LabelMachineOSConfig: buildPool, analysis.LabelTargetPool: buildPool}
	conds := func(phase string, when string) []any {
		var out []any
		for _, t := range []string{"Prepared", "Building", "Failed", "Interrupted", "Succeeded"} {
			s := "False"
			if t == phase {
				s = "True"
			}
			out = append(out, map[string]any{"type": t, "status": s, "reason": t, "message": t, "lastTransitionTime": when})
		}
		return out
	}
	mosb := map[string]any{"apiVersion": mcp, "kind": "MachineOSBuild",
		"metadata": map[string]any{"name": name, "labels": map[string]any{analysis.LabelTargetPool: buildPool, analysis.LabelMachineOSConfig: buildPool}},
		"spec": map[string]any{"machineConfig": map[string]any{"name": "rendered-" + buildPool + "-" + name}, "machineOSConfig": map[string]any{"name": buildPool},
			"renderedImagePushSpec": "quay.io/example/os:" + name},
		"status": map[string]any{"conditions": conds("Prepared", ts(start, at))}}
	jobObj := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": job, "namespace": snapshot.DefaultNamespace, "labels": labels},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never",
			"containers": []any{map[string]any{"name": "image-build", "image": "quay.io/example/builder"}}}}}}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": job + "-x7k2p", "namespace": snapshot.DefaultNamespace,
		"labels": map[string]any{snapshot.LabelJobName: job}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "image-build", "image": "quay.io/example/builder"}}}}
	digest := "quay.io/example/os@sha256:" + fmt.Sprintf("%064x", at/time.Second+1)
	out := []change{
		{at: at, kind: "MachineOSBuild", verb: "create", apiVersion: mcp, res: "MachineOSBuild", name: name, body: mustJSON(mosb)},
		{at: at, kind: "MachineOSConfig", verb: "patch", apiVersion: mcp, res: "MachineOSConfig", name: buildPool,
			body: mustJSON(map[string]any{"metadata": map[string]any{"annotations": map[string]any{analysis.AnnotationCurrentBuild: name}}})},
		{at: at + 20*time.Second, kind: "build Job", verb: "create", apiVersion: "batch/v1", res: "Job", name: job, namespace: snapshot.DefaultNamespace, body: mustJSON(jobObj)},
		{at: at + 20*time.Second, kind: "build pod", verb: "create", apiVersion: "v1", res: "Pod", name: job + "-x7k2p", namespace: snapshot.DefaultNamespace, body: mustJSON(pod)},
		event(name+".sched", snapshot.DefaultNamespace, at+25*time.Second, start, "Warning", "FailedScheduling", "Pod", job+"-x7k2p", "0/3 nodes are available: 3 Insufficient memory."),
		event(name+".pulled", snapshot.DefaultNamespace, at+40*time.Second, start, "Normal", "Pulled", "Pod", job+"-x7k2p", "Container image pulled"),
		event(name+".started", snapshot.DefaultNamespace, at+45*time.Second, start, "Normal", "Started", "Pod", job+"-x7k2p", "Started container image-build"),
		{at: at + 60*time.Second, kind: "MachineOSBuild", verb: "status", apiVersion: mcp, res: "MachineOSBuild", name: name,
			body: mustJSON(map[string]any{"status": map[string]any{"conditions": conds("Building", ts(start, at+60*time.Second)), "buildStart": ts(start, at+60*time.Second)}})},
		{at: at + 10*time.Minute, kind: "MachineOSBuild", verb: "status", apiVersion: mcp, res: "MachineOSBuild", name: name,
			body: mustJSON(map[string]any{"status": map[string]any{"conditions": conds("Succeeded", ts(start, at+10*time.Minute)),
				"buildEnd": ts(start, at+10*time.Minute), "digestedImagePushSpec": digest}})},
		{at: at + 10*time.Minute, kind: "MachineOSConfig", verb: "status", apiVersion: mcp, res: "MachineOSConfig", name: buildPool,
			body: mustJSON(map[string]any{"status": map[string]any{"currentImagePullSpec": digest}})},
		{at: at + 10*time.Minute + 20*time.Second, kind: "build pod", verb: "delete", apiVersion: "v1", res: "Pod", name: job + "-x7k2p", namespace: snapshot.DefaultNamespace},
		{at: at + 10*time.Minute + 20*time.Second, kind: "build Job", verb: "delete", apiVersion: "batch/v1", res: "Job", name: job, namespace: snapshot.DefaultNamespace},
	}
	return out
}

// event is an Event about kind/name in namespace.
func event(name, namespace string, at time.Duration, start time.Time, typ, reason, kind, object, message string) change {
	when := ts(start, at)
	e := map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": name, "namespace": namespace},
		"type": typ, "reason": reason, "message": message, "count": 1, "firstTimestamp": when, "lastTimestamp": when,
		"involvedObject": map[string]any{"kind": kind, "name": object, "namespace": namespace}, "source": map[string]any{"component": "churn"}}
	return change{at: at, kind: "event", verb: "create", apiVersion: "v1", res: "Event", name: name, namespace: namespace, body: mustJSON(e)}
}
