// Package snapshottest holds the objects the tests of package snapshot and
// of the informers that read a snapshot (package source) both load.
package snapshottest

// MachineOSConfig is a MachineOSConfig of pool infra, as `oc get -o yaml`
// writes one.
const MachineOSConfig = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineOSConfig
metadata:
  name: infra
spec:
  machineConfigPool: {name: infra}
  imageBuilder: {imageBuilderType: Job}
  renderedImagePushSecret: {name: push}
  renderedImagePushSpec: quay.io/example/os:latest
`

// SecretList is two Secrets of the MCO namespace in a List, the first with
// data and a last-applied annotation that holds it too: what a snapshot
// must not keep.
const SecretList = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata:
    name: push
    namespace: openshift-machine-config-operator
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: '{"data":{".dockerconfigjson":"c2VjcmV0"}}'
  data:
    .dockerconfigjson: c2VjcmV0
- apiVersion: v1
  kind: Secret
  metadata: {name: pull, namespace: openshift-machine-config-operator}
`
