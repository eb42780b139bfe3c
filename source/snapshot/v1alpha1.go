package snapshot

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Must-gathers of OpenShift 4.16 and 4.17 hold MachineOSConfigs and
// MachineOSBuilds in machineconfiguration.openshift.io/v1alpha1, and those
// of 4.16 to 4.18 hold MachineConfigNodes in v1alpha1, which later releases
// no longer serve. Their fields are read into v1 where they mean the same
// thing (openshift/api machineconfiguration/v1alpha1 types_machineosconfig.go,
// types_machineosbuild.go and types_machineconfignode.go as vendored by the
// MCO's release-4.16 to release-4.18), so an old snapshot still shows its
// builds and its nodes' update steps, not only its pools.

// upgrade rewrites an object of an older apiVersion into the fields of
// the version the exporter reads.
type upgrade struct {
	required []string    // a field v1 cannot do without
	moves    []fieldMove // fields v1 keeps elsewhere
	drop     [][]string  // fields with no v1 meaning
	fixed    []fixedField
}

// fieldMove is one v1alpha1 field and where v1 keeps it.
type fieldMove struct{ from, to []string }

// fixedField is a v1 field whose value v1alpha1 implies.
type fixedField struct {
	path  []string
	value string
}

// upgrades are the older versions a snapshot may hold, per group and kind.
var upgrades = map[schema.GroupVersionKind]upgrade{
	{Group: mcfgv1.GroupName, Version: "v1alpha1", Kind: "MachineOSConfig"}: {
		required: []string{"spec", "machineConfigPool", "name"},
		moves: []fieldMove{
			{[]string{"spec", "buildInputs", "baseImagePullSecret"}, []string{"spec", "baseImagePullSecret"}},
			{[]string{"spec", "buildInputs", "renderedImagePushSecret"}, []string{"spec", "renderedImagePushSecret"}},
			{[]string{"spec", "buildInputs", "renderedImagePushspec"}, []string{"spec", "renderedImagePushSpec"}},
			{[]string{"status", "currentImagePullspec"}, []string{"status", "currentImagePullSpec"}},
		},
		drop: [][]string{{"spec", "buildInputs"}, {"spec", "buildOutputs"}},
		// v1alpha1 only knew the pod builder, which v1 runs as a Job.
		fixed: []fixedField{{[]string{"spec", "imageBuilder", "imageBuilderType"}, string(mcfgv1.JobBuilder)}},
	},
	{Group: mcfgv1.GroupName, Version: "v1alpha1", Kind: "MachineOSBuild"}: {
		required: []string{"spec", "machineOSConfig", "name"},
		moves: []fieldMove{
			{[]string{"spec", "desiredConfig"}, []string{"spec", "machineConfig"}},
			{[]string{"spec", "renderedImagePushspec"}, []string{"spec", "renderedImagePushSpec"}},
			{[]string{"status", "finalImagePullspec"}, []string{"status", "digestedImagePushSpec"}},
		},
		// The v1alpha1 builder was a bare pod, not a Job: such a build's
		// cause is read from that pod, build-<rendered config> (analysis
		// barePodOf), and events.
		drop: [][]string{{"status", "builderReference"}},
	},
	// The condition types the exporter reads (UpdatePrepared ...
	// RebootedNode, Updated, NodeDegraded) are spelled as in v1; only the
	// spec's pinned image sets have no v1 field.
	{Group: mcfgv1.GroupName, Version: "v1alpha1", Kind: "MachineConfigNode"}: {
		required: []string{"spec", "node", "name"},
		drop:     [][]string{{"spec", "pinnedImageSets"}},
	},
}

// apply rewrites obj in place, or says why it cannot be read as v1.
func (u upgrade) apply(obj map[string]any) error {
	if s, _, _ := unstructured.NestedString(obj, u.required...); s == "" {
		return fmt.Errorf("no %s", dotted(u.required))
	}
	for _, m := range u.moves {
		v, ok, err := unstructured.NestedFieldNoCopy(obj, m.from...)
		if err != nil {
			return fmt.Errorf("reading %s: %w", dotted(m.from), err)
		}
		if !ok {
			continue
		}
		unstructured.RemoveNestedField(obj, m.from...)
		if err := unstructured.SetNestedField(obj, v, m.to...); err != nil {
			return fmt.Errorf("moving %s to %s: %w", dotted(m.from), dotted(m.to), err)
		}
	}
	for _, d := range u.drop {
		unstructured.RemoveNestedField(obj, d...)
	}
	for _, f := range u.fixed {
		if err := unstructured.SetNestedField(obj, f.value, f.path...); err != nil {
			return fmt.Errorf("setting %s: %w", dotted(f.path), err)
		}
	}
	return nil
}

func dotted(fields []string) string { return "." + strings.Join(fields, ".") }

// OlderVersion is the older version of r an upgrade is known for: the
// live side lists it where the API server does not serve r's.
func OlderVersion(r Resource) (schema.GroupVersionResource, bool) {
	for gvk := range upgrades {
		if gvk.Group == r.GVR.Group && gvk.Kind == r.Kind && gvk.Version != r.GVR.Version {
			return r.GVR.GroupResource().WithVersion(gvk.Version), true
		}
	}
	return schema.GroupVersionResource{}, false
}

// Upgrade rewrites u, an object of an older version OlderVersion named,
// into its fields of the current version, as a snapshot's are.
func Upgrade(u *unstructured.Unstructured) error {
	return upgrades[u.GroupVersionKind()].apply(u.Object)
}

// olderObjects counts the objects of older apiVersions a load met, so that
// it says so once rather than once per object.
type olderObjects struct {
	read, skipped int
	versions      map[string]bool
}

// upgrade rewrites u into version if an upgrade from its apiVersion is
// known. It reports whether u is now readable; an object of a known older
// version whose fields do not map onto the new one is skipped.
func (o *olderObjects) upgrade(u *unstructured.Unstructured, version string, logger *slog.Logger) (known, readable bool) {
	gvk := u.GroupVersionKind()
	up, ok := upgrades[gvk]
	if !ok {
		return false, false
	}
	if o.versions == nil {
		o.versions = map[string]bool{}
	}
	o.versions[u.GetAPIVersion()] = true
	if err := up.apply(u.Object); err != nil {
		o.skipped++
		logger.Debug("skipping an older object whose fields do not map onto the current version",
			"kind", gvk.String(), "name", u.GetName(), "reason", err)
		return true, false
	}
	o.read++
	u.SetAPIVersion(schema.GroupVersion{Group: gvk.Group, Version: version}.String())
	return true, true
}

// report logs once what was read from older apiVersions and what was not.
func (o *olderObjects) report(logger *slog.Logger) {
	if o.read+o.skipped == 0 {
		return
	}
	versions := slices.Sorted(maps.Keys(o.versions))
	logger.Warn("snapshot holds objects of an older apiVersion (an OpenShift 4.16 to 4.18 must-gather); read them as v1",
		"apiVersions", versions, "read", o.read,
		"skipped", o.skipped, "skippedWhy", "required fields missing (spec.machineConfigPool.name, spec.machineOSConfig.name, spec.node.name)",
		"notCarriedOver", "the v1alpha1 build pod reference: causes of such builds come from the bare pod build-<rendered config> and events")
}
