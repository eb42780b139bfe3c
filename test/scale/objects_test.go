//go:build scale

package scale

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
	"github.com/ocl-exporter/ocl_exporter/test/synth"
)

// required fills in what the API server requires and the generator, made
// for fake clientsets, leaves out: containers, a Job's template, a
// Deployment's selector, an Event's object.
var required = map[string]func(u *unstructured.Unstructured){
	"Pod": func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "image-build", "image": "quay.io/example/builder"}}, "spec", "containers")
	},
	"Job": func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedMap(u.Object, map[string]any{
			"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "image-build", "image": "quay.io/example/builder"}}},
		}, "spec", "template")
		// A Job's status cannot be written without its controller's
		// bookkeeping (startTime, the FailureTarget condition first).
		unstructured.RemoveNestedField(u.Object, "status")
	},
	"Deployment": func(u *unstructured.Unstructured) {
		labels := map[string]any{"app": u.GetName()}
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"matchLabels": labels}, "spec", "selector")
		_ = unstructured.SetNestedMap(u.Object, map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "builder", "image": "quay.io/example/builder"}}},
		}, "spec", "template")
	},
	"Event": func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"kind": "Pod", "namespace": u.GetNamespace(), "name": "machine-config-daemon"}, "involvedObject")
	},
}

// stampConditions sets the lastTransitionTime the CRDs require on
// conditions the generator leaves without one.
func stampConditions(u *unstructured.Unstructured) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["lastTransitionTime"] == nil {
			m["lastTransitionTime"] = "2025-10-01T00:00:00Z"
		}
	}
	if conds != nil {
		_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	}
}

// objects is the synthetic cluster of that size as the API server takes it.
func objects(nodes int) ([]*unstructured.Unstructured, error) {
	size := synth.Target
	size.Nodes = nodes
	var out []*unstructured.Unstructured
	for _, o := range synth.Objects(size) {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		if fix := required[u.GetKind()]; fix != nil {
			fix(u)
		}
		stampConditions(u)
		out = append(out, u)
	}
	return out, nil
}

// createAll creates objs with parallel workers, skipping those a smaller
// size already created: the generator names objects by index, so each size
// contains the one before.
func createAll(ctx context.Context, k *cluster.Kube, objs []*unstructured.Unstructured) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": snapshot.DefaultNamespace}}}
	if err := k.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return parallel(ctx, 32, len(objs), func(ctx context.Context, i int) error {
		if err := k.Create(ctx, objs[i]); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s: %w", objs[i].GetKind(), objs[i].GetName(), err)
		}
		return nil
	})
}

// parallel runs do for 0 to n-1 on that many workers and returns the
// first error.
func parallel(ctx context.Context, workers, n int, do func(ctx context.Context, i int) error) error {
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range work {
				if err := do(ctx, i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}
