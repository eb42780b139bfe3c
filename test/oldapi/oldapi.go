// Package oldapi only keeps the openshift/api of OpenShift 4.16 required
// (see go.mod): test/e2e reads its v1alpha1 CRD manifests.
package oldapi

import _ "github.com/openshift/api/machineconfiguration/v1alpha1"
