package source

import (
	"errors"
	"fmt"
	"os"

	configclient "github.com/openshift/client-go/config/clientset/versioned"
	mcfgclient "github.com/openshift/client-go/machineconfiguration/clientset/versioned"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients are the API clients the informers list and watch through. Live
// they talk to a kube-apiserver; offline they are fakes loaded from a
// snapshot, so everything after this point is the same code.
type Clients struct {
	Kube          kubernetes.Interface
	Metadata      metadata.Interface
	MachineConfig mcfgclient.Interface
	Config        configclient.Interface
}

// RESTConfig finds the cluster to talk to: an explicit kubeconfig file, else
// the in-cluster service account, else $KUBECONFIG or ~/.kube/config.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading --kubeconfig %q: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if err == nil {
		return cfg, nil
	}
	if !errors.Is(err, rest.ErrNotInCluster) {
		return nil, fmt.Errorf("loading the in-cluster configuration: %w", err)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if !anyFileExists(rules.GetLoadingPrecedence()) {
		return nil, errors.New("no cluster configuration found: not running in a pod, --kubeconfig is unset and neither $KUBECONFIG nor ~/.kube/config exists; " +
			"pass --kubeconfig, or --snapshot=PATH to read a snapshot offline")
	}
	cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig from %v: %w", rules.GetLoadingPrecedence(), err)
	}
	return cfg, nil
}

func anyFileExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// NewClients builds live clients. Built-in kinds are read as protobuf, which
// costs the API server and the exporter less than JSON; CRDs only speak JSON.
func NewClients(cfg *rest.Config, userAgent string) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	proto := rest.CopyConfig(cfg)
	proto.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	proto.ContentType = "application/vnd.kubernetes.protobuf"

	kube, err := kubernetes.NewForConfig(proto)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the metadata client: %w", err)
	}
	mcfg, err := mcfgclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the machineconfiguration client: %w", err)
	}
	conf, err := configclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the config.openshift.io client: %w", err)
	}
	return &Clients{Kube: kube, Metadata: meta, MachineConfig: mcfg, Config: conf}, nil
}
