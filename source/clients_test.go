package source

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/ocl-exporter/ocl_exporter/kubeapi"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

const protobuf = "application/vnd.kubernetes.protobuf"

// apiServer answers the requests the live backend sends, the way the API
// server does: built-in kinds as protobuf when asked, CRDs as JSON.
func apiServer(t *testing.T) *Clients {
	t.Helper()
	pods := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "build-1-abcde", Namespace: snapshot.DefaultNamespace}}}}
	moscs := `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineOSConfigList","metadata":{"resourceVersion":"8"},` +
		`"items":[{"metadata":{"name":"infra"},"spec":{"machineConfigPool":{"name":"infra"}}}]}`
	return liveClients(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/api/v1/namespaces/"+snapshot.DefaultNamespace+"/pods" && q.Get("labelSelector") == snapshot.LabelJobName && q.Get("watch") == "":
			if !strings.HasPrefix(r.Header.Get("Accept"), protobuf) {
				t.Errorf("pods asked for %q, want protobuf first", r.Header.Get("Accept"))
			}
			info, _ := runtime.SerializerInfoForMediaType(kubeapi.Codecs.SupportedMediaTypes(), protobuf)
			b, err := runtime.Encode(kubeapi.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), pods)
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", protobuf)
			_, _ = w.Write(b)
		case r.URL.Path == "/apis/machineconfiguration.openshift.io/v1/machineosconfigs" && q.Get("watch") == "":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, moscs)
		case r.URL.Path == "/apis/machineconfiguration.openshift.io/v1/machineosconfigs" && q.Get("watch") == "true" && q.Get("resourceVersion") == "8":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintln(w, `{"type":"DELETED","object":{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineOSConfig","metadata":{"name":"infra","resourceVersion":"9"}}}`)
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			http.NotFound(w, r)
		}
	}))
}

// liveClients is the live backend on an API server that h plays.
func liveClients(t testing.TB, h http.Handler) *Clients {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	api, err := kubeapi.New(&rest.Config{Host: srv.URL}, "test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClients(api, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientsListAndWatchTheAPIServer(t *testing.T) {
	c := apiServer(t)
	ctx := context.Background()
	pods := resource(t, "pods")
	list, err := c.List(ctx, pods, snapshot.DefaultNamespace, metav1.ListOptions{LabelSelector: pods.LabelSelector})
	if err != nil {
		t.Fatal(err)
	}
	if pl := list.(*corev1.PodList); pl.ResourceVersion != "7" || len(pl.Items) != 1 || pl.Items[0].Name != "build-1-abcde" {
		t.Errorf("pods: %+v", pl)
	}

	moscs := resource(t, "machineosconfigs.machineconfiguration.openshift.io")
	list, err = c.List(ctx, moscs, "", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ml := list.(*mcfgv1.MachineOSConfigList); len(ml.Items) != 1 || ml.Items[0].Spec.MachineConfigPool.Name != "infra" {
		t.Errorf("machineosconfigs: %+v", ml)
	}
	w, err := c.Watch(ctx, moscs, "", metav1.ListOptions{ResourceVersion: "8"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e := <-w.ResultChan()
	if m, ok := e.Object.(*mcfgv1.MachineOSConfig); e.Type != watch.Deleted || !ok || m.Name != "infra" {
		t.Errorf("watch event %s %#v", e.Type, e.Object)
	}
}
