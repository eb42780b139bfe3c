package classify

import (
	"fmt"
	"regexp"
	"strings"
)

// signal is a structured (origin, reason) pair.
type signal struct {
	origin Origin
	reason string
}

// signals maps structured reasons to their class. They win over any text:
// an evicted pod is pod_evicted even when the kubelet's message talks about
// disk. Reasons not listed here (Error, Failed, BackoffLimitExceeded,
// FailedCreate, NodeDegraded, MachineOSBuilderFailed, ...) are generic: the
// text rules decide.
var signals = map[signal]Class{
	{OriginContainerTerminated, "OOMKilled"}: OOMKilled,

	{OriginPodStatus, "Evicted"}:    PodEvicted,
	{OriginPodStatus, "Preempting"}: PodEvicted, // kubelet admitted a critical pod
	{OriginPodStatus, "Terminated"}: PodEvicted, // graceful node shutdown
	{OriginEvent, "Evicted"}:        PodEvicted,
	{OriginEvent, "Preempting"}:     PodEvicted,

	// The kubelet could not pull the image the build pod runs (the MCO
	// image), not the base image buildah pulls.
	{OriginPodWaiting, "ErrImagePull"}:              BuilderImagePullFailed,
	{OriginPodWaiting, "ImagePullBackOff"}:          BuilderImagePullFailed,
	{OriginPodWaiting, "InvalidImageName"}:          BuilderImagePullFailed,
	{OriginPodWaiting, "ErrImageNeverPull"}:         BuilderImagePullFailed,
	{OriginPodWaiting, "RegistryUnavailable"}:       BuilderImagePullFailed,
	{OriginPodWaiting, "SignatureValidationFailed"}: BuilderImagePullFailed,
	{OriginEvent, "ErrImageNeverPull"}:              BuilderImagePullFailed,
	{OriginEvent, "InspectFailed"}:                  BuilderImagePullFailed,

	// The scheduler found no node for the build pod: its PodScheduled
	// condition (read as pod status) or its FailedScheduling event.
	{OriginPodStatus, "Unschedulable"}: PodUnschedulable,
	{OriginEvent, "FailedScheduling"}:  PodUnschedulable,

	{OriginBuildCondition, "Interrupted"}: BuildInterrupted,
	// Upgradeable=False while a pool's build is interrupted.
	{OriginClusterOperator, "InterruptedBuild"}: BuildInterrupted,
	{OriginEvent, "BuildInterrupted"}:           BuildInterrupted,

	{OriginEvent, "FailedToDrain"}:          DrainFailed, // MCD, after 1 hour
	{OriginEvent, "DrainThresholdExceeded"}: DrainFailed, // drain controller
	{OriginEvent, "FailedToReconcile"}:      Unreconcilable,
}

// rule is one row of the text table. A line matches the rule when any of
// its patterns matches the line lowercased (ASCII only).
type rule struct {
	class Class
	// push, when set, is the class to report instead of class when the
	// words around the match say the failure happened while pushing.
	push Class
	// in is the set of stages whose origins the rule applies to.
	in stages
	// generic marks a wrapper ("building at STEP", "after retries"): any
	// specific cause found in the same message wins over it.
	generic  bool
	patterns []string
	why      string

	compiled []pattern
}

// pattern is a compiled rule pattern. Every match starts with prefix, so a
// string search rules most lines out before the regexp runs, and a pattern
// that is all literal needs no regexp at all.
type pattern struct {
	re      *regexp.Regexp
	prefix  string
	literal bool
	first   uint16 // trigram of the prefix's first three bytes
}

// index returns where p first matches s, or -1.
func (p pattern) index(s string) int {
	i := strings.Index(s, p.prefix)
	if i < 0 || p.literal {
		return i
	}
	if loc := p.re.FindStringIndex(s[i:]); loc != nil {
		return i + loc[0]
	}
	return -1
}

// trigrams is the set of a line's three-byte substrings, hashed to 12
// bits. A pattern whose first trigram the line lacks cannot match, so most
// string searches are skipped: a candidate line meets about a hundred
// patterns.
type trigrams [64]uint64

