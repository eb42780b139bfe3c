// Module oldapi pins the github.com/openshift/api of OpenShift 4.16 (the
// version the machine-config-operator's release-4.16 go.mod requires), for
// its v1alpha1 MachineOSConfig and MachineOSBuild CRD manifests, which later
// versions no longer ship: test/e2e installs them to serve a 4.16 API.
// Nothing builds against it; test/e2e reads the manifests from the module cache
// (go mod download -json).
module github.com/ocl-exporter/ocl_exporter/test/oldapi

go 1.24

require github.com/openshift/api v0.0.0-20240425081546-8203151f085f

require (
	github.com/go-logr/logr v1.3.0 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/google/gofuzz v1.2.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	golang.org/x/net v0.17.0 // indirect
	golang.org/x/text v0.13.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	k8s.io/apimachinery v0.29.0 // indirect
	k8s.io/klog/v2 v2.110.1 // indirect
	k8s.io/utils v0.0.0-20230726121419-3b25d923346b // indirect
	sigs.k8s.io/json v0.0.0-20221116044647-bc3834ca7abd // indirect
	sigs.k8s.io/structured-merge-diff/v4 v4.4.1 // indirect
)
