package collector

import "github.com/ocl-exporter/ocl_exporter/analysis"

// configStage exports stage 1: each MachineOSConfig and what it needs
// before a build can start (its pool, its secrets, a valid push spec), the
// install-time pre-built image, the machine-os-builder, and the operator's
// Degraded condition, where the MCO reports what blocks the builder.
type configStage struct {
	info, secretMissing, poolMissing, pushSpecValid  *Spec
	currentBuild, newestBuild, currentImage, rebuild *Spec

	prebuiltInfo, prebuiltDigested, prebuiltSeeded, prebuiltMCMissing *Spec

	configs, builderReady, builderFailure, builderImageStale          *Spec
	operatorDegraded, operatorDegradedInfo, upgradeBlocked, lastEvent *Spec
}

func newConfigStage() *configStage {
	mosc := []string{"machineosconfig", "pool"}
	with := func(extra ...string) []string { return append(append([]string{}, mosc...), extra...) }
	return &configStage{
		info: newSpec("mosc_info",
			"Always 1 per MachineOSConfig; labels name its pool and its spec.renderedImagePushSpec.",
			with("rendered_image_push_spec")...),
		secretMissing: newSpec("mosc_secret_missing",
			"1 if the Secret a MachineOSConfig field names (baseImagePullSecret, global-pull-secret-copy when omitted, or renderedImagePushSecret) is absent from the MCO namespace, so the machine-os-builder cannot start; 0 if it exists.",
			with("field", "secret")...),
		poolMissing: newSpec("mosc_pool_missing",
			"1 if the MachineConfigPool a MachineOSConfig references does not exist, 0 if it does.",
			mosc...),
		pushSpecValid: newSpec("mosc_push_spec_valid",
			"1 if the MachineOSConfig's renderedImagePushSpec is a fully qualified, lower-case image reference with a tag as the MCO's reference parser requires, 0 if the MCO will reject it.",
			"machineosconfig"),
		currentBuild: newSpec("mosc_current_build_info",
			"1 for the MachineOSBuild named by the MachineOSConfig's current-machine-os-build annotation; absent while the annotation is unset.",
			with("machineosbuild")...),
		newestBuild: newSpec("mosc_newest_build_info",
			"1 for the newest MachineOSBuild of the MachineOSConfig for its pool's current rendered config: the build the pool waits for. It differs from mosc_current_build_info while the MCO has not made that build current, as when it fails a build whose Containerfile does not validate before creating its Job; absent when the pool has no build for its config.",
			with("machineosbuild")...),
		currentImage: newSpec("mosc_current_image_info",
			"1 for the image the MachineOSConfig's nodes are targeted to (status.currentImagePullSpec); absent before the first successful build.",
			with("image")...),
		rebuild: newSpec("mosc_rebuild_requested",
			"1 while the MachineOSConfig carries the rebuild annotation (a rebuild is requested and not finished), 0 otherwise.",
			mosc...),
		prebuiltInfo: newSpec("mosc_prebuilt_image_info",
			"1 while the MachineOSConfig carries the install-time pre-built-image annotation, with its value; the MCO removes the annotation once seeding is done.",
			with("image")...),
		prebuiltDigested: newSpec("mosc_prebuilt_image_digested",
			"1 if the pre-built-image annotation is a digested reference (name@sha256:<64 hex>) as the MCO requires, 0 if it is a tag or otherwise invalid; only while the annotation is present.",
			mosc...),
		prebuiltSeeded: newSpec("mosc_prebuilt_image_seeded",
			"1 if a MachineOSConfig using an install-time pre-built image has its Seeded condition True, 0 while seeding has not happened; absent for MachineOSConfigs without a pre-built image.",
			mosc...),
		prebuiltMCMissing: newSpec("mosc_prebuilt_image_machineconfig_missing",
			"1 if the component MachineConfig 10-prebuiltimage-osimageurl-<pool> of a MachineOSConfig using a pre-built image is absent (the MCO requires it once seeded), 0 if it exists; absent for MachineOSConfigs without a pre-built image.",
			mosc...),
		configs: newSpec("ocl_machineosconfigs",
			"Number of MachineOSConfigs; with at least one, the operator should run the machine-os-builder. Absent when a snapshot does not capture MachineOSConfigs."),
		builderReady: newSpec("ocl_machine_os_builder_ready",
			"1 if the machine-os-builder Deployment in the MCO namespace has a ready pod, 0 if it has none or does not exist."),
		builderImageStale: newSpec("ocl_machine_os_builder_image_stale",
			"1 if the machine-os-builder Deployment runs another image than the machine-config-controller Deployment (both run the release's MCO image; the builder kept the previous release's after an upgrade until OCPBUGS-56220), 0 if the same; absent unless both Deployments are read."),
		operatorDegraded: newSpec("ocl_operator_degraded",
			"1 while ClusterOperator machine-config is Degraded, with the condition reason and the parsed class of its message; while it is not Degraded a single series with empty reason and class is 0.",
			"reason", "class"),
		operatorDegradedInfo: newSpec("ocl_operator_degraded_info",
			"1 while ClusterOperator machine-config is Degraded, with the excerpt of its message that decided the class (at most 200 bytes); absent otherwise.",
			"reason", "class", "excerpt"),
		upgradeBlocked: newSpec("ocl_operator_upgrade_blocked",
			"1 while ClusterOperator machine-config is Upgradeable=False, which holds the next cluster upgrade, with the condition reason (DegradedPool, InterruptedBuild, ...) and the parsed class of its message; while it is not, a single series with empty reason and class is 0.",
			"reason", "class"),
		builderFailure: newSpec("ocl_machine_os_builder_failure_info",
			"1 while a machine-os-builder pod cannot run (CrashLoopBackOff, ImagePullBackOff, failed), with the parsed class of the kubelet's account (its last crash's log tail first) and its excerpt (at most 200 bytes); builder_unavailable when it names no known cause. Absent while the builder's pods run.",
			"class", "excerpt"),
		lastEvent: newSpec("ocl_operator_degraded_event_timestamp_seconds",
			"Unix time of the newest Warning event, per reason (a reason the MCO gives these events, else other) and parsed class, that the operator emitted in its namespace while Degraded (reason OperatorDegraded: <reason>) or that the build controller recorded about a MachineOSConfig (in namespace default); it outlives a recovered Degraded condition for the event TTL.",
			"reason", "class"),
	}
}

