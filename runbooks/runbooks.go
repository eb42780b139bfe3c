// Package runbooks says where the runbooks of this directory are published
// and which version of them a build links: the rule files link main (what
// promtool tests and readers of the repository see); the deploy bundle and
// the binary link the release they came from, never a runbook written for
// a later version.
package runbooks

import (
	"regexp"
	"strings"
)

// Repository is where the runbooks are published.
const Repository = "https://github.com/ocl-exporter/ocl_exporter"

// Main is the runbooks on main, which alerts/*rules.yaml link.
var Main = At("main")

// At is the runbooks at a git ref (a tag, a commit or a branch), ending in
// a slash: a runbook's URL is At(ref) + "<Alert>.md".
func At(ref string) string { return Repository + "/blob/" + ref + "/runbooks/" }

var releaseTag = regexp.MustCompile(`^v?\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$`)

// ReleaseTag is the git tag of a release version, v1.2.3 or 1.2.3 with an
// optional pre-release; ok is false for anything else (a commit, "dev").
func ReleaseTag(version string) (tag string, ok bool) {
	if !releaseTag.MatchString(version) {
		return "", false
	}
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	return version, true
}
