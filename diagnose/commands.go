package diagnose

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// The next oc commands for each kind of finding, with the real names. They
// only read, except where a runbook's first step is the fix itself; the
// runbooks hold the rest. A live cluster holds only Kubernetes names, but
// a snapshot can hold anything, so every name is made one shell word.

// plainWord is what a shell reads as one literal word, unquoted.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9._/:=@+-]+$`)

// word quotes s as one shell word when it is not one already: in single
// quotes, each quote inside closed, escaped and reopened.
func word(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// words quotes each of the names in place.
func words(names ...*string) {
	for _, n := range names {
		*n = word(*n)
	}
}

// exporterAccount is the bundle's service account (deploy/).
const exporterAccount = "system:serviceaccount:ocl-exporter:ocl-exporter"

// accessCommands ask whether the identity that read the cluster may list
// resource: as itself for a person (oc runs as them), as the service
// account it is otherwise, the exporter's when unknown (the status page).
func accessCommands(resource, ns, identity string) []string {
	as := " --as=" + exporterAccount
	switch user, sa := strings.CutPrefix(identity, "user system:serviceaccount:"); {
	case sa:
		as = " --as=" + word("system:serviceaccount:"+user)
	case isPerson(identity):
		as = ""
	}
	words(&resource, &ns)
	return []string{
		fmt.Sprintf("oc auth can-i list %s%s -n %s", resource, as, ns),
		"oc api-resources --api-group=machineconfiguration.openshift.io",
	}
}

// isPerson: the identity is known and no service account.
func isPerson(identity string) bool {
	return identity != "" && !strings.HasPrefix(identity, "user system:serviceaccount:") && !strings.Contains(identity, "service account")
}

func operatorCommands(ns string) []string {
	words(&ns)
	return []string{
		`oc get clusteroperator machine-config -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'`,
		fmt.Sprintf("oc -n %s get events --field-selector type=Warning --sort-by=.lastTimestamp", ns),
		fmt.Sprintf("oc -n %s logs deploy/machine-config-operator --tail=100", ns),
	}
}

func builderCommands(ns string) []string {
	words(&ns)
	return []string{
		fmt.Sprintf("oc -n %s get deploy,pods -l k8s-app=machine-os-builder", ns),
		fmt.Sprintf("oc -n %s describe pods -l k8s-app=machine-os-builder", ns),
		fmt.Sprintf("oc -n %s logs deploy/machine-os-builder --previous --tail=50", ns),
	}
}

func poolMissingCommands(mosc string) []string {
	words(&mosc)
	return []string{
		"oc get machineconfigpools",
		fmt.Sprintf(`oc get machineosconfig %s -o jsonpath='{.spec.machineConfigPool.name}{"\n"}'`, mosc),
	}
}

func secretCommands(mosc, secret, ns string) []string {
	words(&mosc, &secret, &ns)
	return []string{
		fmt.Sprintf("oc -n %s get secret %s", ns, secret),
		fmt.Sprintf("oc -n %s get secrets --field-selector type=kubernetes.io/dockerconfigjson", ns),
		fmt.Sprintf("oc get machineosconfig %s -o yaml", mosc),
	}
}

func pushSpecCommands(mosc string) []string {
	words(&mosc)
	return []string{
		fmt.Sprintf(`oc get machineosconfig %s -o jsonpath='{.spec.renderedImagePushSpec}{"\n"}'`, mosc),
	}
}

func prebuiltCommands(mosc, pool, ns string) []string {
	words(&mosc, &pool, &ns)
	return []string{
		fmt.Sprintf("oc get machineosconfig %s -o yaml", mosc),
		"oc get machineconfig " + "10-prebuiltimage-osimageurl-" + pool,
		fmt.Sprintf("oc -n %s logs deploy/machine-os-builder | grep -i -e seed -e 'pre-built'", ns),
	}
}

func notStartedCommands(mosc, pool, ns string) []string {
	words(&mosc, &pool, &ns)
	return []string{
		fmt.Sprintf(`oc get mcp %s -o jsonpath='{.spec.configuration.name}{"\n"}'`, pool),
		fmt.Sprintf("oc get machineosbuilds -l machineconfiguration.openshift.io/machine-os-config=%s", mosc),
		fmt.Sprintf("oc -n %s logs deploy/machine-os-builder --tail=50", ns),
	}
}

// buildCommands read a build's Job and pods, or the bare pod 4.16 and 4.17
// ran it in, with its dockerfile-<rendered config> ConfigMap.
func buildCommands(b analysis.Build, ns string) []string {
	mosb, pod, rendered := b.Name, b.BarePod, b.RenderedConfig
	words(&mosb, &pod, &rendered, &ns)
	if b.BarePod != "" {
		return []string{
			"oc get machineosbuild " + mosb,
			fmt.Sprintf("oc -n %s get pod %s", ns, pod),
			fmt.Sprintf("oc -n %s logs pod/%s -c image-build --tail=20", ns, pod),
			fmt.Sprintf("oc -n %s describe pod %s", ns, pod),
			fmt.Sprintf("oc -n %s get configmap dockerfile-%s -o jsonpath='{.data.Dockerfile}'", ns, rendered),
		}
	}
	return []string{
		"oc get machineosbuild " + mosb,
		fmt.Sprintf("oc -n %s get pods -l job-name=build-%s", ns, mosb),
		fmt.Sprintf("oc -n %s logs job/build-%s -c image-build --tail=20", ns, mosb),
		fmt.Sprintf("oc -n %s describe job build-%s", ns, mosb),
		fmt.Sprintf("oc -n %s get configmap containerfile-%s -o jsonpath='{.data.Containerfile}'", ns, mosb),
	}
}

func leftoverCommands(mosb, ns string) []string {
	words(&mosb, &ns)
	return []string{
		// By name, which every ephemeral object embeds: a label selector
		// with the build's name is one token wider than a report's line.
		fmt.Sprintf("oc -n %s get configmaps,secrets,jobs -o name | grep -- %s", ns, mosb),
	}
}

func nodeCommands(node, ns string) []string {
	words(&node, &ns)
	return []string{
		fmt.Sprintf(`oc get machineconfignode %s -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.message}{"\n"}{end}'`, node),
		fmt.Sprintf(`oc get node %s -o jsonpath='{.metadata.annotations.machineconfiguration\.openshift\.io/reason}{"\n"}'`, node),
		fmt.Sprintf("oc -n %s logs -c machine-config-daemon --tail=50 $(oc -n %s get pods -l k8s-app=machine-config-daemon --field-selector spec.nodeName=%s -o name)", ns, ns, node),
	}
}

func rolloutCommands(pool string) []string {
	words(&pool)
	return []string{
		"oc get mcp " + pool,
		fmt.Sprintf(`oc get nodes -l node-role.kubernetes.io/%s -o custom-columns='NAME:.metadata.name,STATE:.metadata.annotations.machineconfiguration\.openshift\.io/state'`, pool),
	}
}

func poolConditionCommands(pool string) []string {
	words(&pool)
	return []string{
		fmt.Sprintf(`oc get mcp %s -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'`, pool),
	}
}

func pausedCommands(pool string) []string {
	words(&pool)
	return []string{
		fmt.Sprintf(`oc get mcp %s -o jsonpath='{.spec.paused} {.status.machineCount} {.status.updatedMachineCount}{"\n"}'`, pool),
		fmt.Sprintf(`oc patch mcp %s --type merge -p '{"spec":{"paused":false}}'   # when the maintenance window allows`, pool),
	}
}

// shown remembers the blocks of next commands a report has printed, so
// that two findings about the same objects (a failed check and the
// running one beside it) print their block once, then "the same commands
// as above". JSON keeps every block.
type shown map[string]bool

// again reports whether cmds were printed before, and records them.
func (s shown) again(cmds []string) bool {
	k := strings.Join(cmds, "\n")
	if s[k] {
		return true
	}
	s[k] = true
	return false
}

// sameCommands is what a repeated block prints instead.
const sameCommands = "the same commands as above"
