package diagnose

// A pool that shows signs of image mode in a snapshot that holds no
// MachineOSConfig at all (analysis.UnseenLayeredPools): it is layered as
// far as the snapshot tells, never "not layered" nor healthy.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// Resources not captured when a pool's MachineOSConfig is missing from a
// snapshot, as RBAC and oc name them.
const (
	resourceMachineOSBuilds    = "machineosbuilds.machineconfiguration.openshift.io"
	resourceMachineConfigNodes = "machineconfignodes.machineconfiguration.openshift.io"
)

// captureCommands capture, with oc alone, the layering kinds a
// must-gather leaves out; `ocl_exporter capture` captures all the
// exporter reads.
func captureCommands() []string {
	return []string{"oc adm inspect " + resourceMachineOSConfigs + "," + resourceMachineOSBuilds + " --dest-dir=inspect.ocl"}
}

// unseenStates say what a pool's signs conclude.
var unseenStates = map[analysis.LayeringState]string{
	analysis.LayeringSeen:    "nothing the snapshot holds shows it failing or moving",
	analysis.LayeringMoving:  "a build or a rollout of its image is under way",
	analysis.LayeringFailing: "a build of its image failed",
}

// unseenStages are the stages of such a pool: its MachineOSConfig not
// captured, what its signs show of its builds, and its rollout as the
// nodes tell it.
func (b *reportBuilder) unseenStages(name string, u analysis.UnseenLayering, rollout *analysis.PoolRollout, nodes []analysis.NodeRollout) []Stage {
	mosc := check(CheckMOSCCaptured)
	kinds := make([]string, 0, len(u.Signs))
	for _, s := range u.Signs {
		if !slices.Contains(kinds, s.Sign) {
			kinds = append(kinds, s.Sign)
		}
	}
	mosc.notCaptured(Finding{
		Object: Object{Kind: "Resource", Name: resourceMachineOSConfigs},
		Message: fmt.Sprintf("the snapshot holds no MachineOSConfig at all, but pool %s uses image mode, as %d sign(s) show (%s): %s; its MachineOSConfig, the Secrets it names and its builds cannot be checked: capture them with ocl_exporter capture, or with oc",
			name, len(u.Signs), strings.Join(kinds, ", "), unseenStates[u.State]),
		Commands: captureCommands(),
	})
	build := check(CheckBuildResult)
	for _, s := range u.Signs {
		f := Finding{Object: Object{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name}, Field: s.Field, Message: s.Message, Since: timePtr(s.Since)}
		switch {
		case s.State == analysis.LayeringFailing:
			setCause(&f, s.Cause)
			f.Runbook, f.Commands = b.runbook(alertBuildFailed), captureCommands()
			build.fail(f)
		case s.State == analysis.LayeringMoving && s.Kind != "Node":
			build.run(f)
		default:
			mosc.notCaptured(f)
		}
	}
	if build.Status == Passed {
		build.notCaptured(Finding{Object: Object{Kind: "Resource", Name: resourceMachineOSBuilds},
			Message: "the snapshot holds no MachineOSBuild of the pool, and nothing else shows a build failing or running: whether the current build succeeded is unknown"})
	}
	return []Stage{
		b.stage(StageConfig, []Check{mosc.done()}),
		b.stage(StageBuild, []Check{build.done()}),
		b.stage(StageRollout, b.rolloutChecks(name, rollout, nodes, true)),
	}
}

// unseenSummary is the summary of such a pool when no stage failed.
func unseenSummary(u analysis.UnseenLayering) string {
	return fmt.Sprintf("uses image mode (%d sign(s)), but the snapshot holds no MachineOSConfig: %s; capture the rest with ocl_exporter capture",
		len(u.Signs), unseenStates[u.State])
}

// layeringUnknownStages are the stages of a pool that shows no sign of
// image mode in a snapshot that holds no MachineOSConfig: a layered pool
// shows none in some states (4.16 and 4.17 between a build that
// succeeded and the first node it targets, OCPBUGS-35509; any pool of an
// `oc adm inspect co/machine-config`, which follows no MachineOSConfig),
// so whether it is layered is unknown, never "not layered". Its rollout
// is shown when a node fails or carries an image, as for a pool not
// layered.
func (b *reportBuilder) layeringUnknownStages(name string, rollout *analysis.PoolRollout, nodes []analysis.NodeRollout) []Stage {
	mosc := check(CheckMOSCCaptured)
	mosc.notCaptured(Finding{
		Object: Object{Kind: "Resource", Name: resourceMachineOSConfigs},
		Message: fmt.Sprintf("the snapshot holds no MachineOSConfig at all, and nothing else it holds shows whether pool %s uses image mode (a layered pool shows no sign between a build and its rollout, and an inspect of the ClusterOperator follows no MachineOSConfig): capture them with ocl_exporter capture, or with oc",
			name),
		Commands: captureCommands(),
	})
	stages := []Stage{b.stage(StageConfig, []Check{mosc.done()})}
	if slices.ContainsFunc(nodes, func(n analysis.NodeRollout) bool { return n.ImageTracked || n.Failure != nil }) {
		stages = append(stages, b.stage(StageRollout, b.rolloutChecks(name, rollout, nodes, false)))
	}
	return stages
}
