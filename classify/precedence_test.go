package classify

import "testing"

// TestPrecedence pins each precedence rule of the table with a message
// where two rules compete: the more specific cause must win.
func TestPrecedence(t *testing.T) {
	const rebase = "failed to update OS to quay.io/acme/os@sha256:8761d4273f3213f2f9c9b4aa9dbe33aa758f17d691f0f53d2b20f55702c9ef13 after retries: " +
		"error running rpm-ostree rebase --experimental ostree-unverified-registry:quay.io/acme/os@sha256:8761d4273f3213f2f9c9b4aa9dbe33aa758f17d691f0f53d2b20f55702c9ef13: " +
		"error: Creating importer: failed to invoke method OpenImage: failed to invoke method OpenImage: "
	tests := []struct {
		rule string
		msg  Message
		want Class
	}{
		{"a resource cause beats the RUN step that failed from it", Message{Origin: OriginBuildLog, Text: "STEP 2/3: RUN dnf install -y kernel-devel\n" +
			"Error: Transaction test error:\n  installing package kernel-devel-5.14.0-427.el9.x86_64 needs 68MB more space on the / filesystem\n" +
			"Error: building at STEP \"RUN dnf install -y kernel-devel\": exit status 1"}, DiskFull},
		{"between two specific causes the last one printed decides", Message{Origin: OriginBuildLog, Text: "STEP 2/3: RUN cp -a /src/. /usr/\n" +
			"cp: error writing '/usr/lib/x': No space left on device\n/bin/sh: line 1: restorecon: command not found\n" +
			"Error: building at STEP \"RUN cp -a /src/. /usr/\": exit status 127"}, ContainerfileCommandFailed},
		{"a Containerfile that names a missing path beats the step wrapper", Message{Origin: OriginBuildLog, Text: "Error: building at STEP \"COPY chrony.conf /etc/\": " +
			"checking on sources under \"/tmp/ctx\": copier: stat: \"/chrony.conf\": no such file or directory"}, ContainerfileInvalid},
		{"the registry's answer beats the rpm-ostree wrapper", Message{Origin: OriginNodeReason, Text: rebase +
			"reading manifest latest in quay.io/acme/os: unauthorized: access to the requested resource is not authorized\n: exit status 1: timed out waiting for the condition"}, ImagePullUnauthorized},
		{"the token server's 403 is an authorization failure on a node", Message{Origin: OriginNodeReason, Text: rebase +
			"Requesting bearer token: invalid status code from registry 403 (Forbidden)\n: exit status 1"}, ImagePullUnauthorized},
		{"a 5xx page is the registry being down, not the tool failing", Message{Origin: OriginBuildLog, Text: "Error: pushing image \"r.example.com/os:latest\" to \"docker://r.example.com/os:latest\": " +
			"writing blob: initiating layer upload to /v2/os/blobs/uploads/ in r.example.com: StatusCode: 503, \"<html><body><h1>503 Service Unavailable</h1>...\""}, RegistryUnreachable},
		{"a named cause outside the set stays unknown inside the wrapper", Message{Origin: OriginNodeReason, Text: rebase +
			"Source image rejected: A signature was required, but no signature exists\n: exit status 1"}, Unknown},
		{"a bare timeout is the wrapper's own class", Message{Origin: OriginNodeReason, Text: "failed to update OS to quay.io/acme/os@sha256:8761d4273f3213f2f9c9b4aa9dbe33aa758f17d691f0f53d2b20f55702c9ef13 after retries: context deadline exceeded"}, OSUpdateTimeout},
		{"a missing tag beats the unauthorized answer of a mirror", Message{Origin: OriginNodeReason, Text: rebase +
			"(Mirrors also failed: [m.example.com/os: unauthorized: authentication required]): reading manifest latest in quay.io/acme/os: manifest unknown"}, ImageNotFound},
		{"push wording decides the direction of an auth failure", Message{Origin: OriginBuildLog, Text: "Writing manifest to image destination\nFailed to push image: unauthorized: access to the requested resource is not authorized"}, PushUnauthorized},
		{"a cause line without an Error: prefix still counts", Message{Origin: OriginBuildLog, Text: "STEP 1/4: FROM r.example.com/os:latest\n" +
			"initializing source docker://r.example.com/os:latest: pinging container registry r.example.com: Get \"https://r.example.com/v2/\": x509: certificate signed by unknown authority"}, RegistryTLSUntrusted},
		{"retry warnings explain a log that has no error line", Message{Origin: OriginBuildLog, Text: "STEP 1/4: FROM quay.io/acme/base:9\n" +
			"WARN[0000] Failed, retrying in 2s ... (1/3). Error: initializing source docker://quay.io/acme/base:9: pinging container registry quay.io: Get \"https://quay.io/v2/\": dial tcp 3.216.152.103:443: connect: connection refused"}, RegistryUnreachable},
		{"an error line beats the retry warnings before it", Message{Origin: OriginBuildLog, Text: "STEP 1/4: FROM quay.io/acme/base:9\n" +
			"WARN[0000] Failed, retrying in 2s ... (1/3). Error: initializing source docker://quay.io/acme/base:9: pinging container registry quay.io: Get \"https://quay.io/v2/\": dial tcp 3.216.152.103:443: connect: connection refused\n" +
			"Error: creating build container: initializing source docker://quay.io/acme/base:9: reading manifest 9 in quay.io/acme/base: manifest unknown"}, ImageNotFound},
		{"the builder's crash loop is the builder, a build container's is not", Message{Origin: OriginEvent, Reason: "BackOff",
			Text: "Back-off restarting failed container machine-os-builder in pod machine-os-builder-6f7d8c9b5-x2x4z_openshift-machine-config-operator(0a1b2c3d)"}, BuilderUnavailable},
		{"a build container's crash loop names no cause", Message{Origin: OriginEvent, Reason: "BackOff",
			Text: "Back-off restarting failed container image-build in pod build-worker-7d2f-x7k2p_openshift-machine-config-operator(0a1b2c3d)"}, Unknown},
		{"config drift in the MCD's bare words", Message{Origin: OriginNodeReason, Text: `content mismatch for file "/etc/chrony.conf"`}, UnexpectedOnDiskState},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got := Classify(tt.msg)
			checkResult(t, got)
			if got.Class != tt.want {
				t.Errorf("got %s (%q), want %s", got.Class, got.Excerpt, tt.want)
			}
			if got.Excerpt == "" {
				t.Error("no excerpt")
			}
		})
	}
}
