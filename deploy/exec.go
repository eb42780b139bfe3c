package deploy

import (
	_ "embed" // the Deployment the runbooks exec into
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

//go:embed base/deployment.yaml
var deploymentYAML []byte

// Exec is the command line that runs the exporter's binary, by name, in
// the bundle's running Deployment as its service account, with nothing but
// oc: `oc -n NAMESPACE exec deploy/NAME --`, followed by binary and its
// arguments. The runbooks' first command is this, and their tests compare
// it with the bundle.
func Exec(binary string) (string, error) {
	var d struct {
		Metadata struct{ Name, Namespace string }
		Spec     struct {
			Template struct {
				Spec struct{ Containers []struct{ Name string } }
			}
		}
	}
	if err := yaml.Unmarshal(deploymentYAML, &d); err != nil {
		return "", fmt.Errorf("deploy/base/deployment.yaml: %w", err)
	}
	if d.Metadata.Name == "" || d.Metadata.Namespace == "" {
		return "", errors.New("deploy/base/deployment.yaml: no metadata.name or metadata.namespace")
	}
	// oc exec runs in the first container unless told otherwise.
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		return "", fmt.Errorf("deploy/base/deployment.yaml: %d containers; oc exec without -c needs the exporter's to be the only one", n)
	}
	return fmt.Sprintf("oc -n %s exec deploy/%s -- %s", d.Metadata.Namespace, d.Metadata.Name, binary), nil
}
