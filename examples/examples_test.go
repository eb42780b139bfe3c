// Package examples_test checks the bundled snapshot (examples/snapshot) and
// the seed scenarios (testdata/scenarios): every document must decode
// strictly into the Go type of its apiVersion/kind, and satisfy the schema
// and CEL rules of the real CRDs that a Go test can check, so the same files
// also apply cleanly to a real API server.
package examples_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	"github.com/ocl-exporter/ocl_exporter/test/scenario"
)

const mcoNamespace = "openshift-machine-config-operator"

// CEL rules of the openshift/api CRDs, as Go regular expressions.
var (
	// ImageTagFormat (renderedImagePushSpec).
	imageTag    = regexp.MustCompile(`^([a-zA-Z0-9-]+\.)+[a-zA-Z0-9-]+(:[0-9]{2,5})?(/[a-zA-Z0-9-_]{1,61})*/[a-zA-Z0-9-_.]+:[a-zA-Z0-9._-]+$`)
	imageTagSvc = regexp.MustCompile(`^[^.]+\.[^.]+\.svc:\d+\/[^\/]+\/[^\/]+:[^\/]+$`)
	// ImageDigestFormat (currentImagePullSpec, digestedImagePushSpec, MCN configImage).
	digestSuffix = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	digestName   = regexp.MustCompile(`^([a-zA-Z0-9-]+\.)+[a-zA-Z0-9-]+(:[0-9]{2,5})?/([a-zA-Z0-9-_]{0,61}/)?[a-zA-Z0-9-_.]*?$`)
	// metav1.Condition reason.
	conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
)

// object is one decoded document.
type object struct {
	where string // file, document and item
	kind  string // apiVersion/kind
	obj   metav1.Object
	raw   []byte
}

func TestFixtures(t *testing.T) {
	roots := []string{"snapshot"}
	scenarios, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(scenarios)
	roots = append(roots, scenarios...)
	if len(scenarios) == 0 {
		t.Fatal("no scenarios under testdata/scenarios")
	}
	held := map[string]bool{}
	for _, root := range roots {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(root), func(t *testing.T) {
			root := scenario.Dir(t, root)
			objs := load(t, root)
			if len(objs) == 0 {
				t.Fatalf("%s: no objects", root)
			}
			for _, o := range objs {
				checkMeta(t, o)
				checkObject(t, o)
				held[o.kind] = true
			}
			checkReferences(t, objs)
			if _, err := os.Stat(filepath.Join(root, "README.md")); err != nil {
				t.Errorf("every fixture directory needs a README.md saying what it reproduces: %v", err)
			}
		})
	}
	for _, r := range snapshot.Resources() {
		if !held[kindKey(r)] {
			t.Errorf("resource %s: no fixture holds a %s: add one to a scenario of testdata/scenarios/ (healthy-rollout-done, which the others take files from, for a kind every cluster has)", r.Name, kindKey(r))
		}
	}
}

// load decodes every YAML/JSON file under root: single objects, multi-document
// files and kind: List.
func load(t *testing.T, root string) []object {
	t.Helper()
	var out []object
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, doc := range splitDocuments(data) {
			where := fmt.Sprintf("%s#%d", path, i)
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if tm.APIVersion == snapshot.CaptureRecordAPIVersion {
				continue // the snapshot's capture time, not a cluster object
			}
			if tm.Kind != "List" {
				out = append(out, decode(t, where, doc))
				continue
			}
			var list struct {
				metav1.TypeMeta `json:",inline"`
				Metadata        metav1.ListMeta   `json:"metadata"`
				Items           []json.RawMessage `json:"items"`
			}
			if err := yaml.UnmarshalStrict(doc, &list); err != nil {
				t.Errorf("%s: List: %v", where, err)
				continue
			}
			for j, item := range list.Items {
				out = append(out, decode(t, fmt.Sprintf("%s.items[%d]", where, j), item))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, doc := range docSeparator.Split(string(data), -1) {
		empty := true
		for _, line := range strings.Split(doc, "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") {
				empty = false
				break
			}
		}
		if !empty {
			docs = append(docs, []byte(doc))
		}
	}
	return docs
}

func decode(t *testing.T, where string, doc []byte) object {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		t.Errorf("%s: %v", where, err)
		return object{where: where}
	}
	key := tm.APIVersion + "/" + tm.Kind
	k, ok := kinds[key]
	if !ok {
		t.Errorf("%s: unknown kind %q", where, key)
		return object{where: where, kind: key}
	}
	obj := k.new()
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Errorf("%s: %s: %v", where, key, err)
	}
	raw, _ := yaml.YAMLToJSON(doc)
	return object{where: where, kind: key, obj: obj, raw: raw}
}

