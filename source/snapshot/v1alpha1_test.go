package snapshot

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLoadV1alpha1MustGather reads a 4.17 must-gather, whose
// MachineOSConfigs, MachineOSBuilds and MachineConfigNodes are v1alpha1,
// into v1 objects, and says so once.
func TestLoadV1alpha1MustGather(t *testing.T) {
	var logs bytes.Buffer
	objs, err := Load(os.DirFS("testdata/v1alpha1-4.17"), ".", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var mosc *mcfgv1.MachineOSConfig
	var mosb *mcfgv1.MachineOSBuild
	var mcn *mcfgv1.MachineConfigNode
	for _, o := range objs {
		switch o := o.(type) {
		case *mcfgv1.MachineOSConfig:
			mosc = o
		case *mcfgv1.MachineOSBuild:
			mosb = o
		case *mcfgv1.MachineConfigNode:
			mcn = o
		}
	}
	if len(objs) != 5 || mosc == nil || mosb == nil || mcn == nil {
		t.Fatalf("loaded %d objects (%v), want the pool, the node, the MachineOSConfig, the MachineOSBuild and the MachineConfigNode", len(objs), objs)
	}
	if got := mcn.GetObjectKind().GroupVersionKind().Version; got != "v1" || mcn.Spec.Node.Name != "infra-0" || mcn.Spec.Pool.Name != "infra" {
		t.Errorf("MachineConfigNode is %s %+v, want v1 of node infra-0 in pool infra", got, mcn.Spec)
	}
	if c := meta.FindStatusCondition(mcn.Status.Conditions, string(mcfgv1.MachineConfigNodeUpdated)); c == nil || c.Status != metav1.ConditionTrue ||
		mcn.Status.ConfigVersion == nil || mcn.Status.ConfigVersion.Current != "rendered-infra-7d2f0c3a9b1e4d5f6a7b8c9d0e1f2a3b" {
		t.Errorf("MachineConfigNode status not read into v1: %+v", mcn.Status)
	}
	if got := mosc.GetObjectKind().GroupVersionKind().Version; got != "v1" {
		t.Errorf("MachineOSConfig is %s, want v1", got)
	}
	s := mosc.Spec
	if s.MachineConfigPool.Name != "infra" || s.RenderedImagePushSecret.Name != "push-secret" ||
		s.BaseImagePullSecret == nil || s.BaseImagePullSecret.Name != "global-pull-secret-copy" ||
		s.RenderedImagePushSpec != "quay.io/example/os-image:latest" || s.ImageBuilder.ImageBuilderType != mcfgv1.JobBuilder {
		t.Errorf("MachineOSConfig spec not read into v1: %+v", s)
	}
	if !strings.HasPrefix(string(mosc.Status.CurrentImagePullSpec), "quay.io/example/os-image@sha256:") {
		t.Errorf("currentImagePullspec not read: %+v", mosc.Status)
	}
	if mosb.Spec.MachineOSConfig.Name != "infra" || mosb.Spec.MachineConfig.Name != "rendered-infra-7d2f0c3a9b1e4d5f6a7b8c9d0e1f2a3b" ||
		mosb.Spec.RenderedImagePushSpec != "quay.io/example/os-image:latest" {
		t.Errorf("MachineOSBuild spec not read into v1: %+v", mosb.Spec)
	}
	if !strings.HasPrefix(string(mosb.Status.DigestedImagePushSpec), "quay.io/example/os-image@sha256:") ||
		mosb.Status.BuildEnd == nil || len(mosb.Status.Conditions) != 5 || mosb.Status.Builder != nil {
		t.Errorf("MachineOSBuild status not read into v1: %+v", mosb.Status)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "read=3 skipped=0") {
		t.Errorf("want one warning saying 3 objects were read, got:\n%s", logs.String())
	}
}

// TestLoadV1alpha1Unmappable skips a v1alpha1 object that lacks what v1
// needs, keeps everything else, and counts it in the one warning.
func TestLoadV1alpha1Unmappable(t *testing.T) {
	broken := strings.Replace(strings.Replace(mosc, "/v1\n", "/v1alpha1\n", 1), "machineConfigPool: {name: infra}", "machineConfigPool: {}", 1)
	var logs bytes.Buffer
	objs, err := Load(fstest.MapFS{
		"old.yaml":  {Data: []byte(broken)},
		"node.yaml": {Data: []byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")},
	}, ".", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || key(objs[0]) != "Node//n1" {
		t.Errorf("loaded %v, want the node only", objs)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "read=0 skipped=1") {
		t.Errorf("want one warning saying 1 object was skipped, got:\n%s", logs.String())
	}
}
