package examples_test

import (
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

type kind struct {
	new        func() metav1.Object
	namespaced bool
}

// kinds maps apiVersion/kind to a constructor and whether the kind is
// namespaced: every kind the exporter reads (snapshot.Resources()), as
// its whole Go type even where the exporter reads only metadata, and the
// 4.16 and 4.17 shapes. Anything else in a fixture is an error.
var kinds = func() map[string]kind {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme, appsv1.AddToScheme, mcfgv1.Install, configv1.Install} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	out := map[string]kind{
		// The 4.16 and 4.17 shape (testdata/scenarios/v416-*): the
		// openshift/api module no longer has these types, so only their
		// metadata is checked here; source reads them into v1
		// (TestLoadV1alpha1MustGather).
		"machineconfiguration.openshift.io/v1alpha1/MachineOSConfig": {func() metav1.Object { return &unstructured.Unstructured{} }, false},
		"machineconfiguration.openshift.io/v1alpha1/MachineOSBuild":  {func() metav1.Object { return &unstructured.Unstructured{} }, false},
	}
	for _, r := range snapshot.Resources() {
		gvk := r.GVR.GroupVersion().WithKind(r.Kind)
		if _, err := scheme.New(gvk); err != nil {
			panic(fmt.Sprintf("resource %s: the scheme of examples_test.go does not know %s: add its group's AddToScheme: %v", r.Name, gvk, err))
		}
		out[kindKey(r)] = kind{func() metav1.Object {
			obj, _ := scheme.New(gvk)
			m, _ := obj.(metav1.Object)
			return m
		}, r.Namespaced}
	}
	return out
}()

// kindKey is r's objects' apiVersion/kind.
func kindKey(r snapshot.Resource) string {
	return r.GVR.GroupVersion().String() + "/" + r.Kind
}
