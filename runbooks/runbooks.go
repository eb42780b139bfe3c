// Package runbooks says where the runbooks of this directory are published
// and which version of them a build links: the rule files link main (what
// promtool tests and readers of the repository see); the deploy bundle and
// the binary link the tag or commit they were built from, never a runbook
// written for a later version, and never a ref that does not exist.
package runbooks

import (
	"regexp"
	"strings"
)

// Canonical is the project's repository, which alerts/*rules.yaml link.
const Canonical = "https://github.com/ocl-exporter/ocl_exporter"

// Repository is where a build links the runbooks: Canonical unless a fork
// or a mirror builds with `make build RUNBOOK_REPO=https://github.com/...`
// (set with -ldflags -X).
var Repository = Canonical

// Main is the runbooks on main in the project's repository, which
// alerts/*rules.yaml link.
const Main = Canonical + "/blob/main/runbooks/"

// At is the runbooks of Repository at a git ref (a tag, a commit or a
// branch), ending in a slash: a runbook's URL is At(ref) + "<Alert>.md".
func At(ref string) string { return AtIn(Repository, ref) }

// AtIn is At for another repository (GitHub's URL layout).
func AtIn(repository, ref string) string {
	return strings.TrimSuffix(repository, "/") + "/blob/" + ref + "/runbooks/"
}

var (
	releaseTag = regexp.MustCompile(`^v?\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$`)
	commitID   = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
)

// ReleaseTag is the git tag of a release version, v1.2.3 or 1.2.3 with an
// optional pre-release; ok is false for anything else (a commit, "dev",
// and a tagged tree built with changes, `git describe --dirty`'s
// v1.2.3-dirty, which names no tag).
func ReleaseTag(version string) (tag string, ok bool) {
	if !releaseTag.MatchString(version) || strings.HasSuffix(version, "-dirty") {
		return "", false
	}
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	return version, true
}

// Ref is the git ref a build of version (`git describe --tags --always
// --dirty`) at revision links: the release tag when the build is one, else
// the commit (a Go build's "-modified" suffix dropped: the commit is the
// nearest thing that exists), else main.
func Ref(version, revision string) string {
	if tag, ok := ReleaseTag(version); ok {
		return tag
	}
	if rev := strings.TrimSuffix(revision, "-modified"); commitID.MatchString(rev) {
		return rev
	}
	return "main"
}