func checkMeta(t *testing.T, o object) {
	t.Helper()
	if o.obj == nil {
		return
	}
	m := o.obj
	if m.GetName() == "" {
		t.Errorf("%s: metadata.name is required", o.where)
	}
	if kinds[o.kind].namespaced != (m.GetNamespace() != "") {
		t.Errorf("%s: %s %q: namespace %q does not fit the kind's scope", o.where, o.kind, m.GetName(), m.GetNamespace())
	}
	for _, e := range validation.IsDNS1123Subdomain(m.GetName()) {
		t.Errorf("%s: name %q: %s", o.where, m.GetName(), e)
	}
}

func checkObject(t *testing.T, o object) {
	t.Helper()
	if o.obj == nil { // undecodable or of an unknown kind: decode said so
		return
	}
	errf := func(format string, args ...any) {
		t.Errorf("%s: %s %q: %s", o.where, o.kind, o.obj.GetName(), fmt.Sprintf(format, args...))
	}
	switch o.obj.(type) {
	case *mcfgv1.MachineOSConfig, *mcfgv1.MachineOSBuild, *mcfgv1.MachineConfigNode:
		// metav1.Condition requires message too, even when empty.
		var raw struct {
			Status struct {
				Conditions []map[string]any `json:"conditions"`
			} `json:"status"`
		}
		_ = json.Unmarshal(o.raw, &raw)
		for _, c := range raw.Status.Conditions {
			if _, ok := c["message"]; !ok {
				errf("status.conditions %q: message is required", c["type"])
			}
		}
	}
	switch x := o.obj.(type) {
	case *mcfgv1.MachineOSConfig:
		if bytes.Contains(o.raw, []byte("currentImagePullSecret")) {
			errf("currentImagePullSecret does not exist in machineconfiguration/v1")
		}
		s := x.Spec
		if x.Name != s.MachineConfigPool.Name {
			errf("MachineOSConfig name must match the referenced MachineConfigPool name %q", s.MachineConfigPool.Name)
		}
		dnsNames(errf, "spec.machineConfigPool.name", s.MachineConfigPool.Name)
		dnsNames(errf, "spec.renderedImagePushSecret.name", s.RenderedImagePushSecret.Name)
		if s.BaseImagePullSecret != nil {
			dnsNames(errf, "spec.baseImagePullSecret.name", s.BaseImagePullSecret.Name)
		}
		if s.ImageBuilder.ImageBuilderType != mcfgv1.JobBuilder {
			errf("spec.imageBuilder.imageBuilderType: Unsupported value %q: supported values: \"Job\"", s.ImageBuilder.ImageBuilderType)
		}
		tagFormat(errf, "spec.renderedImagePushSpec", string(s.RenderedImagePushSpec))
		if len(s.Containerfile) > 4 {
			errf("spec.containerFile: at most 4 items")
		}
		arches := map[mcfgv1.ContainerfileArch]bool{}
		for _, c := range s.Containerfile {
			switch c.ContainerfileArch {
			case mcfgv1.Arm64, mcfgv1.Amd64, mcfgv1.Ppc, mcfgv1.S390, mcfgv1.NoArch:
			default:
				errf("spec.containerFile.containerfileArch: Unsupported value %q", c.ContainerfileArch)
			}
			if arches[c.ContainerfileArch] {
				errf("spec.containerFile: duplicate containerfileArch %q", c.ContainerfileArch)
			}
			arches[c.ContainerfileArch] = true
			if c.Content == "" || len(c.Content) > 4096 {
				errf("spec.containerFile.content: required, at most 4096 characters")
			}
		}
		if x.Status.CurrentImagePullSpec != "" {
			digestFormat(errf, "status.currentImagePullSpec", string(x.Status.CurrentImagePullSpec))
		}
		if r := x.Status.MachineOSBuild; r != nil && (r.Group == "" || r.Name == "" || r.Resource == "") {
			errf("status.machineOSBuild needs group, name and resource")
		}
		conditions(errf, x.Status.Conditions, 0)
	case *mcfgv1.MachineOSBuild:
		s := x.Spec
		if len(s.MachineConfig.Name) < 10 {
			errf("spec.machineConfig.name %q: at least 10 characters", s.MachineConfig.Name)
		}
		dnsNames(errf, "spec.machineConfig.name", s.MachineConfig.Name)
		dnsNames(errf, "spec.machineOSConfig.name", s.MachineOSConfig.Name)
		tagFormat(errf, "spec.renderedImagePushSpec", string(s.RenderedImagePushSpec))
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(s.MachineOSConfig.Name) + `-[0-9a-f]{32}$`).MatchString(x.Name) {
			errf("name is not <machineosconfig>-<32 hex md5>")
		}
		if tag := string(s.RenderedImagePushSpec); !strings.HasSuffix(tag, ":"+x.Name) {
			errf("spec.renderedImagePushSpec %q: the MCO tags the image with the MachineOSBuild name", tag)
		}
		st := x.Status
		if st.BuildEnd != nil && (st.BuildStart == nil || !st.BuildStart.Before(st.BuildEnd)) {
			errf("status: buildEnd must be after buildStart")
		}
		if b := st.Builder; b != nil && (b.ImageBuilderType == mcfgv1.JobBuilder) != (b.Job != nil) {
			errf("status.builder: job is required when imageBuilderType is Job, and forbidden otherwise")
		}
		if st.DigestedImagePushSpec != "" {
			digestFormat(errf, "status.digestedImagePushSpec", string(st.DigestedImagePushSpec))
		}
		conditions(errf, st.Conditions, 8)
	case *mcfgv1.MachineConfigNode:
		if x.Spec.Node.Name != x.Name {
			errf("spec.node.name should match metadata.name")
		}
		if x.Status.ObservedGeneration < 1 {
			errf("status.observedGeneration must be at least 1")
		}
		if x.Spec.ConfigVersion.Desired == "" {
			errf("spec.configVersion.desired is required")
		}
		if d := x.Spec.ConfigImage.DesiredImage; d != "" {
			digestFormat(errf, "spec.configImage.desiredImage", string(d))
		}
		if ci := x.Status.ConfigImage; ci.CurrentImage != "" || ci.DesiredImage != "" {
			for field, v := range map[string]mcfgv1.ImageDigestFormat{"currentImage": ci.CurrentImage, "desiredImage": ci.DesiredImage} {
				if v != "" {
					digestFormat(errf, "status.configImage."+field, string(v))
				}
			}
		}
		conditions(errf, x.Status.Conditions, 20)
	case *mcfgv1.MachineConfigPool:
		for _, c := range x.Status.Conditions {
			if c.Type == "" || c.LastTransitionTime.IsZero() || !conditionStatus(string(c.Status)) {
				errf("status.conditions: %q needs type, a True/False/Unknown status and lastTransitionTime", c.Type)
			}
		}
		for _, p := range x.Status.PoolSynchronizersStatus {
			if p.MachineCount < p.UpdatedMachineCount || p.MachineCount < p.AvailableMachineCount ||
				p.MachineCount < p.UnavailableMachineCount || p.MachineCount < p.ReadyMachineCount ||
				p.AvailableMachineCount < p.ReadyMachineCount {
				errf("status.poolSynchronizersStatus %s: counts break the CRD rules", p.PoolSynchronizerType)
			}
		}
	case *configv1.ClusterOperator:
		for _, c := range x.Status.Conditions {
			if c.Type == "" || c.LastTransitionTime.IsZero() || !conditionStatus(string(c.Status)) {
				errf("status.conditions: %q needs type, status and lastTransitionTime", c.Type)
			}
		}
	case *corev1.Event:
		// The API server's validation of core/v1 Events without eventTime.
		ns := x.InvolvedObject.Namespace
		if ns == "" && x.Namespace != metav1.NamespaceDefault || ns != "" && ns != x.Namespace {
			errf("involvedObject.namespace %q does not match the event's namespace", ns)
		}
	case *corev1.Secret:
		if x.Type == corev1.SecretTypeDockerConfigJson && len(x.Data[corev1.DockerConfigJsonKey]) == 0 {
			errf("a %s secret needs data[%q]", x.Type, corev1.DockerConfigJsonKey)
		}
	case *corev1.ConfigMap:
		if b := x.Labels["machineconfiguration.openshift.io/machine-os-build"]; b != "" &&
			x.Name == "containerfile-"+b && x.Data["Containerfile"] == "" {
			errf("data.Containerfile is missing")
		}
	case *batchv1.Job:
		if b := x.Labels["machineconfiguration.openshift.io/machine-os-build"]; b != "" && x.Name != "build-"+b {
			errf("build Job must be named build-%s", b)
		}
	}
	if l := o.obj.GetLabels(); l != nil {
		if b, ok := l["machineconfiguration.openshift.io/machine-os-build"]; ok && o.kind != "machineconfiguration.openshift.io/v1/MachineOSBuild" {
			ok := false
			for _, prefix := range []string{"build-", "containerfile-", "mc-", "additionaltrustbundle-",
				"etc-policy-", "etc-registries-", "digest-", "base-", "final-"} {
				ok = ok || o.obj.GetName() == prefix+b
			}
			if !ok {
				errf("ephemeral build object name does not follow <kind>-<machineosbuild>")
			}
			if o.obj.GetNamespace() != mcoNamespace {
				errf("ephemeral build objects live in %s", mcoNamespace)
			}
		}
	}
}

