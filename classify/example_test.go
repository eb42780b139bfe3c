package classify_test

import (
	"fmt"

	"github.com/ocl-exporter/ocl_exporter/classify"
)

// A node's reason annotation after rpm-ostree could not find the built
// image: the cause inside the chain wins over the retry timeout around it.
func ExampleClassify() {
	r := classify.Classify(classify.Message{
		Origin: classify.OriginNodeReason,
		Text: "failed to update OS to quay.io/example/os@sha256:8761d427 after retries: " +
			"error running rpm-ostree rebase --experimental ostree-unverified-registry:quay.io/example/os@sha256:8761d427: " +
			"error: Creating importer: failed to invoke method OpenImage: " +
			"reading manifest sha256:8761d427 in quay.io/example/os: manifest unknown\n" +
			": exit status 1: timed out waiting for the condition",
	})
	fmt.Println(r.Class)
	fmt.Println(r.Excerpt)
	// Output:
	// image_not_found
	// …tree-unverified-registry:quay.io/example/os@sha256:8761d427: error: Creating importer: failed to invoke method OpenImage: reading manifest sha256:8761d427 in quay.io/example/os: manifest unknown
}
