// Package review reads an OCL incident back from Prometheus: the
// exporter's series and the OCL alerts over a window, turned into a
// timeline per pool (MachineOSConfig changes, builds and their phases, the
// rollout node by node, the alerts) and the numbers an incident review
// asks for (time to detect, time to resolution, durations, nodes
// affected, retries).
//
// Fetch runs the range queries through any Prometheus-compatible HTTP API
// (Prometheus, Thanos Query, the OpenShift monitoring stack's querier);
// Build is a pure function from their results to a Report, so the
// timeline is tested without a server; Render writes text, markdown or
// JSON.
package review
