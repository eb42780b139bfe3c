package analysis

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// OpenShift 4.16 and 4.17 (release-4.16 and release-4.17
// pkg/controller/build/build_controller.go) convert a legacy .dockercfg
// Secret a MachineOSConfig names into <name>-canonical
// (validatePullSecret, handleCanonicalizedPullSecret) and rewrite the
// MachineOSConfig to name the copy once its build starts
// (startBuildForMachineConfigPool, updateConfigSpec). Before #4366
// (OCPBUGS-33671; release-4.16 #4432) two MachineOSConfigs naming the same
// legacy Secret raced: the second one's Get found no copy, its Create got
// "already exists" ("could not create canonical secret %q: %w"), and
// syncMachineOSBuilder wrote only Failed=False reason MOSCAvailable
// (syncAvailableStatus) on its build. No later sync starts that build: it
// exists, and none of its conditions is True.
const (
	canonicalSecretSuffix = "-canonical"
	reasonMOSCAvailable   = "MOSCAvailable"
)

// startRefused reports a build whose start 4.16 or 4.17 refused: its only
// mark is syncAvailableStatus's Failed=False MOSCAvailable, with no
// condition True, so the MCO will never start it.
func startRefused(b *mcfgv1.MachineOSBuild) bool {
	available := false
	for _, cond := range b.Status.Conditions {
		if cond.Status == metav1.ConditionTrue {
			return false
		}
		available = available || (cond.Type == conditionFailed && cond.Reason == reasonMOSCAvailable)
	}
	return available
}

// canonicalCopy is the <name>-canonical Secret 4.16 and 4.17 made of a
// legacy Secret, when it exists while the MachineOSConfig still names the
// legacy one, else "".
func canonicalCopy(name string, secrets map[string]bool) string {
	if name == "" || strings.HasSuffix(name, canonicalSecretSuffix) || !secrets[name+canonicalSecretSuffix] {
		return ""
	}
	return name + canonicalSecretSuffix
}

// refusedStart explains a build whose start was refused when its
// MachineOSConfig names a legacy Secret whose converted copy exists: the
// race above, the only refusal the objects can name (the others are in the
// machine-os-builder's log only). nil otherwise.
func (c *Cluster) refusedStart(b *mcfgv1.MachineOSBuild) *classify.Result {
	if !startRefused(b) || !c.Captured(KindSecret) {
		return nil
	}
	i := slices.IndexFunc(c.MachineOSConfigs, func(m *mcfgv1.MachineOSConfig) bool { return m.Name == b.Spec.MachineOSConfig.Name })
	if i < 0 {
		return nil
	}
	for _, ref := range secretReferences(c.MachineOSConfigs[i], c.secretNames(), true) {
		if ref.Canonical != "" {
			// Object names and field names are ASCII, so a byte cut is safe.
			excerpt := fmt.Sprintf("%s %q is a legacy Secret another MachineOSConfig already converted to %q",
				ref.Field, ref.Name, ref.Canonical)
			return &classify.Result{Class: classify.SecretInvalid, Excerpt: excerpt[:min(len(excerpt), classify.MaxExcerpt)]}
		}
	}
	return nil
}
