// Package classify turns OpenShift On-Cluster Layering error text into one
// of a closed set of causes (Class), so that the exporter can count
// failures by cause and alerts can say what to check first.
//
// OCL reports failures in many places, none of which carries a cause code:
// a MachineOSBuild only ever says "Build Failed". The cause is prose: the
// machine-config ClusterOperator's Degraded message, Events, the build
// pod's terminated state (the tail of buildah's log), the node's reason
// annotation, MachineConfigNode and MachineConfigPool conditions. The
// words come from the tools underneath (the MCO, buildah and
// containers/image, dnf, rpm-ostree, the kubelet), several layers deep.
//
// Classify decides in two steps:
//
//  1. Structured signals win. A table keyed by (Origin, reason) maps
//     reasons that are causes in themselves (a terminated reason
//     OOMKilled, a pod status reason Evicted, a waiting reason
//     ImagePullBackOff) straight to a class. Generic reasons (Error,
//     Failed, BackoffLimitExceeded, NodeDegraded) fall through.
//  2. Text rules: an ordered table of RE2 patterns, each scoped to the
//     stages (configuration, build, rollout) whose origins it applies to.
//     The first rule that matches a line decides it, so specific causes
//     ("manifest unknown") sit above the wrappers that quote them ("after
//     retries: timed out waiting for the condition"). Generic rules,
//     last in the table, only decide when no line names a specific cause.
//
// Lines are read from the last to the first, and the last line decided by
// a specific rule wins. Log tails are read from their error lines only,
// skipping build progress such as "Trying to pull" or buildah's set -x
// trace; the search for the cause behind a generic wrapper stops at the
// start of the build step that failed. Registry authentication failures
// are split by the words around them: rollout origins only pull, and in a
// build the outermost operation on the line ("pushing image", "creating
// build container") or the nearest line above naming one tells push from
// pull.
//
// The work is linear and bounded: only the last 64 KiB and at most 512
// candidate lines are read, patterns are RE2 compiled once, and each
// starts with a literal so that matching is mostly a string search.
package classify
