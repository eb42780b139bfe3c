package diagnose

// Stage 1: the MachineOSConfig is accepted, its secrets and pool exist, the operator runs the machine-os-builder.

import (
	"fmt"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
)

func (b *reportBuilder) configChecks(f analysis.MachineOSConfigFinding) []Check {
	m := b.objects[f.Name]
	mosc := Object{Kind: "MachineOSConfig", Name: f.Name}
	created := m.CreationTimestamp.Time
	ns := b.c.Namespace

	pool := check(CheckPool)
	if f.PoolUnknown {
		pool.notCaptured(notCapturedFinding(Object{Kind: "MachineConfigPool", Name: f.Pool}))
	}
	if f.PoolMissing {
		pool.fail(Finding{
			Object: mosc, Field: "spec.machineConfigPool.name",
			Message: fmt.Sprintf("MachineConfigPool %s does not exist", f.Pool),
			Class:   classify.PoolNotFound, Since: timePtr(created),
			Runbook: b.runbook(alertPoolMissing), Commands: poolMissingCommands(f.Name),
		})
	}

	secrets := check(CheckSecrets)
	for _, s := range f.Secrets {
		if s.Unknown {
			secrets.notCaptured(notCapturedFinding(Object{Kind: "Secret", Namespace: ns, Name: s.Name}))
		}
		if !s.Missing {
			continue
		}
		field := "spec." + s.Field + ".name"
		if s.Field == analysis.FieldBaseImagePullSecret && m.Spec.BaseImagePullSecret == nil {
			field = "spec." + s.Field + " (unset: the default " + analysis.DefaultBasePullSecret + ")"
		}
		fd := Finding{
			Object: mosc, Field: field,
			Message: fmt.Sprintf("Secret %s does not exist in %s", s.Name, ns),
			Class:   classify.SecretNotFound, Since: timePtr(created),
			Runbook: b.runbook(alertSecretMissing), Commands: secretCommands(f.Name, s.Name, ns),
		}
		if op := b.op; op != nil && op.Degraded && op.Class == classify.SecretNotFound {
			fd.Excerpt, fd.Since = op.Excerpt, timePtr(op.Since)
		}
		secrets.fail(fd)
	}

	push := check(CheckPushSpec)
	if !f.PushSpecValid {
		push.fail(Finding{
			Object: mosc, Field: "spec.renderedImagePushSpec",
			Message: fmt.Sprintf("%q is not a fully qualified, lower-case image reference with a tag", f.PushSpec),
			Class:   classify.PushSpecInvalid, Since: timePtr(created),
			Runbook: b.runbook(alertPushSpecInvalid), Commands: pushSpecCommands(f.Name),
		})
	}
	checks := []Check{pool.done(), secrets.done(), push.done()}

	pb := f.PreBuilt
	if pb == nil {
		return checks
	}
	if pb.Annotated {
		img := check(CheckPrebuiltImage)
		if !pb.Digested {
			img.fail(Finding{
				Object: mosc, Field: "metadata.annotations[" + analysis.AnnotationPreBuiltImage + "]",
				Message: fmt.Sprintf("pre-built image %q is not a name@sha256 digest", pb.Image),
				Class:   classify.Unknown, Since: timePtr(created),
				Runbook: b.runbook(alertPrebuiltInvalid), Commands: prebuiltCommands(f.Name, f.Pool, ns),
			})
		}
		checks = append(checks, img.done())
	}
	seeded := check(CheckPrebuiltSeeded)
	if !pb.Seeded && (!pb.Annotated || pb.Digested) {
		fd := Finding{
			Object: mosc, Field: "status.conditions[type=" + analysis.ConditionSeeded + "]",
			Message: "the pre-built image has not been seeded", Since: timePtr(created),
			Commands: prebuiltCommands(f.Name, f.Pool, ns),
		}
		if b.now.Sub(created) >= b.limits.NotSeededAfter {
			fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertPrebuiltNotSeeded)
			seeded.fail(fd)
		} else {
			seeded.run(fd)
		}
	}
	checks = append(checks, seeded.done())
	mc := check(CheckPrebuiltMachineConfig)
	mcObject := Object{Kind: "MachineConfig", Name: analysis.PreBuiltImageMachineConfigPrefix + f.Pool}
	if pb.Seeded && pb.MachineConfigUnknown {
		mc.notCaptured(notCapturedFinding(mcObject))
	} else if pb.Seeded && !pb.MachineConfig {
		mc.fail(Finding{
			Object:  mcObject,
			Message: "the component MachineConfig of the seeded pre-built image does not exist",
			Class:   classify.Unknown,
			Runbook: b.runbook(alertPrebuiltMCMissing), Commands: prebuiltCommands(f.Name, f.Pool, ns),
		})
	}
	return append(checks, mc.done())
}
