package alerts

import (
	"fmt"
	"strings"
)

// GroupEvalOrder is the order in which promtool evaluates the rule groups
// at each step of a test (group_eval_order in every alerts/tests file and
// in the tests that write their own): a group after the groups whose
// recording rules and alerts it reads. Without it promtool runs them in a
// map's order, and a rule reading another group's series would see this
// evaluation or the last one at random. Prometheus runs each group on its
// own timer, so there such a read is up to one evaluation interval old;
// the rules that read across groups are the ones that tolerate it
// (TestGroupEvalOrderFollowsReads).
var GroupEvalOrder = []string{"ocl-machineosconfig", "ocl-machineosbuild", "ocl-rollout"}

// PromtoolTestHeader starts a promtool test file of the rule files glob:
// one-minute evaluations, the groups in GroupEvalOrder.
func PromtoolTestHeader(glob string) string {
	return fmt.Sprintf("rule_files: [%s]\nevaluation_interval: 1m\ngroup_eval_order: [%s]\n", glob, strings.Join(GroupEvalOrder, ", "))
}