func dnsNames(errf func(string, ...any), field, v string) {
	for _, e := range validation.IsDNS1123Subdomain(v) {
		errf("%s %q: %s", field, v, e)
	}
}

func tagFormat(errf func(string, ...any), field, v string) {
	if len(v) < 1 || len(v) > 447 || !imageTag.MatchString(v) && !imageTagSvc.MatchString(v) {
		errf("%s %q: the OCI Image name should follow the host[:port][/namespace]/name format, resembling a valid URL without the scheme. Or it must be a valid .svc followed by a port, repository, image name, and tag.", field, v)
	}
}

func digestFormat(errf func(string, ...any), field, v string) {
	parts := strings.Split(v, "@")
	if len(v) > 447 || len(parts) != 2 || !digestSuffix.MatchString(parts[1]) {
		errf("%s %q: the OCI Image reference must end with a valid '@sha256:<digest>' suffix, where '<digest>' is 64 characters long", field, v)
		return
	}
	if !digestName.MatchString(parts[0]) {
		errf("%s %q: the OCI Image name should follow the host[:port][/namespace]/name format, resembling a valid URL without the scheme", field, v)
	}
}

func conditionStatus(s string) bool {
	return s == "True" || s == "False" || s == "Unknown"
}

// conditions checks metav1.Condition lists: every required field set, types
// unique (listType=map), and at most limit items when limit > 0.
func conditions(errf func(string, ...any), cs []metav1.Condition, limit int) {
	if limit > 0 && len(cs) > limit {
		errf("status.conditions: at most %d items", limit)
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if c.Type == "" || !conditionStatus(string(c.Status)) || c.LastTransitionTime.IsZero() ||
			!conditionReason.MatchString(c.Reason) {
			errf("status.conditions %q: type, status, reason (CamelCase) and lastTransitionTime are required", c.Type)
		}
		if seen[c.Type] {
			errf("status.conditions: duplicate type %q", c.Type)
		}
		seen[c.Type] = true
	}
}

