// Package diagnose turns the analysis of one cluster view into a report:
// the seeds' three-stage walk (MachineOSConfig, MachineOSBuild, rollout)
// per pool, each check passed, failed, running or not reached, and for a
// failure the object and field that show it, the cause class, since when,
// the runbook and the next oc commands with the real names. It reads the
// same analysis findings the collectors turn into metrics: one truth, two
// views. Building a report is a pure function; renderers write it as text,
// JSON, markdown or HTML.
package diagnose

import (
	"time"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// SchemaVersion is the version of the JSON report (docs/diagnose.md,
// docs/diagnose.schema.json). It changes only when a field changes
// meaning or goes away; new optional fields keep it.
const SchemaVersion = 1

// Status is the outcome of a check or a stage.
type Status string

// Check and stage outcomes.
const (
	// Passed: nothing wrong.
	Passed Status = "passed"
	// Failed: something is wrong; the findings say what.
	Failed Status = "failed"
	// Running: in progress and not (yet) failing: a build that builds, a
	// rollout under way, a wait shorter than its alert's limit.
	Running Status = "running"
	// NotReached: an earlier stage failed and this one has no object of
	// its own to evaluate (no MachineOSBuild, no node updating).
	NotReached Status = "not_reached"
	// NotCaptured: the check reads a kind an offline snapshot does not
	// hold at all, so it cannot be decided; its findings name the kind.
	NotCaptured Status = "not_captured"
)

// Verdict is the outcome of a pool or of the whole report.
type Verdict string

// Verdicts, and the exit status of `ocl_exporter diagnose` for each.
const (
	Healthy Verdict = "healthy" // exit 0
	Problem Verdict = "problem" // exit 1
	// Unknown: the report could not be made: the OCL APIs are not served
	// or readable, or no MachineOSConfig exists.
	Unknown Verdict = "unknown" // exit 2
)

// ExitCode is the exit status for the verdict: 0 healthy, 1 a problem
// found, 2 could not diagnose.
func (v Verdict) ExitCode() int {
	switch v {
	case Healthy:
		return 0
	case Problem:
		return 1
	}
	return 2
}

// Report is the diagnosis of one cluster view.
type Report struct {
	SchemaVersion int `json:"schemaVersion"`
	// Time is when the view was evaluated; "since" times are before it.
	Time      time.Time `json:"time"`
	Namespace string    `json:"namespace"`
	Verdict   Verdict   `json:"verdict"`
	// Summary is one sentence for the whole cluster.
	Summary string `json:"summary"`
	// Cluster holds the checks that concern every pool: the exporter's
	// access, the operator, the machine-os-builder.
	Cluster []Check `json:"cluster"`
	Pools   []Pool  `json:"pools"`
	// HiddenPools counts the pools left out by Limit.
	HiddenPools int `json:"hiddenPools,omitempty"`

	// verdictFor decides the verdict of the report narrowed to one pool
	// (ForPool), from what New decided this one's.
	verdictFor func(r *Report, pool string) (Verdict, string)
}

// Pool is one MachineConfigPool, or the pool a MachineOSConfig names when
// that pool does not exist.
type Pool struct {
	Name            string  `json:"name"`
	Layered         bool    `json:"layered"`
	MachineOSConfig string  `json:"machineOSConfig,omitempty"`
	Verdict         Verdict `json:"verdict"`
	// Summary is one line: what the pool is doing or what is wrong.
	Summary string `json:"summary"`
	// Stages are the seeds' three stages for a layered pool, only the
	// rollout for a pool reverting from image mode, none otherwise.
	Stages []Stage `json:"stages,omitempty"`
}

// Stage is one of the three OCL stages of a pool.
type Stage struct {
	Number int     `json:"number"`
	Name   string  `json:"name"`
	Status Status  `json:"status"`
	Checks []Check `json:"checks"`
}

// Check is one question the report answers.
type Check struct {
	// ID is stable (docs/diagnose.md lists them); scripts may match it.
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Status   Status    `json:"status"`
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is one piece of evidence for a failed or running check.
type Finding struct {
	// Object and Field are where the evidence can be read.
	Object Object `json:"object"`
	Field  string `json:"field,omitempty"`
	// Message says what is wrong (or going on) in one sentence.
	Message string `json:"message"`
	// Class and Excerpt are the parsed cause (docs/classes.md) and the
	// line that decided it; Class is set on failures only.
	Class   classify.Class `json:"class,omitempty"`
	Excerpt string         `json:"excerpt,omitempty"`
	// LogFile is the snapshot's container log the cause was read from,
	// where the release left the container no termination message (a
	// must-gather's pods/<pod>/<container>/<container>/logs/current.log).
	LogFile string `json:"logFile,omitempty"`
	// Since is when it started at the latest, when the objects tell.
	Since *time.Time `json:"since,omitempty"`
	// Runbook is the alert whose runbook covers a failure.
	Runbook  *Runbook `json:"runbook,omitempty"`
	Commands []string `json:"commands,omitempty"`
}

// Object names a Kubernetes object; Kind "Resource" names a watched
// resource (the exporter's access).
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Runbook links an alert's runbook.
type Runbook struct {
	Alert string `json:"alert"`
	URL   string `json:"url"`
}

// FailedChecks counts the failed checks, cluster and pools.
func (r *Report) FailedChecks() int { return r.countChecks(Failed) }

// countChecks counts the checks with status st, cluster and pools.
func (r *Report) countChecks(st Status) int {
	n := 0
	count := func(cs []Check) {
		for _, c := range cs {
			if c.Status == st {
				n++
			}
		}
	}
	count(r.Cluster)
	for _, p := range r.Pools {
		for _, s := range p.Stages {
			count(s.Checks)
		}
	}
	return n
}

// ForPool is the report New makes with Options.Pool set to name (diagnose
// --pool): the cluster's checks and that pool's, and their verdict.
func (r *Report) ForPool(name string) *Report {
	n := *r
	n.Pools, n.HiddenPools = []Pool{}, 0
	for _, p := range r.Pools {
		if p.Name == name {
			n.Pools = append(n.Pools, p)
		}
	}
	if r.verdictFor != nil {
		v, summary := r.verdictFor(&n, name)
		n.Verdict, n.Summary = v, cleanText(summary)
	}
	return &n
}

// Limit keeps at most maxPools pools, those with a problem or unknown
// first in their order, then healthy ones, and counts the rest in
// HiddenPools: a page of 10,000 pools helps no one and costs the exporter
// a render of all of them.
func (r *Report) Limit(maxPools int) {
	if len(r.Pools) <= maxPools {
		return
	}
	kept := make([]Pool, 0, maxPools)
	for _, healthy := range []bool{false, true} {
		for _, p := range r.Pools {
			if (p.Verdict == Healthy) == healthy && len(kept) < maxPools {
				kept = append(kept, p)
			}
		}
	}
	r.HiddenPools += len(r.Pools) - len(kept)
	r.Pools = kept
}
