//go:build scale

package scale

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// stormEvent is the i-th event of a storm that passes the selectors the
// exporter had before it selected events narrowly: half crashlooping
// pods of the MCO namespace (the kubelet's BackOff), a quarter Warnings
// about pools in default, a quarter Warnings about a build Job, which the
// narrow selectors still pass and only the cap on what a watch keeps
// bounds. Messages of about 1 KiB, as an error chain's.
func stormEvent(i int) *corev1.Event {
	seen := metav1.NewTime(time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond))
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("storm.%07d", i), Namespace: snapshot.DefaultNamespace},
		Type:       corev1.EventTypeWarning, FirstTimestamp: seen, LastTimestamp: seen, Count: 1,
		Source: corev1.EventSource{Component: "kubelet"},
	}
	padding := strings.Repeat("context deadline exceeded; ", 36)
	switch i % 4 {
	case 0, 2:
		pod := fmt.Sprintf("machine-config-daemon-%05d", i%5000)
		e.InvolvedObject = corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: snapshot.DefaultNamespace, Name: pod}
		e.Reason, e.Message = "BackOff", "Back-off restarting failed container machine-config-daemon in pod "+pod+": "+padding
	case 1:
		e.Namespace = snapshot.EventNamespace
		e.InvolvedObject = corev1.ObjectReference{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineConfigPool", Name: fmt.Sprintf("pool-%d", i%50)}
		e.Reason, e.Message = "FailedToSync", "syncing pool: "+padding
		e.Source.Component = "machineconfigcontroller-nodecontroller"
	default:
		e.InvolvedObject = corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: snapshot.DefaultNamespace, Name: "build-storm"}
		e.Reason, e.Message = "FailedCreate", "Error creating: pods \"build-storm-x\" is forbidden: "+padding
		e.Source.Component = "job-controller"
	}
	return e
}

// TestEventStorm serves STORM_EVENTS (400,000) events of stormEvent to the
// exporter built from this tree (and to STORM_BASELINE, an exporter binary
// to compare with, when set), on a 100-node synthetic cluster, and reports
// each one's time to ready, resident memory and its peak, and what its
// event watches dropped. The API server answers the first lists as it
// does: streamed (WatchList) or, with STORM_WATCHLIST=false, in pages.
func TestEventStorm(t *testing.T) {
	n, err := strconv.Atoi(env("STORM_EVENTS", "400000"))
	if err != nil {
		t.Fatal("STORM_EVENTS:", err)
	}
	dir := t.TempDir()
	var args []string
	if env("STORM_WATCHLIST", "true") == "false" {
		args = append(args, "--feature-gates=WatchList=false")
	}
	c, k := startCluster(t, dir, os.Getenv("SCALE_ETCD"), os.Getenv("SCALE_KUBE_APISERVER"), args...)
	objs, err := objects(100)
	if err != nil {
		t.Fatal(err)
	}
	if err := createAll(t.Context(), k, objs); err != nil {
		t.Fatal(err)
	}
	fast := rest.CopyConfig(c.Admin)
	fast.QPS = -1 // no client-side limit: the storm is the API server's to absorb
	kf, err := cluster.NewKube(fast)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := parallel(t.Context(), 64, n, func(ctx context.Context, i int) error {
		e := stormEvent(i)
		_, err := kf.CS.CoreV1().Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events created in %s", n, time.Since(begin).Round(time.Second))

	bin, _ := buildStripped(t, dir)
	bins := map[string]string{Ours: bin}
	if b := os.Getenv("STORM_BASELINE"); b != "" {
		bins["baseline"] = b
	}
	for name, bin := range bins {
		r, err := measureStorm(t.Context(), dir, c, name, bin)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s, %d events: ready in %.1f s, RSS %.1f MiB, peak RSS %.1f MiB, dropped %s", name, n, r.ReadySeconds, r.RSSMiB, r.PeakRSSMiB, r.dropped)
	}
}

type stormResult struct {
	Result
	dropped string
}

// measureStorm starts bin against c, waits for /readyz and a settle, and
// reads its memory and its ocl_exporter_events_dropped_total.
func measureStorm(ctx context.Context, dir string, c *cluster.Cluster, name, bin string) (stormResult, error) {
	var r stormResult
	addr, err := cluster.FreeAddress()
	if err != nil {
		return r, err
	}
	begin := time.Now()
	p, err := cluster.StartProc(dir, name, bin, "--kubeconfig", c.AdminKubeconfig, "--web.listen-address", addr)
	if err != nil {
		return r, err
	}
	defer p.Stop()
	if err := cluster.WaitHTTP(p, http.DefaultClient, "http://"+addr+"/readyz", "", 10*time.Minute); err != nil {
		return r, err
	}
	r.ReadySeconds = time.Since(begin).Seconds()
	time.Sleep(settle)
	if r.RSSMiB, _, r.PeakRSSMiB, err = memory(p.Cmd.Process.Pid); err != nil {
		return r, err
	}
	body, err := scrape(ctx, http.DefaultClient, "http://"+addr+"/metrics", false)
	if err != nil {
		return r, err
	}
	var dropped []string
	for l := range strings.Lines(string(body)) {
		if strings.HasPrefix(l, "ocl_exporter_events_dropped_total{") {
			dropped = append(dropped, strings.TrimSpace(strings.TrimPrefix(l, "ocl_exporter_events_dropped_total")))
		}
	}
	r.dropped = strings.Join(dropped, ", ")
	return r, nil
}
