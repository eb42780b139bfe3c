package snapshot

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/jsonpath"
)

// TestREADMERecipeWritesMetadataOnly runs the README's oc recipe for
// Secrets and ConfigMaps (its jsonpath template, through the jsonpath
// package oc's printer uses, missing keys allowed as oc allows them) on a
// list with data, annotations and an unlabelled object: the file holds
// no value of the data, and the loader reads each object's name,
// namespace, labels and creation time.
func TestREADMERecipeWritesMetadataOnly(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^  oc -n "\$NS" get "\$1" -o jsonpath='(.*)'$`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no meta() recipe")
	}
	tmpl := strings.ReplaceAll(string(m[1]), `'"$2"'`, "Secret")
	const list = `{"apiVersion":"v1","kind":"SecretList","items":[
	 {"apiVersion":"v1","kind":"Secret","metadata":{"name":"push","namespace":"openshift-machine-config-operator",
	  "creationTimestamp":"2025-10-17T12:00:00Z","labels":{"machineconfiguration.openshift.io/on-cluster-layering":"","app":"x"},
	  "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"token\":\"c2VjcmV0\"}}"}},
	  "data":{".dockerconfigjson":"c2VjcmV0LXRva2Vu"},"type":"kubernetes.io/dockerconfigjson"},
	 {"apiVersion":"v1","kind":"Secret","metadata":{"name":"bare","namespace":"openshift-machine-config-operator","creationTimestamp":"2025-10-17T12:01:00Z"},
	  "data":{"password":"c2VjcmV0LXRva2Vu"}}]}`
	var obj any
	if err := json.Unmarshal([]byte(list), &obj); err != nil {
		t.Fatal(err)
	}
	j := jsonpath.New("out").AllowMissingKeys(true)
	if err := j.Parse(tmpl); err != nil {
		t.Fatalf("the README's template: %v", err)
	}
	var out bytes.Buffer
	if err := j.Execute(&out, obj); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"c2VjcmV0", "secret-token", "last-applied", "dockerconfigjson"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("the recipe writes %q:\n%s", secret, out.String())
		}
	}
	objs, cov, err := loader{maxBytes: MaxFileBytes, logger: slog.New(slog.DiscardHandler)}.load(t.Context(), fstest.MapFS{"secrets.yaml": {Data: out.Bytes()}}, ".")
	if err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if len(objs) != 2 {
		t.Fatalf("loaded %d objects from\n%s", len(objs), out.String())
	}
	push := objs[0].(*metav1.PartialObjectMetadata)
	if push.Name != "push" || push.Namespace != DefaultNamespace || push.Labels["app"] != "x" || push.CreationTimestamp.IsZero() {
		t.Errorf("read %+v", push.ObjectMeta)
	}
	if err := cov.notCaptured(DefaultNamespace)["secrets"]; err != nil {
		t.Errorf("secrets not captured: %v", err)
	}
}
