//go:build e2emco

package mco

import (
	"regexp"
	"slices"
)

// allowance is a difference between what the MCO wrote and a lifecycle's
// fixture that cannot matter to any rule or diagnosis, and why; each is
// listed in docs/coverage.md, "The MCO deciding".
type allowance struct {
	lifecycles []string // the lifecycles it concerns
	from, to   int      // the minutes, inclusive
	field      *regexp.Regexp
	why        string
}

// allowed is the one list of differences the comparison accepts.
var allowed = []allowance{
	{
		lifecycles: []string{"healthy-paused-pool"}, from: 2, to: 24,
		field: regexp.MustCompile(`^MachineConfigPool/layered condition Updating minute$`),
		// While the paused pool's build is created, prepared and runs, the
		// node controller passes Updating through its paused states
		// seconds apart (status.go calculateStatus; the stale
		// current-machine-os-build annotation cleared meanwhile,
		// node_controller.go), and its last transition lands anywhere
		// in minutes 0 to 2. Its readers: a build wait's start
		// (analysis BuildWaits: none, the build exists from minute 1)
		// and a node's updating-since (analysis updatingSince: no node
		// updates while the pool is paused); at minute 25 Updating turns
		// False and the difference ends.
		why: "Updating's transition within the paused pool's first minutes",
	},
}

// isAllowed says whether the difference in field at minute m of
// lifecycle l is allowed.
func isAllowed(l string, m int, field string) bool {
	for _, a := range allowed {
		if slices.Contains(a.lifecycles, l) && a.from <= m && m <= a.to && a.field.MatchString(field) {
			return true
		}
	}
	return false
}
