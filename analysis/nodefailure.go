package analysis

// Why a node's update fails, read from every place the MCO writes it.

import (
	"strconv"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// failureConditions are the MachineConfigNode conditions that say on
// their own that the node's update fails (the status, and how the message
// starts), in the order their messages are read: NodeDegraded, a failed
// image pull, a drain that keeps failing, a cordon that failed.
var failureConditions = []struct {
	typ    mcfgv1.StateProgress
	status metav1.ConditionStatus
	prefix string
}{
	{mcfgv1.MachineConfigNodeNodeDegraded, metav1.ConditionTrue, ""},
	{mcfgv1.MachineConfigNodeImagePulledFromRegistry, metav1.ConditionFalse, msgPullFailed},
	{mcfgv1.MachineConfigNodeUpdateDrained, metav1.ConditionUnknown, msgDrainFailing},
	{mcfgv1.MachineConfigNodeUpdateCordoned, metav1.ConditionUnknown, msgCordonFailed},
}

// nodeFailure returns why the node's update fails, or nil when it does not:
// the MCD marked the node Degraded or Unreconcilable, or one of its
// failureConditions says so. A drain blocked by a PodDisruptionBudget is
// thus one drain_failed failure from the drain controller's first report
// to the MCD's Degraded an hour later, not a stuck node first. The cause
// is read from every place the MCO writes it, most detailed first: the
// node's reason annotation (the full error, up to 2000 bytes), the
// MachineConfigNode conditions, and what the pool's NodeDegraded message
// quotes of the node. The most specific class wins.
func nodeFailure(n *metav1.PartialObjectMetadata, state string, conds []metav1.Condition, ps *poolState) *NodeFailure {
	var failing []*metav1.Condition
	for _, f := range failureConditions {
		if c := FindCondition(conds, string(f.typ)); c != nil && c.Status == f.status && strings.HasPrefix(c.Message, f.prefix) {
			failing = append(failing, c)
		}
	}
	if state != MCDStateDegraded && state != MCDStateUnreconcilable && len(failing) == 0 {
		return nil
	}

	var best classify.Result
	found := false
	consider := func(m classify.Message) {
		if strings.TrimSpace(m.Text) == "" {
			return
		}
		r := classify.Classify(m)
		if !found || specificity(r.Class) > specificity(best.Class) {
			best, found = r, true
		}
	}
	consider(classify.Message{Origin: classify.OriginNodeReason, Text: n.Annotations[NodeAnnotationReason]})
	for _, c := range failing {
		consider(mcnMessage(c))
	}
	if applied := FindCondition(conds, string(mcfgv1.MachineConfigNodeUpdateOS)); applied != nil &&
		applied.Status != metav1.ConditionTrue && applied.Reason != reasonNotYetOccurred {
		consider(mcnMessage(applied))
	}
	for _, text := range ps.nodeReports(n.Name) {
		consider(classify.Message{Origin: classify.OriginPoolCondition, Text: text})
	}

	if !found {
		best.Class = classify.Unknown
	}
	if best.Class == classify.Unknown && state == MCDStateUnreconcilable {
		// The MCD only says Unreconcilable for a MachineConfig change it
		// cannot apply in place, whatever the wording.
		best.Class = classify.Unreconcilable
	}
	return &NodeFailure{Class: best.Class, Excerpt: best.Excerpt}
}

func mcnMessage(c *metav1.Condition) classify.Message {
	return classify.Message{Origin: classify.OriginMCNCondition, Reason: c.Reason, Text: c.Message}
}

// specificity ranks classes: a failed cordon beats drain_failed (the MCD
// reports the drain it waited for in vain after an hour, "failed to drain
// node ... after 1 hour", while the cordon before it is what failed), any
// named cause beats os_update_timeout (the MCD's "after retries" wrapper
// around the cause), which beats unknown. The class of a failing node
// thus does not change when the MCD's wrapper arrives.
func specificity(c classify.Class) int {
	switch c {
	case classify.Unknown:
		return 0
	case classify.OSUpdateTimeout:
		return 1
	case classify.CordonFailed:
		return 3
	}
	return 2
}

// Parts of the pool's NodeDegraded message, a ", "-joined list of
// `Node %s is reporting: %q` (openshift/machine-config-operator@7ff337a
// pkg/controller/node/status.go calculateStatus).
const (
	reportNode = "Node "
	reportSays = " is reporting: "
)

// parseNodeReports splits a pool NodeDegraded message into the messages
// each node reported. A node can be listed more than once (its
// MachineConfigNode message and its reason annotation).
func parseNodeReports(msg string) map[string][]string {
	out := map[string][]string{}
	for {
		i := strings.Index(msg, reportNode)
		if i < 0 {
			return out
		}
		msg = msg[i+len(reportNode):]
		j := strings.Index(msg, reportSays)
		if j < 0 {
			return out
		}
		name, rest := msg[:j], msg[j+len(reportSays):]
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil || strings.ContainsAny(name, " \t\n") {
			msg = rest // not an entry, or cut short: look for the next one
			continue
		}
		if text, err := strconv.Unquote(quoted); err == nil {
			out[name] = append(out[name], text)
		}
		msg = rest[len(quoted):]
	}
}