func trigram(s string, i int) uint16 {
	return uint16((uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])) * 2654435761 >> 20)
}

func (t *trigrams) fill(line string) {
	clear(t[:])
	for i := 0; i+3 <= len(line); i++ {
		h := trigram(line, i)
		t[h>>6] |= 1 << (h & 63)
	}
}

func (t *trigrams) has(h uint16) bool { return t[h>>6]&(1<<(h&63)) != 0 }

// Patterns shared by the rules that tell registry auth failures apart.
var authPatterns = []string{
	// errcode UNAUTHORIZED; the colon keeps out an HTTP client's "401
	// Unauthorized" printed by a RUN step.
	`unauthorized: `,
	`authentication required`,
	`requested access to the resource is denied`,
	`: denied: `, // errcode DENIED, e.g. ghcr's permission_denied
	`invalid username/password`,
	`unable to retrieve auth token`,
	`insufficient_scope`,
	// Bare HTTP answers: the token server's 403 (containers/image
	// httpResponseToError turns a 401 into "unauthorized"), and a 401 or
	// 403 whose body is not an errcode document.
	`invalid status code from registry 403`,
	`error parsing http 40[13] response body`,
	`statuscode: 40[13],`,
	`status 40[13]$`, // older containers/image: "initiating layer upload to ..., status 401"
}

