//go:build tools

// Package tools pins the Prometheus Operator that the integration suite
// runs (make e2e-tools builds it into $(E2E_CACHE)); its CRDs come from the
// same module version in the module cache.
package tools

import _ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
