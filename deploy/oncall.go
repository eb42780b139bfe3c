package deploy

import (
	_ "embed" // the Deployment the on-call command reaches
	"errors"
	"fmt"
	"net"
	"strings"

	"sigs.k8s.io/yaml"
)

//go:embed base/deployment.yaml
var deploymentYAML []byte

// portForwardFlag is the exporter's flag for the loopback address that
// serves /status to oc port-forward.
const portForwardFlag = "--web.port-forward-address="

// OnCall is the on-call path into the bundle's running exporter: its
// namespace and Deployment, and the port of the loopback address its
// --web.port-forward-address serves /status on.
type OnCall struct {
	Namespace, Deployment, Port string
}

// BundleOnCall reads the on-call path from deploy/base/deployment.yaml.
func BundleOnCall() (OnCall, error) {
	var d struct {
		Metadata struct{ Name, Namespace string }
		Spec     struct {
			Template struct {
				Spec struct{ Containers []struct{ Args []string } }
			}
		}
	}
	if err := yaml.Unmarshal(deploymentYAML, &d); err != nil {
		return OnCall{}, fmt.Errorf("deploy/base/deployment.yaml: %w", err)
	}
	if d.Metadata.Name == "" || d.Metadata.Namespace == "" {
		return OnCall{}, errors.New("deploy/base/deployment.yaml: no metadata.name or metadata.namespace")
	}
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		return OnCall{}, fmt.Errorf("deploy/base/deployment.yaml: %d containers, want the exporter alone", n)
	}
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if addr, ok := strings.CutPrefix(a, portForwardFlag); ok {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return OnCall{}, fmt.Errorf("deploy/base/deployment.yaml: %s%s: %w", portForwardFlag, addr, err)
			}
			return OnCall{Namespace: d.Metadata.Namespace, Deployment: d.Metadata.Name, Port: port}, nil
		}
	}
	return OnCall{}, fmt.Errorf("deploy/base/deployment.yaml: the exporter has no %s: the on-call path has nothing to read", portForwardFlag)
}

// Command is every runbook's first command: the exporter's own report,
// the text diagnose prints, of pool (a placeholder such as <pool>, or ""
// for the whole cluster), read as the responder's own oc login through oc
// port-forward (pods/portforward, which ResponderRole grants) and curl.
// It needs no token, certificate or exec: the port-forward is the only
// gate, and the address it reaches is the pod's loopback. curl retries
// while the forward starts; kill ends the forward.
func (o OnCall) Command(pool string) string {
	url := "localhost:" + o.Port + "/status"
	if pool != "" {
		url += "?pool=" + pool
	}
	return fmt.Sprintf("oc -n %s port-forward deploy/%s %s >/dev/null & curl -sS --retry 5 --retry-connrefused '%s'; kill $!",
		o.Namespace, o.Deployment, o.Port, url)
}

// ResponderRole is the Role, in the exporter's namespace, with which the
// first command works: bound to a user or group, it grants the
// port-forward to the exporter's pod and nothing else of the namespace
// (docs/serving.md, "Who may do what").
const ResponderRole = "ocl-exporter-responder"
