package diagnose

// New builds a report: the analysis findings it reads, computed once.

import (
	"slices"
	"time"

	"github.com/ocl-exporter/ocl_exporter/alerts"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/ocl-exporter/ocl_exporter/analysis"
)

// Options shape a report.
type Options struct {
	// RunbookBase is prefixed to "<Alert>.md"; it ends with a slash.
	RunbookBase string
	// Pool narrows the report to one pool; "" reports every pool.
	Pool string
	// Public leaves the API's error text out of the report (see
	// snapshot.ResourceStatus.PublicReason): /status may be read by anyone
	// who can reach it.
	Public bool
	// Limits are the waits and counts the alerts fire at; the zero value
	// means alerts.RuleLimits, those of the rule files.
	Limits alerts.Limits
	// Identity is who read the cluster ("user alice"), when not the
	// exporter itself (the status page): what it may not list is named
	// as its, not the exporter's.
	Identity string
}

// resourceMachineOSConfigs is the resource without which nothing can be
// diagnosed.
const resourceMachineOSConfigs = "machineosconfigs.machineconfiguration.openshift.io"

// New diagnoses one view of the cluster. status is the source's view of
// which resources it could read.
func New(c *analysis.Cluster, status []snapshot.ResourceStatus, o Options) *Report {
	b := newReportBuilder(c, o)
	r := &Report{SchemaVersion: SchemaVersion, Time: c.Now.UTC(), Namespace: c.Namespace, Cluster: b.clusterChecks(status), Pools: []Pool{}}
	pools := b.poolNames()
	for _, name := range pools {
		if o.Pool == "" || o.Pool == name {
			r.Pools = append(r.Pools, b.pool(name))
		}
	}
	r.Verdict, r.Summary = verdict(r, status, o, len(c.MachineOSConfigs), pools)
	if o.Pool == "" {
		// The count, not the view: a report outlives the view it read.
		moscs := len(c.MachineOSConfigs)
		r.verdictFor = func(n *Report, pool string) (Verdict, string) {
			o := o
			o.Pool = pool
			return verdict(n, status, o, moscs, pools)
		}
	}
	r.nameLogFiles(c)
	r.clean()
	return r
}

// reason is why a resource cannot be read, as much as o lets the report say.
func reason(st snapshot.ResourceStatus, o Options) string {
	if o.Public {
		return st.PublicReason()
	}
	return st.Reason
}

// reportBuilder holds the analysis findings one report reads, computed
// once.
type reportBuilder struct {
	c       *analysis.Cluster
	o       Options
	limits  alerts.Limits
	now     time.Time
	moscs   map[string]analysis.MachineOSConfigFinding // by pool
	objects map[string]*mcfgv1.MachineOSConfig         // by name
	builds  map[string]analysis.Build                  // current and newest builds by name
	waits   map[string]analysis.BuildWait              // by MachineOSConfig
	rollout analysis.Rollout
	left    map[string]int // ephemeral objects by build
	// building marks the MachineOSConfigs with a build not over.
	building map[string]bool
	orphans  map[string][]analysis.Orphan // by MachineOSConfig
	// machineOSBuilder is the machine-os-builder Deployment's state.
	machineOSBuilder analysis.BuilderFinding
	op               *analysis.OperatorFinding
	// unseen are the pools with signs of image mode in a view without
	// MachineOSConfigs, by name.
	unseen map[string]analysis.UnseenLayering
}

func newReportBuilder(c *analysis.Cluster, o Options) *reportBuilder {
	b := &reportBuilder{
		c: c, o: o, limits: o.Limits, now: c.Now,
		moscs: map[string]analysis.MachineOSConfigFinding{}, objects: map[string]*mcfgv1.MachineOSConfig{},
		builds: map[string]analysis.Build{}, waits: map[string]analysis.BuildWait{}, left: map[string]int{}, building: map[string]bool{}, orphans: map[string][]analysis.Orphan{},
		unseen: map[string]analysis.UnseenLayering{},
	}
	if b.limits == (alerts.Limits{}) {
		b.limits = alerts.RuleLimits
	}
	all := analysis.Analyze(c, 0)
	b.rollout, b.machineOSBuilder, b.op = all.Rollout, all.Builder, all.Operator
	for _, f := range all.Configs {
		b.moscs[f.Pool] = f
	}
	for _, u := range all.Unseen {
		b.unseen[u.Pool] = u
	}
	for _, m := range c.MachineOSConfigs {
		b.objects[m.Name] = m
	}
	for _, bd := range all.Builds {
		b.builds[bd.Name] = bd
		switch bd.Phase {
		case analysis.BuildInitial, analysis.BuildPrepared, analysis.BuildBuilding:
			b.building[bd.MachineOSConfig] = true
		}
	}
	for _, w := range all.BuildWaits {
		b.waits[w.MachineOSConfig] = w
	}
	for _, e := range all.Ephemeral {
		b.left[e.MachineOSBuild] += e.Count
	}
	for _, o := range all.Orphaned {
		b.orphans[o.MachineOSConfig] = append(b.orphans[o.MachineOSConfig], o)
	}
	return b
}

// poolNames lists every pool and every pool a MachineOSConfig names.
func (b *reportBuilder) poolNames() []string {
	var names []string
	for _, p := range b.rollout.Pools {
		names = append(names, p.Name)
	}
	for pool := range b.moscs {
		if !slices.Contains(names, pool) {
			names = append(names, pool)
		}
	}
	slices.Sort(names)
	return names
}

func (b *reportBuilder) runbook(alert string) *Runbook {
	return &Runbook{Alert: alert, URL: b.o.RunbookBase + alert + ".md"}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
