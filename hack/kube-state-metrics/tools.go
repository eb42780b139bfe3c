//go:build tools

package tools

import _ "k8s.io/kube-state-metrics/v2"
