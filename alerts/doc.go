// Package alerts holds the Prometheus rule files (*rules.yaml), their
// promtool unit tests (tests/), the limits the rules hold that diagnose
// applies too (Limits, generated from the rules by rulelimits), the rule
// groups' evaluation order, and the Go tests that tie them to the rest of
// the repository: every alert has a runbook and meets the conventions, every
// metric an expression names is one the exporter emits, every class it
// names exists, and the seed scenario tests feed promtool the exporter's own
// output for each scenario.
package alerts