// checkReferences checks what ties the objects of one cluster together:
// ownerReferences carry the UID of the owner when the owner is in the
// fixture, and a MachineOSConfig's current build exists.
func checkReferences(t *testing.T, objs []object) {
	t.Helper()
	uids := map[string]string{} // kind/namespace/name -> uid
	mosbs := map[string]bool{}
	for _, o := range objs {
		if o.obj == nil {
			continue
		}
		kind := o.kind[strings.LastIndex(o.kind, "/")+1:]
		key := kind + "/" + o.obj.GetNamespace() + "/" + o.obj.GetName()
		if _, dup := uids[key]; dup {
			t.Errorf("%s: duplicate %s", o.where, key)
		}
		uids[key] = string(o.obj.GetUID())
		if kind == "MachineOSBuild" {
			mosbs[o.obj.GetName()] = true
		}
	}
	for _, o := range objs {
		if o.obj == nil {
			continue
		}
		for _, ref := range o.obj.GetOwnerReferences() {
			k, known := kinds[ref.APIVersion+"/"+ref.Kind]
			if !known {
				continue // an owner kind the fixtures never carry (ReplicaSet, ...)
			}
			ns := ""
			if k.namespaced {
				ns = o.obj.GetNamespace()
			}
			uid, present := uids[ref.Kind+"/"+ns+"/"+ref.Name]
			if present && uid != "" && uid != string(ref.UID) {
				t.Errorf("%s: ownerReference %s %q has uid %s, the owner has %s", o.where, ref.Kind, ref.Name, ref.UID, uid)
			}
		}
		if m, ok := o.obj.(*mcfgv1.MachineOSConfig); ok {
			if b := m.Annotations["machineconfiguration.openshift.io/current-machine-os-build"]; b != "" && !mosbs[b] {
				t.Errorf("%s: current-machine-os-build %q does not exist", o.where, b)
			}
			if r := m.Status.MachineOSBuild; r != nil && !mosbs[r.Name] {
				t.Errorf("%s: status.machineOSBuild %q does not exist", o.where, r.Name)
			}
		}
	}
}
