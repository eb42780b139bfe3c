package diagnose

// The cluster's checks: the access of whoever reads it, the operator and
// the machine-os-builder.

import (
	"fmt"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// human reports whether a person read the cluster (Options.Identity).
func (b *reportBuilder) human() bool { return isPerson(b.o.Identity) }

// clusterChecks are the checks every pool depends on.
func (b *reportBuilder) clusterChecks(status []snapshot.ResourceStatus) []Check {
	access := check(CheckExporterAccess)
	for _, st := range status {
		switch {
		case st.Problem == snapshot.ProblemNotCaptured:
			access.notCaptured(Finding{Object: Object{Kind: "Resource", Name: st.Resource}, Message: st.Reason})
		case st.Problem == snapshot.ProblemForbidden && b.human():
			// A person's role, not the exporter's: what it hides is
			// unknown, never missing.
			access.notCaptured(Finding{
				Object:   Object{Kind: "Resource", Name: st.Resource},
				Message:  fmt.Sprintf("%s may not list %s: its objects are unknown, not absent (docs/diagnose.md names the least role diagnose needs)", b.o.Identity, st.Resource),
				Commands: accessCommands(st.Resource, b.c.Namespace, b.o.Identity),
			})
		case !st.Available:
			msg := reason(st, b.o)
			if msg == "" {
				msg = "not listed yet"
			}
			access.fail(Finding{
				Object: Object{Kind: "Resource", Name: st.Resource}, Message: msg,
				Runbook: b.runbook(alertResourceUnavailable), Commands: accessCommands(st.Resource, b.c.Namespace, b.o.Identity),
			})
		}
	}

	builder := check(CheckBuilder)
	// Pools that use image mode need the builder, whether their
	// MachineOSConfigs are in the view or only their signs.
	expected := fmt.Sprintf("%d MachineOSConfig(s) exist", b.machineOSBuilder.MachineOSConfigs)
	if b.machineOSBuilder.ConfigsUnknown {
		expected = fmt.Sprintf("%d pool(s) use image mode", b.machineOSBuilder.UnseenLayered)
	}
	needed := b.machineOSBuilder.MachineOSConfigs+b.machineOSBuilder.UnseenLayered > 0
	switch {
	case !needed && b.machineOSBuilder.ConfigsUnknown && !b.machineOSBuilder.Ready:
		builder.notCaptured(Finding{Object: Object{Kind: "Resource", Name: resourceMachineOSConfigs},
			Message: "the snapshot holds no MachineOSConfig at all and no pool shows signs of image mode: whether the machine-os-builder should run is unknown"})
	case needed && b.machineOSBuilder.Unknown:
		builder.notCaptured(notCapturedFinding(Object{Kind: "Deployment", Namespace: b.c.Namespace, Name: snapshot.BuilderDeploymentName}))
	case needed && !b.machineOSBuilder.Ready:
		f := Finding{
			Object: Object{Kind: "Deployment", Namespace: b.c.Namespace, Name: snapshot.BuilderDeploymentName}, Field: "status.readyReplicas",
			Message: expected + ", but the machine-os-builder has no ready pod",
			Class:   classify.BuilderUnavailable,
			Runbook: b.runbook(alertBuilderNotReady), Commands: builderCommands(b.c.Namespace),
		}
		if r := b.machineOSBuilder.Failure; r != nil {
			f.Message += "; its pod cannot run"
			f.Class, f.Excerpt = r.Class, r.Excerpt
		}
		builder.fail(f)
	}
	return []Check{access.done(), b.operatorCheck(), builder.done(), b.builderImage()}
}

// operatorCheck reads the machine-config ClusterOperator's Degraded
// condition for a layering cause.
func (b *reportBuilder) operatorCheck() Check {
	operator := check(CheckOperator)
	switch op := b.op; {
	case op == nil && !b.c.Captured(analysis.KindClusterOperator):
		// oc adm inspect of the MCO's namespace alone, or a capture
		// that could not read it: unknown, never passed.
		operator.notCaptured(Finding{Object: Object{Kind: "Resource", Name: resourceClusterOperators},
			Message: "the snapshot holds no ClusterOperator: whether machine-config is Degraded by layering is unknown"})
	case op != nil && op.Degraded && (op.Reason == reasonBuilderFailed || op.Class != classify.Unknown):
		operator.fail(Finding{
			Object: Object{Kind: "ClusterOperator", Name: snapshot.ClusterOperatorName}, Field: "status.conditions[type=Degraded]",
			Message: fmt.Sprintf("Degraded=True with reason %s", op.Reason),
			Class:   op.Class, Excerpt: op.Excerpt, Since: timePtr(op.Since),
			Runbook: b.runbook(alertOperatorDegraded), Commands: operatorCommands(b.c.Namespace),
		})
	}
	return operator.done()
}

// builderImage compares the builder's image with the controller's
// (OCPBUGS-56220); without both Deployments, when a builder should run,
// it is unknown.
func (b *reportBuilder) builderImage() Check {
	image := check(CheckBuilderImage)
	deploy := Object{Kind: "Deployment", Namespace: b.c.Namespace, Name: snapshot.BuilderDeploymentName}
	switch stale := b.machineOSBuilder.ImageStale; {
	case stale == nil && b.machineOSBuilder.Ready:
		image.notCaptured(Finding{Object: Object{Kind: "Deployment", Namespace: b.c.Namespace, Name: analysis.MachineConfigControllerName},
			Message: "the machine-config-controller Deployment is not in the view: whether the builder runs the release's MCO image is unknown"})
	case stale != nil && *stale:
		image.fail(Finding{
			Object: deploy, Field: "spec.template.spec.containers[name=machine-os-builder].image",
			Message: "runs another image than the machine-config-controller Deployment, which runs the release's MCO image: the operator did not re-apply it after an upgrade",
			Runbook: b.runbook(alertBuilderImageStale), Commands: builderCommands(b.c.Namespace),
		})
	}
	return image.done()
}

// reasonBuilderFailed is the operator's Degraded reason when it cannot run
// the machine-os-builder.
const reasonBuilderFailed = "MachineOSBuilderFailed"

// resourceClusterOperators is the ClusterOperators' resource, as RBAC and
// oc name it.
const resourceClusterOperators = "clusteroperators.config.openshift.io"
