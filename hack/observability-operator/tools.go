//go:build tools

// Package tools pins the Cluster Observability Operator's module (the
// rhobs/observability-operator repository) at a release tag: the e2e
// suite installs the perses.dev and UIPlugin CRDs of deploy/ in that
// module version (test/e2e/perses_test.go). Nothing is built from it; the
// import keeps the requirement.
package tools

import _ "github.com/rhobs/observability-operator/pkg/assets"