// rules is the text table. Order is priority: the first rule that matches
// a line decides it, so specific causes come before the wrappers that
// quote them, and generic rules come last. Patterns are lowercase RE2 and
// start with a literal, which keeps matching a string search.
var rules = []rule{
	// Configuration: operator and build controller validation.
	{class: SecretNotFound, in: configuration, why: "MOSC names a secret missing from the MCO namespace", patterns: []string{
		`is not found\. did you use the right secret name`,
		// The API says "secrets", a lister "secret" (the operator reads
		// the cluster pull secret through one: "could not reconcile
		// global pull secret copy: fetching cluster pull secret: ...").
		`secrets? "[^"]*" not found`,
		`no secret name provided`,
		`renderedimagepushsecret empty for machineosconfig`,
	}},
	{class: SecretInvalid, in: configuration, why: "secret exists but is not a usable pull secret", patterns: []string{
		`secret '[^']*' (?:has no data|type field not set|invalid secret key type|type is )`,
		`invalid secret type `,
		`not dockerconfigjson format`,
		`decoding dockerconfig`,
		`could not decode dockerconfig`,
		`empty dockerconfig bytes`,
		`dockerconfig bytes contain json null`,
		`could not canonicalize secret`,
	}},
	{class: PoolNotFound, in: configuration, why: "MOSC and pool do not pair up", patterns: []string{
		`no machineconfigpool named \S+ exists for machineosconfig`,
		`machineosconfig for pool \S+ missing`,
		`machineconfigpools?\.machineconfiguration\.openshift\.io "[^"]*" not found`,
	}},
	{class: PushSpecInvalid, in: configuration, why: "renderedImagePushSpec is not a valid image reference", patterns: []string{
		`could not validate rendere?dimagepushspec`, // MCO spells it "renderdImagePushspec"
		`invalid renderedimagepushspec for machineosconfig`,
		`renderedimagepushspec empty for machineosconfig`,
		// The only image reference a user writes into a MachineOSConfig:
		// its reconcile events quote the parser's error bare.
		`invalid reference format`,
	}},
	{class: NonCoreOSNode, in: anyStage, why: "a node in a layered pool is not RHCOS", patterns: []string{
		`on-cluster layering is only supported on coreos-based nodes`,
		`non-coreos os "`,
		`updating the os on non-coreos nodes is not supported`,
	}},
	{class: PoolDegradedBlocksBuild, in: configuration | build, why: "build controller refuses to build for a degraded pool", patterns: []string{
		`machineconfigpool \S+ is degraded due to non-build issues`,
		// The node controller's Updating=False for the same state.
		`pool update paused due to degraded condition`,
	}},
	// Before the registry rules: these wrap API errors such as "dial tcp".
	{class: BuilderUnavailable, in: configuration, why: "machine-os-builder deployment cannot be applied or rolled out", patterns: []string{
		`could not (?:determine if|apply|get current scale for|scale|wait for|render) machine os builder`,
		`failed to apply machine os builder manifests`,
		// The kubelet on the builder pod: CrashLoopBackOff's waiting
		// message and its BackOff event.
		`restarting failed container=machine-os-builder `,
		`restarting failed container machine-os-builder `,
	}},

	// Build: Kubernetes refused or killed the build pod.
	{class: QuotaExceeded, in: anyStage, why: "ResourceQuota admission rejected the build pod", patterns: []string{
		`exceeded quota: `,
		`failed quota: `,
	}},
	// Before the registry rules: the kubelet quotes the registry error.
	{class: BuilderImagePullFailed, in: build, why: "kubelet cannot pull the build pod's own image", patterns: []string{
		`back-off pulling image "`,
		`failed to pull image "`,
		`error: errimagepull`,
		`error: imagepullbackoff`,
		`image pull failed for `,
	}},
	// Before disk_full: an eviction for ephemeral storage is an eviction.
	{class: PodEvicted, in: build, why: "kubelet evicted, preempted or shut down the build pod", patterns: []string{
		`the node was low on resource: `,
		`the node had condition: `,
		`pod ephemeral local storage usage exceeds`,
		`exceeded its local ephemeral storage limit`,
		`usage of emptydir volume `,
		`preempted in order to admit critical pod`,
		`pod was terminated in response to imminent node shutdown`,
	}},
	{class: OOMKilled, in: build, why: "build container hit its memory limit", patterns: []string{
		`oomkilled`,
	}},
	{class: BuildInterrupted, in: build, why: "build Job deleted before it finished", patterns: []string{
		`build interrupted`,
		`os image build being interrupted`,
		`os image build was interrupted`,
	}},

	// Build: the Containerfile itself.
	{class: ContainerfileInvalid, in: configuration | build, why: "Containerfile rejected before anything ran", patterns: []string{
		`containerfile validation failed`,
		`containerfile must contain at least one from instruction`,
		`unknown dockerfile instruction: `,
		`instruction requires `,
		`instruction must use key=value form`,
		`failed to parse containerfile`,
		`parsing main dockerfile`,
		`no from statement found`,
		`dockerfile parse error`,
		`unknown instruction: `,
		`unterminated heredoc`,
		// imagebuilder's argument checks ("ADD requires at least two
		// arguments", "ENV names can not be blank").
		` requires at least (?:one|two) argument`,
		` names can not be blank`,
		// COPY or ADD of a path the build context or stage does not have
		// (buildah add.go): the Containerfile is wrong, no command ran.
		`checking on sources under `,
	}},
	{class: PackageNotFound, in: build, why: "dnf, yum, microdnf or rpm-ostree cannot find a package", patterns: []string{
		`no match for argument: `,
		`unable to find a match: `,
		`packages not found: `,
		`no package matches '`,
		`no package \S+ available`,
	}},

	// Causes named but outside the closed set: specific, so no wrapper
	// (os_update_timeout, a RUN step) and no nearby class borrows them.
	{class: Unknown, in: anyStage, why: "a named cause that no class covers", patterns: []string{
		// Signature policy (containers/image signature/, policy.json),
		// also when a proxy relays it without the "rejected" prefix.
		`source image rejected: `,
		`a signature was required, but no signature exists`,
		`containers-policy.json specifies a default of`,
		`toomanyrequests: `, // registry rate limit
	}},

	// Rollout steps that fail for reasons of their own. Before the
	// registry rules: a drain error can quote an API "dial tcp".
	// A cordon the drain controller could not apply comes first: its
	// message wraps the API's refusal in "timed out waiting for the
	// condition" (cordonOrUncordonNode's backoff,
	// pkg/controller/drain/drain_controller.go), and no pod was evicted.
	{class: CordonFailed, in: rollout, why: "node could not be cordoned", patterns: []string{
		`failed to cordon node`,
		`failed to cordon \(\d+ tries\)`,
	}},
	{class: DrainFailed, in: rollout, why: "node could not be drained", patterns: []string{
		`failed to drain node`,
		`error when evicting pod`,
		`cannot evict pod as it would violate the pod's disruption budget`,
		`node drain has not succeeded`,
		`drain exceeded timeout`,
		`drain did not complete within`,
		`drain failed`,
	}},
	{class: Unreconcilable, in: rollout, why: "MachineConfig change the MCD cannot apply in place", patterns: []string{
		`can't reconcile config `,
		`not reconcilable`,
		`detected change to fips flag`,
	}},

	// Registry and node causes, in both build and rollout.
	{class: DiskFull, in: anyStage, why: "filesystem full while pulling, building or deploying", patterns: []string{
		`no space left on device`,
		`min-free-space-percent '[^']*' would be exceeded`,
		`min-free-space-size \S+ would be exceeded`,
		`disk quota exceeded`,
		`\[errno 28\] `, // python's ENOSPC (dnf)
		// rpm's disk check inside a RUN step: the resource, not the
		// command, is the cause (rpmps.c, dnf's "Disk Requirements").
		`more space on the `,
		`more space needed on the `,
	}},
	// The certificate the client presents, or the CA it was given for a
	// repository, is missing or unusable: a RHEL entitlement
	// (/etc/pki/entitlement, the redhat-uep.pem CA) when rpm-ostree or
	// dnf fetches packages from the CDN, as a node does reverting a
	// realtime-kernel pool from image mode (OCPBUGS-62479), or a
	// registry's client certificate under /etc/containers/certs.d. The
	// messages are libcurl's (lib/vtls/openssl.c, lib/strerror.c) as
	// librepo quotes them ("Curl error (%d): %s for %s [%s]"), and
	// containers/image's pkg/tlsclientconfig. Before the wrappers and
	// the registry rules: none of these is an x509 trust failure.
	{class: ClientCertificateInvalid, in: anyStage, why: "client certificate or entitlement missing or unusable", patterns: []string{
		`curl error \(58\)`,
		`problem with the local (?:ssl|client) certificate`,
		`could not load pem client certificate`,
		`unable to set private key file`,
		`unable to use client certificate`,
		`missing client certificate \S+ for key`,
		`missing key \S+ for client certificate`,
		`remote error: tls: certificate required`,
		// The CA of an entitlement's repositories (curl 77 names the
		// file it could not read).
		`curl error \(77\)`,
		`problem with the ssl ca cert \(path\? access rights\?\)`,
	}},
	{class: RegistryTLSUntrusted, in: anyStage, why: "registry certificate not trusted", patterns: []string{
		`x509: `,
		`tls: failed to verify certificate`,
		`certificate signed by unknown authority`,
	}},
	// Before the auth rules: a missing tag is the cause even when a mirror
	// also answered "unauthorized".
	{class: ImageNotFound, in: anyStage, why: "registry has no such repository, tag or digest", patterns: []string{
		`manifest unknown`,
		`name unknown`,
		`repository name not known to registry`,
		`no image found in manifest list for architecture`,
		`no image found in image index for architecture`,
	}},
	// Nodes only pull; rollout origins come first so that origins that mix
	// stages (pool, operator) report the node's view.
	{class: ImagePullUnauthorized, in: rollout, why: "node pull secret rejected", patterns: authPatterns},
	{class: BaseImagePullUnauthorized, push: PushUnauthorized, in: build, why: "build pull or push secret rejected", patterns: authPatterns},
	{class: RegistryUnreachable, in: anyStage, why: "registry cannot be reached (DNS, TCP, proxy, 5xx)", patterns: []string{
		`dial tcp`,
		`no such host`,
		`pinging container registry `,
		`tls handshake timeout`,
		`client.timeout exceeded while awaiting headers`,
		`read tcp \S+: read: connection reset by peer`,
		`received unexpected http status: 5`,
		`invalid status code from registry 5`,
		`statuscode: 5\d\d,`, // an HTML error page from a proxy or load balancer
	}},
	// After disk_full: the MCD appends "possible root cause: ..." here.
	{class: UnexpectedOnDiskState, in: rollout, why: "node booted something other than what the MCD wrote", patterns: []string{
		`unexpected on-disk state`,
		`expected target osimageurl `,
		// The MCD's config drift check writes these bare as the reason.
		`content mismatch for file`,
		`mode mismatch for file`,
	}},
	{class: ContainerfileCommandFailed, in: build, why: "a RUN step's command failed", patterns: []string{
		`command not found`,
		`curl: \(\d+\) `,
	}},

	// Generic wrappers: only when nothing specific was found.
	{class: ContainerfileCommandFailed, in: build, generic: true, why: "buildah step exited non-zero", patterns: []string{
		`building at step "`,
		// A tool in a RUN step refusing what a build container lacks
		// (rpm-ostree's ostree operations), when the log kept no STEP line.
		`^error: operation not supported`,
		`subprocess exited with status `,
		`subprocess exited on `,
		`while running runtime: `,
		`returned a non-zero code: `,
	}},
	{class: OSUpdateTimeout, in: rollout, generic: true, why: "rpm-ostree rebase kept failing until the MCD gave up", patterns: []string{
		`failed to update os to \S+ after retries`,
		// ImagePulledFromRegistry=False once updateLayeredOS's backoff
		// gave up (pkg/daemon/update.go), when no cause is quoted.
		`failed to pull os image \S+ from registry: .*timed out waiting for the condition`,
	}},
}

