package analysis

import (
	"regexp"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// updateStopped reads the Updating=False messages with which the node
// controller stops or pauses a layered pool's update
// (openshift/machine-config-operator@7ff337a pkg/controller/node/status.go
// calculateStatus): "Pool update stopped due to OS image build failure
// (mosb: %s)", "... being interrupted (mosb: %s)", "Pool update paused
// due to degraded condition", and a paused pool's "Pool is paused; OS
// image build failed (mosb: %s)" or "... was interrupted (mosb: %s)". A
// failed build's message says nothing of the cause: it is the build's.
func (c *Cluster) updateStopped(p *mcfgv1.MachineConfigPool) *classify.Result {
	u := FindPoolCondition(p, mcfgv1.MachineConfigPoolUpdating)
	if u == nil || u.Status != corev1.ConditionFalse || !poolStopMessage.MatchString(u.Message) {
		return nil
	}
	r := classify.Classify(classify.Message{Origin: classify.OriginPoolCondition, Text: u.Message})
	if m := poolStopBuild.FindStringSubmatch(u.Message); r.Class == classify.Unknown && m != nil {
		for _, b := range c.MachineOSBuilds {
			if b.Name == m[1] {
				if f := c.build(b).Failure; f != nil {
					r.Class = f.Class
				}
			}
		}
	}
	return &r
}

var (
	poolStopMessage = regexp.MustCompile(`^Pool update (?:stopped|paused) due to |^Pool is paused; OS image build (?:failed|was interrupted)`)
	poolStopBuild   = regexp.MustCompile(`\(mosb: ([^)]+)\)`)
)