func (s *configStage) specs() []*Spec {
	return []*Spec{
		s.info, s.secretMissing, s.poolMissing, s.pushSpecValid,
		s.currentBuild, s.newestBuild, s.currentImage, s.rebuild,
		s.prebuiltInfo, s.prebuiltDigested, s.prebuiltSeeded, s.prebuiltMCMissing,
		s.configs, s.builderReady, s.builderFailure, s.builderImageStale,
		s.operatorDegraded, s.operatorDegradedInfo, s.upgradeBlocked, s.lastEvent,
	}
}

func (s *configStage) collect(all *analysis.Findings, ch chan<- *sample) {
	for _, f := range all.Configs {
		s.collectMachineOSConfig(f, ch)
	}

	b := all.Builder
	if !b.ConfigsUnknown { // not captured: their number is unknown, not 0
		ch <- s.configs.gauge(float64(b.MachineOSConfigs))
	}
	if !b.Unknown { // not captured: no Deployment to conclude from
		ch <- s.builderReady.gauge(boolean(b.Ready))
	}
	if f := b.Failure; f != nil {
		ch <- s.builderFailure.gauge(1, string(f.Class), f.Excerpt)
	}
	if b.ImageStale != nil {
		ch <- s.builderImageStale.gauge(boolean(*b.ImageStale))
	}

	if op := all.Operator; op != nil {
		ch <- s.operatorDegraded.gauge(boolean(op.Degraded), op.Reason, string(op.Class))
		if op.Degraded {
			ch <- s.operatorDegradedInfo.gauge(1, op.Reason, string(op.Class), op.Excerpt)
		}
	}
	if up := all.UpgradeBlocked; up != nil {
		ch <- s.upgradeBlocked.gauge(boolean(up.Degraded), up.Reason, string(up.Class))
	}
	for _, e := range all.DegradedEvents {
		ch <- s.lastEvent.gauge(float64(e.Last.Unix()), e.Reason, string(e.Class))
	}
}

func (s *configStage) collectMachineOSConfig(f analysis.MachineOSConfigFinding, ch chan<- *sample) {
	ch <- s.info.gauge(1, f.Name, f.Pool, f.PushSpec)
	for _, sec := range f.Secrets {
		if !sec.Unknown {
			ch <- s.secretMissing.gauge(boolean(sec.Missing), f.Name, f.Pool, sec.Field, sec.Name)
		}
	}
	if !f.PoolUnknown {
		ch <- s.poolMissing.gauge(boolean(f.PoolMissing), f.Name, f.Pool)
	}
	ch <- s.pushSpecValid.gauge(boolean(f.PushSpecValid), f.Name)
	if f.CurrentBuild != "" {
		ch <- s.currentBuild.gauge(1, f.Name, f.Pool, f.CurrentBuild)
	}
	if f.NewestBuild != "" {
		ch <- s.newestBuild.gauge(1, f.Name, f.Pool, f.NewestBuild)
	}
	if f.CurrentImage != "" {
		ch <- s.currentImage.gauge(1, f.Name, f.Pool, f.CurrentImage)
	}
	ch <- s.rebuild.gauge(boolean(f.RebuildRequested), f.Name, f.Pool)

	p := f.PreBuilt
	if p == nil {
		return
	}
	if p.Annotated {
		ch <- s.prebuiltInfo.gauge(1, f.Name, f.Pool, p.Image)
		ch <- s.prebuiltDigested.gauge(boolean(p.Digested), f.Name, f.Pool)
	}
	ch <- s.prebuiltSeeded.gauge(boolean(p.Seeded), f.Name, f.Pool)
	if !p.MachineConfigUnknown {
		ch <- s.prebuiltMCMissing.gauge(boolean(!p.MachineConfig), f.Name, f.Pool)
	}
}