// Words that say which way an image was moving when a registry call
// failed. On a line, the first one found names the outermost operation.
var (
	pushWords = []string{
		"pushing", "buildah push", "writing blob", "initiating layer upload",
		"uploading manifest", "writing manifest:", "trying to reuse blob",
		"checking whether a blob", "push image",
	}
	pullWords = []string{
		"pulling", "trying to pull", "initializing source", "reading manifest",
		"fetching manifest", "creating build container", "copy from source",
		"buildah bud",
	}
)

// Log tails are read from their error lines only: a line qualifies when it
// carries one of errorWords and is not build progress (noise).
var (
	errorWords = []string{
		"error", "fail", "fatal", "exit status", "exited with", "exited on",
		"not found", "no match for argument", "non-zero", "denied",
		"unauthorized", "no space left", "unable to", "cannot", "can't",
		"oomkilled", "curl: (", "no package ", "more space", "x509: ",
	}
	// Progress lines, set -x traces and logrus lines below error level.
	// "Trying to pull" succeeded if nothing else failed; WARN lines are
	// retries, whose final failure is usually printed again as an error
	// (when it is not, run falls back to the last retry warning).
	noisePrefixes = []string{
		"+", "step ", "trying to pull", "getting image source signatures",
		"copying blob", "copying config", "writing manifest to image destination",
		"storing signatures", "commit ", "--> ", "debu[", "info[", "warn[",
	}
	noiseWords = []string{"level=debug", "level=info", "level=warning", "level=trace"}
	// retryWord marks a warning that an attempt failed and will be
	// retried ("Failed, retrying in 1s ... (1/3). Error: ...").
	retryWord = "retrying"
)

func init() {
	generic := false
	for i := range rules {
		r := &rules[i]
		if r.generic {
			generic = true
		} else if generic {
			panic(fmt.Sprintf("classify: specific rule %s after a generic one", r.class))
		}
		for _, p := range r.patterns {
			re := regexp.MustCompile(p)
			// Without a literal prefix every line would go through the
			// regexp engine: 100 µs per pattern on a 2 KB message.
			prefix, literal := re.LiteralPrefix()
			if len(prefix) < 3 || prefix != strings.ToLower(prefix) {
				panic(fmt.Sprintf("classify: pattern %q needs a lowercase literal prefix", p))
			}
			r.compiled = append(r.compiled, pattern{re: re, prefix: prefix, literal: literal, first: trigram(prefix, 0)})
		}
	}
}
