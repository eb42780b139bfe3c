package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// verdict decides the report. A failed check is a problem (exit 1)
// whatever else could not be read; without one, MachineOSConfigs that
// cannot be read, a --pool that names no pool, no MachineOSConfig at all
// leave it unknown (exit 2), and so does a layered pool whose checks the
// snapshot cannot all decide (its MachineOSConfig or its nodes'
// MachineConfigNodes not captured): nothing says it is healthy.
func verdict(r *Report, status []snapshot.ResourceStatus, o Options, moscs int, pools []string) (Verdict, string) {
	if o.Pool != "" && len(r.Pools) == 0 {
		return Unknown, fmt.Sprintf("no MachineConfigPool or MachineOSConfig names pool %q; the pools are: %s", o.Pool, orNone(strings.Join(pools, ", ")))
	}
	var unread *snapshot.ResourceStatus
	for i, st := range status {
		if st.Resource == resourceMachineOSConfigs && !st.Available {
			unread = &status[i]
		}
	}
	var bad, unseen []string
	// With MachineOSConfigs unreadable, the reader's own missing access is
	// why nothing can be diagnosed (exit 2), not a problem found (exit 1).
	if slices.ContainsFunc(r.Cluster, func(c Check) bool {
		return c.Status == Failed && (unread == nil || c.ID != CheckExporterAccess)
	}) {
		bad = append(bad, "cluster")
	}
	for _, p := range r.Pools {
		switch {
		case p.Verdict == Problem:
			bad = append(bad, "pool "+p.Name)
		case p.Verdict == Unknown && p.Layered:
			unseen = append(unseen, p.Name)
		}
	}
	switch {
	case len(bad) > 0 && moscs == 0 && unread == nil:
		// Exit 1, not 2: a node failing to update is a problem to fix,
		// whether or not a pool uses image mode yet.
		return Problem, fmt.Sprintf("no pool uses image mode, but %d failed check(s): %s", r.FailedChecks(), strings.Join(bad, ", "))
	case len(bad) > 0:
		return Problem, fmt.Sprintf("%d failed check(s): %s", r.FailedChecks(), strings.Join(bad, ", "))
	case unread != nil && len(unseen) > 0:
		return Unknown, fmt.Sprintf("cannot read MachineOSConfigs: %s; pool(s) %s use image mode, as other objects show: capture the rest (ocl_exporter capture)", reason(*unread, o), strings.Join(unseen, ", "))
	case unread != nil:
		return Unknown, "cannot read MachineOSConfigs: " + reason(*unread, o)
	case len(unseen) > 0:
		return Unknown, fmt.Sprintf("no problem found, but pool(s) %s not decided: the snapshot did not capture what %d check(s) read", strings.Join(unseen, ", "), r.countChecks(NotCaptured))
	case moscs == 0:
		return Unknown, "no MachineOSConfig exists: no pool uses image mode (On-Cluster Layering), and no node fails to update"
	}
	if n := r.countChecks(NotCaptured); n > 0 {
		return Healthy, fmt.Sprintf("no problem found; %d check(s) not decided: the snapshot did not capture what they read", n)
	}
	return Healthy, "no problem found"
}
