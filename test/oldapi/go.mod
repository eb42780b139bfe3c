// Module oldapi pins the github.com/openshift/api of OpenShift 4.16 (the
// version the machine-config-operator's release-4.16 go.mod requires), for
// its v1alpha1 MachineOSConfig and MachineOSBuild CRD manifests, which later
// versions no longer ship: test/e2e installs them to serve a 4.16 API.
// Nothing imports it; test/e2e reads the manifests from the module cache
// (go mod download -json).
module github.com/ocl-exporter/ocl_exporter/test/oldapi

go 1.24

require github.com/openshift/api v0.0.0-20240425081546-8203151f085f
