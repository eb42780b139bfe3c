package diagnose

// Stage 1: the MachineOSConfig is accepted, its secrets and pool exist, the operator runs the machine-os-builder.

import (
	"fmt"
	"time"

	"github.com/ocl-exporter/ocl_exporter/analysis"
	"github.com/ocl-exporter/ocl_exporter/classify"
)

func (b *reportBuilder) configChecks(f analysis.MachineOSConfigFinding) []Check {
	checks := []Check{b.poolCheck(f).done(), b.secretsCheck(f).done(), b.pushSpecCheck(f).done()}
	pb := f.PreBuilt
	if pb == nil {
		return checks
	}
	if pb.Annotated {
		checks = append(checks, b.prebuiltImageCheck(f).done())
	}
	return append(checks, b.prebuiltSeededCheck(f).done(), b.prebuiltMachineConfigCheck(f).done())
}

// moscObject names the MachineOSConfig of f.
func moscObject(f analysis.MachineOSConfigFinding) Object {
	return Object{Kind: "MachineOSConfig", Name: f.Name}
}

// moscCreated is when f's MachineOSConfig was created: a problem of its
// spec is there since.
func (b *reportBuilder) moscCreated(f analysis.MachineOSConfigFinding) time.Time {
	return b.objects[f.Name].CreationTimestamp.Time
}

// poolCheck fails when the pool the MachineOSConfig names does not exist.
func (b *reportBuilder) poolCheck(f analysis.MachineOSConfigFinding) *pending {
	pool := check(CheckPool)
	if f.PoolUnknown {
		pool.notCaptured(notCapturedFinding(Object{Kind: "MachineConfigPool", Name: f.Pool}))
	}
	if f.PoolMissing {
		pool.fail(Finding{
			Object: moscObject(f), Field: "spec.machineConfigPool.name",
			Message: fmt.Sprintf("MachineConfigPool %s does not exist", f.Pool),
			Class:   classify.PoolNotFound, Since: timePtr(b.moscCreated(f)),
			Runbook: b.runbook(alertPoolMissing), Commands: poolMissingCommands(f.Name),
		})
	}
	return pool
}

// secretsCheck fails for each Secret the MachineOSConfig needs that does
// not exist; the operator's own error, when it names one, says since when.
func (b *reportBuilder) secretsCheck(f analysis.MachineOSConfigFinding) *pending {
	ns := b.c.Namespace
	secrets := check(CheckSecrets)
	for _, s := range f.Secrets {
		if s.Unknown {
			secrets.notCaptured(notCapturedFinding(Object{Kind: "Secret", Namespace: ns, Name: s.Name}))
		}
		if !s.Missing {
			continue
		}
		field := "spec." + s.Field + ".name"
		if s.Field == analysis.FieldBaseImagePullSecret && b.objects[f.Name].Spec.BaseImagePullSecret == nil {
			field = "spec." + s.Field + " (unset: the default " + analysis.DefaultBasePullSecret + ")"
		}
		fd := Finding{
			Object: moscObject(f), Field: field,
			Message: fmt.Sprintf("Secret %s does not exist in %s", s.Name, ns),
			Class:   classify.SecretNotFound, Since: timePtr(b.moscCreated(f)),
			Runbook: b.runbook(alertSecretMissing), Commands: secretCommands(f.Name, s.Name, ns),
		}
		if op := b.op; op != nil && op.Degraded && op.Class == classify.SecretNotFound {
			fd.Excerpt, fd.Since = op.Excerpt, timePtr(op.Since)
		}
		secrets.fail(fd)
	}
	return secrets
}

// pushSpecCheck fails an invalid renderedImagePushSpec.
func (b *reportBuilder) pushSpecCheck(f analysis.MachineOSConfigFinding) *pending {
	push := check(CheckPushSpec)
	if !f.PushSpecValid {
		push.fail(Finding{
			Object: moscObject(f), Field: "spec.renderedImagePushSpec",
			Message: fmt.Sprintf("%q is not a fully qualified, lower-case image reference with a tag", f.PushSpec),
			Class:   classify.PushSpecInvalid, Since: timePtr(b.moscCreated(f)),
			Runbook: b.runbook(alertPushSpecInvalid), Commands: pushSpecCommands(f.Name),
		})
	}
	return push
}

// prebuiltImageCheck fails a pre-built image annotation that is not a
// digest.
func (b *reportBuilder) prebuiltImageCheck(f analysis.MachineOSConfigFinding) *pending {
	img := check(CheckPrebuiltImage)
	if pb := f.PreBuilt; !pb.Digested {
		img.fail(Finding{
			Object: moscObject(f), Field: "metadata.annotations[" + analysis.AnnotationPreBuiltImage + "]",
			Message: fmt.Sprintf("pre-built image %q is not a name@sha256 digest", pb.Image),
			Class:   classify.Unknown, Since: timePtr(b.moscCreated(f)),
			Runbook: b.runbook(alertPrebuiltInvalid), Commands: prebuiltCommands(f.Name, f.Pool, b.c.Namespace),
		})
	}
	return img
}

// prebuiltSeededCheck follows the seeding of a valid pre-built image: it
// runs until limits.NotSeededAfter, then fails.
func (b *reportBuilder) prebuiltSeededCheck(f analysis.MachineOSConfigFinding) *pending {
	seeded := check(CheckPrebuiltSeeded)
	pb, created := f.PreBuilt, b.moscCreated(f)
	if pb.Seeded || pb.Annotated && !pb.Digested {
		return seeded
	}
	fd := Finding{
		Object: moscObject(f), Field: "status.conditions[type=" + analysis.ConditionSeeded + "]",
		Message: "the pre-built image has not been seeded", Since: timePtr(created),
		Commands: prebuiltCommands(f.Name, f.Pool, b.c.Namespace),
	}
	if b.now.Sub(created) >= b.limits.NotSeededAfter {
		fd.Class, fd.Runbook = classify.Unknown, b.runbook(alertPrebuiltNotSeeded)
		seeded.fail(fd)
	} else {
		seeded.run(fd)
	}
	return seeded
}

// prebuiltMachineConfigCheck fails when the component MachineConfig of a
// seeded pre-built image does not exist.
func (b *reportBuilder) prebuiltMachineConfigCheck(f analysis.MachineOSConfigFinding) *pending {
	mc := check(CheckPrebuiltMachineConfig)
	if !f.PreBuilt.Seeded {
		return mc
	}
	mcObject := Object{Kind: "MachineConfig", Name: analysis.PreBuiltImageMachineConfigPrefix + f.Pool}
	if f.PreBuilt.MachineConfigUnknown {
		mc.notCaptured(notCapturedFinding(mcObject))
	} else if !f.PreBuilt.MachineConfig {
		mc.fail(Finding{
			Object:  mcObject,
			Message: "the component MachineConfig of the seeded pre-built image does not exist",
			Class:   classify.Unknown,
			Runbook: b.runbook(alertPrebuiltMCMissing), Commands: prebuiltCommands(f.Name, f.Pool, b.c.Namespace),
		})
	}
	return mc
}
