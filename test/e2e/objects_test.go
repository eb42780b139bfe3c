//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// kube is the admin's access to the cluster (test/cluster), with the
// fixtures' creation and deletion in dependency order.
type kube struct{ *cluster.Kube }

func newKube(cfg *rest.Config) (*kube, error) {
	k, err := cluster.NewKube(cfg)
	return &kube{k}, err
}

// createOrder creates prerequisites first: a MachineOSConfig's pool before
// it, a build's MachineOSConfig before the build, Jobs before their pods.
var createOrder = []string{
	"Namespace", "Secret", "ConfigMap", "Node", "MachineConfig", "MachineConfigPool", "MachineOSConfig",
	"MachineOSBuild", "Job", "Pod", "Deployment", "MachineConfigNode", "ClusterOperator", "Event",
}

// orderedByCreation are the kinds whose creation order the exporter reads
// (the newest build of a MachineOSConfig, the newest pod of a Job):
// objects of these kinds are created in their recorded order, in distinct
// seconds when their recorded times differ.
var orderedByCreation = []string{"MachineOSBuild", "Pod"}

func kindRank(kind string) int {
	if i := slices.Index(createOrder, kind); i >= 0 {
		return i
	}
	return len(createOrder)
}

// sortForCreate orders objects by kind, then by recorded creation time.
func sortForCreate(objs []*unstructured.Unstructured) {
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		if d := kindRank(a.GetKind()) - kindRank(b.GetKind()); d != 0 {
			return d
		}
		ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		if !ta.Equal(&tb) {
			if ta.Before(&tb) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
}

// applyAll creates objs in dependency and creation order. The API server
// stamps creationTimestamp to the second, so before an object of an
// ordered kind recorded later than the previous one it waits for the next
// second.
func (k *kube) applyAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	objs = slices.Clone(objs)
	sortForCreate(objs)
	var prev *unstructured.Unstructured
	var prevSecond int64
	for _, u := range objs {
		if prev != nil && prev.GetKind() == u.GetKind() && slices.Contains(orderedByCreation, u.GetKind()) {
			tp, tu := prev.GetCreationTimestamp(), u.GetCreationTimestamp()
			if tp.Before(&tu) {
				for time.Now().Unix() == prevSecond {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}
		if err := k.Create(ctx, u); err != nil {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), objectName(u), err)
		}
		prev, prevSecond = u, time.Now().Unix()
	}
	return nil
}

// removeAll deletes objs, dependents first.
func (k *kube) removeAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	objs = slices.Clone(objs)
	sortForCreate(objs)
	slices.Reverse(objs)
	for _, u := range objs {
		if err := k.Remove(ctx, u); err != nil {
			return fmt.Errorf("delete %s %s: %w", u.GetKind(), objectName(u), err)
		}
	}
	return nil
}

func objectName(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetName()
}
