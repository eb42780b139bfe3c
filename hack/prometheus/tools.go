//go:build tools

// Package tools pins the Prometheus that runs the Prometheus Operator's
// configuration in the integration suite (make e2e-tools builds it into
// $(E2E_CACHE)): the version the operator in hack/prometheus-operator
// defaults to. Debian's Prometheus, which the rest of the suite runs, is
// built without Kubernetes service discovery. A module of its own: the
// operator's module graph moves client-go past what this Prometheus builds
// with.
package tools

import _ "github.com/prometheus/prometheus/cmd/prometheus"
