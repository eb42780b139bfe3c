package review

import "time"

// Report is a review of one window: what the JSON output holds
// (docs/review.md describes it field by field).
type Report struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Step    Duration  `json:"step"`
	Cluster string    `json:"cluster,omitempty"`
	Pool    string    `json:"pool,omitempty"`
	// DataFrom is the first moment the exporter's series exist in the
	// window; later than From when Prometheus no longer holds (or never
	// held) the start of it.
	DataFrom time.Time `json:"dataFrom"`
	// Incident is false when no OCL alert fired and no failure signal
	// showed in the window: no incident, unless Partial.
	Incident bool `json:"incident"`
	// Partial: the querier warned (a Thanos store that did not answer,
	// say) and the series may be incomplete; Incident false then means
	// "not known", never "no incident".
	Partial bool `json:"partial"`
	// Warnings are the querier's, and the samples review ignored.
	Warnings []string     `json:"warnings,omitempty"`
	Pools    []PoolReport `json:"pools"`
	// Alerts without a pool (the exporter, the operator, the builder).
	Alerts  []Alert `json:"alerts"`
	Summary Summary `json:"summary"`
}

// PoolReport is one pool's timeline.
type PoolReport struct {
	Pool string `json:"pool"`
	// CurrentBuild lists each change of the MachineOSConfig's current
	// build (mosc_current_build_info).
	CurrentBuild []Change      `json:"currentBuild"`
	Builds       []BuildReport `json:"builds"`
	Rollout      RolloutReport `json:"rollout"`
	Signals      []Signal      `json:"signals"`
	Alerts       []Alert       `json:"alerts"`
	Summary      Summary       `json:"summary"`
}

// Change is a value that took effect at a moment.
type Change struct {
	At    time.Time `json:"at"`
	Value string    `json:"value"`
}

// BuildReport is one MachineOSBuild.
type BuildReport struct {
	Name string `json:"name"`
	// Phases lists each phase with the moment the build entered it.
	Phases  []Change   `json:"phases"`
	Created *time.Time `json:"created,omitempty"`
	Started *time.Time `json:"started,omitempty"`
	Ended   *time.Time `json:"ended,omitempty"`
	// Duration is Ended - Started, when both are known.
	Duration *Duration `json:"duration,omitempty"`
	// PodFailures is the most failed pods the build counted.
	PodFailures int      `json:"podFailures"`
	Failures    []Signal `json:"failures"`
}

// RolloutReport is how the pool's nodes moved.
type RolloutReport struct {
	Nodes []NodeReport `json:"nodes"`
	// Updating, Degraded and Paused are the windows the pool spent so.
	Updating []Span `json:"updating"`
	Degraded []Span `json:"degraded"`
	Paused   []Span `json:"paused"`
	// Duration runs from the first node targeted to the last node on
	// target, when every node targeted in the window got there.
	Duration *Duration `json:"duration,omitempty"`
}

// NodeReport is one node that was off its target in the window.
type NodeReport struct {
	Node string `json:"node"`
	// Targeted is when it went off target (a new config or image to
	// apply); nil when it already was at From.
	Targeted *time.Time `json:"targeted,omitempty"`
	// Reached is when it was on target again; nil while it is not.
	Reached  *time.Time `json:"reached,omitempty"`
	Failures []Signal   `json:"failures"`
}

// Span is a window [Start, End); End is nil while it lasts at To.
type Span struct {
	Start time.Time  `json:"start"`
	End   *time.Time `json:"end,omitempty"`
}

// Signal is a failure the exporter showed: what, the parsed class, the
// first and the last excerpt, and when it showed.
type Signal struct {
	What  string `json:"what"`
	Class string `json:"class,omitempty"`
	Span  Span   `json:"span"`
	First string `json:"firstExcerpt,omitempty"`
	Last  string `json:"lastExcerpt,omitempty"`
}

// Alert is one OCL alert that fired: its name, its identifying labels and
// when it fired, with the first failing signal before it.
type Alert struct {
	Name     string            `json:"name"`
	Severity string            `json:"severity"`
	Labels   map[string]string `json:"labels"`
	Span     Span              `json:"span"`
	Signal   *Signal           `json:"signal,omitempty"`
}

// Summary holds the numbers a review asks for.
type Summary struct {
	FirstSignal *Signal    `json:"firstSignal,omitempty"`
	FirstPage   *time.Time `json:"firstPage,omitempty"`
	// TimeToDetect runs from the first failing signal to the first page.
	TimeToDetect *Duration `json:"timeToDetect,omitempty"`
	// Resolved is when the last page resolved, nil while one fires at To.
	Resolved *time.Time `json:"resolved,omitempty"`
	// TimeToResolve runs from the first failing signal to Resolved.
	TimeToResolve *Duration `json:"timeToResolve,omitempty"`
	Pages         int       `json:"pages"`
	Builds        int       `json:"builds"`
	// FailedPods are the build pods that failed, over every build.
	FailedPods int `json:"failedPods"`
	// NodesOffTarget were off target at some point; NodesFailing failed.
	NodesOffTarget int `json:"nodesOffTarget"`
	NodesFailing   int `json:"nodesFailing"`
}

// Duration is a time.Duration that reads as one in JSON ("1h2m0s").
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

func durationPtr(d time.Duration) *Duration { v := Duration(d); return &v }
