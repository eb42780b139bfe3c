package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ocl-exporter/ocl_exporter/kubeapi"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// RESTConfig finds the cluster to talk to (LoadRESTConfig) and reads the
// files its credentials name as regular files of bounded size
// (ReadCredentialFiles).
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := LoadRESTConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	if err := ReadCredentialFiles(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadRESTConfig finds the cluster to talk to: an explicit kubeconfig
// file, else the in-cluster service account, else $KUBECONFIG or
// ~/.kube/config. The files a kubeconfig's current context names (its
// certificate-authority, client-certificate, client-key and tokenFile)
// must be regular files of at most MaxCredentialBytes: clientcmd reads
// the tokenFile itself, and a FIFO there hung it, /dev/zero exhausted
// the memory.
func LoadRESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := loadKubeconfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig})
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
	cfg, err = loadKubeconfig(rules)
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

// Backend lists and watches the watched resources for the informers: the
// API server live (Clients), a loaded snapshot offline (snapshot.Memory).
// Everything after it, informers, transforms and the view, is the same
// code.
type Backend interface {
	List(ctx context.Context, r snapshot.Resource, namespace string, o metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, r snapshot.Resource, namespace string, o metav1.ListOptions) (watch.Interface, error)
}

// Clients is the live Backend: typed resources through the REST client of
// their group, metadata-only resources through the metadata API.
type Clients struct {
	api    *kubeapi.Client
	meta   metadata.Interface
	older  olderServed
	logger *slog.Logger
}

// NewClients builds the live backend on api.
func NewClients(api *kubeapi.Client, logger *slog.Logger) (*Clients, error) {
	meta, err := api.Metadata()
	if err != nil {
		return nil, err
	}
	return &Clients{api: api, meta: meta, logger: logger}, nil
}

// List lists r in namespace ("" for cluster-scoped resources).
func (c *Clients) List(ctx context.Context, r snapshot.Resource, namespace string, o metav1.ListOptions) (runtime.Object, error) {
	if r.MetadataOnly {
		return c.meta.Resource(r.GVR).Namespace(namespace).List(ctx, o)
	}
	if old, ok := c.older.get(r); ok {
		list, err := c.listOlder(ctx, r, old, namespace, o)
		if !apierrors.IsNotFound(err) {
			return list, err
		}
		c.older.forget(r)
		c.logger.Info("the API server no longer serves this resource in the older version: trying the current one",
			"resource", r.Name, "version", old.Version)
	}
	// Get, not Into: Into returns nil, and an empty list, when the answer
	// decodes to another kind than the one asked for.
	out, err := c.request(r, namespace, &o).Do(ctx).Get()
	if err != nil {
		return c.listOlderIfNotServed(ctx, r, namespace, o, err)
	}
	// The decoder clears the kind it read: name the Go type it chose.
	if got, want := reflect.TypeOf(out), reflect.TypeOf(r.NewList()); got != want {
		return nil, fmt.Errorf("listing %s in %s: the API server answered a %s, not a %s; nothing of it is read",
			r.Name, r.GVR.Version, reflect.Indirect(reflect.ValueOf(out)).Type().Name(), want.Elem().Name())
	}
	return out, nil
}

// Watch watches r in namespace ("" for cluster-scoped resources).
func (c *Clients) Watch(ctx context.Context, r snapshot.Resource, namespace string, o metav1.ListOptions) (watch.Interface, error) {
	if r.MetadataOnly {
		return c.meta.Resource(r.GVR).Namespace(namespace).Watch(ctx, o)
	}
	if old, ok := c.older.get(r); ok {
		return c.watchOlder(ctx, r, old, namespace, o)
	}
	o.Watch = true
	var timeout time.Duration
	if o.TimeoutSeconds != nil {
		timeout = time.Duration(*o.TimeoutSeconds) * time.Second
	}
	return c.request(r, namespace, &o).Timeout(timeout).Watch(ctx)
}

// request is the GET a generated typed client sends for a list or watch.
func (c *Clients) request(r snapshot.Resource, namespace string, o *metav1.ListOptions) *rest.Request {
	return c.api.REST(r.GVR.GroupVersion()).Get().
		NamespaceIfScoped(namespace, namespace != "").
		Resource(r.GVR.Resource).
		VersionedParams(o, kubeapi.ParameterCodec)
}
