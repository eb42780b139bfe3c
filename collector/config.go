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
			"Always 1 per MachineOSConfig, with its pool and its spec.renderedImagePushSpec.",
			with("rendered_image_push_spec")...),
		secretMissing: newSpec("mosc_secret_missing",
			"1 if the Secret a MachineOSConfig field names is absent from the MCO namespace, 0 if it exists.",
			with("field", "secret")...),
		poolMissing: newSpec("mosc_pool_missing",
			"1 if the MachineConfigPool a MachineOSConfig references does not exist, 0 if it does.",
			mosc...),
		pushSpecValid: newSpec("mosc_push_spec_valid",
			"1 if the MachineOSConfig's renderedImagePushSpec is an image reference with a tag the MCO accepts, 0 if not.",
			"machineosconfig"),
		currentBuild: newSpec("mosc_current_build_info",
			"1 for the MachineOSBuild the MachineOSConfig's current-machine-os-build annotation names.",
			with("machineosbuild")...),
		newestBuild: newSpec("mosc_newest_build_info",
			"1 for the newest MachineOSBuild of the MachineOSConfig for its pool's rendered config: the build the pool waits for.",
			with("machineosbuild")...),
		currentImage: newSpec("mosc_current_image_info",
			"1 for the image the MachineOSConfig's nodes are targeted to (status.currentImagePullSpec).",
			with("image")...),
		rebuild: newSpec("mosc_rebuild_requested",
			"1 while the MachineOSConfig carries the rebuild annotation, 0 otherwise.",
			mosc...),
		prebuiltInfo: newSpec("mosc_prebuilt_image_info",
			"1 while the MachineOSConfig carries the pre-built-image annotation, with its value.",
			with("image")...),
		prebuiltDigested: newSpec("mosc_prebuilt_image_digested",
			"1 if the MachineOSConfig's pre-built-image annotation is a digested reference, 0 if not.",
			mosc...),
		prebuiltSeeded: newSpec("mosc_prebuilt_image_seeded",
			"1 if the MachineOSConfig that uses a pre-built image has its Seeded condition True, 0 if not.",
			mosc...),
		prebuiltMCMissing: newSpec("mosc_prebuilt_image_machineconfig_missing",
			"1 if the component MachineConfig of the MachineOSConfig's pre-built image is absent, 0 if it exists.",
			mosc...),
		configs: newSpec("ocl_machineosconfigs",
			"Number of MachineOSConfigs."),
		builderReady: newSpec("ocl_machine_os_builder_ready",
			"1 if the machine-os-builder Deployment has a ready pod, 0 if not."),
		builderImageStale: newSpec("ocl_machine_os_builder_image_stale",
			"1 if the machine-os-builder runs another image than the machine-config-controller, 0 if the same."),
		operatorDegraded: newSpec("ocl_operator_degraded",
			"1 while ClusterOperator machine-config is Degraded, with its reason and the class of its message.",
			"reason", "class"),
		operatorDegradedInfo: newSpec("ocl_operator_degraded_info",
			"1 while ClusterOperator machine-config is Degraded, with the excerpt that decided the class.",
			"reason", "class", "excerpt"),
		upgradeBlocked: newSpec("ocl_operator_upgrade_blocked",
			"1 while ClusterOperator machine-config is Upgradeable=False, with its reason and the class of its message.",
			"reason", "class"),
		builderFailure: newSpec("ocl_machine_os_builder_failure_info",
			"1 while a machine-os-builder pod cannot run, with the class and excerpt of its cause.",
			"class", "excerpt"),
		lastEvent: newSpec("ocl_operator_degraded_event_timestamp_seconds",
			"Unix time of the newest OCL Warning event of the operator or build controller, by reason and class.",
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
