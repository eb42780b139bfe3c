// Command mustgather writes a scenario of testdata/scenarios as the
// must-gather image of a release lays it out (source/sourcetest
// WriteMustGather), and the committed must-gathers of
// testdata/must-gathers (sourcetest.CommittedMustGathers), forms
// included:
//
//	go run ./hack/mustgather -release 17 -scenario testdata/scenarios/seed004-build-failed -o /tmp/4.17-seed004-build-failed
//	go run ./hack/mustgather -fixture 4.19-volume-cut-seed004-build-failed
//	go run ./hack/mustgather -fixture all
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

func main() {
	var (
		release = flag.Int("release", 19, "the must-gather image's minor release, 16 for 4.16")
		scen    = flag.String("scenario", "", "the flat snapshot to write")
		out     = flag.String("o", "", "the directory to write the must-gather into (replaced)")
		noMsg   = flag.Bool("no-termination-messages", false, "empty the build pods' image-build termination messages, as before FallbackToLogsOnError")
		fixture = flag.String("fixture", "", "rewrite this committed must-gather of testdata/must-gathers (run from the repository's root), or all of them")
	)
	flag.Parse()
	if err := run(*fixture, *scen, *out, sourcetest.MustGatherOptions{Release: sourcetest.Release(*release), At: sourcetest.Now, NoTerminationMessages: *noMsg}); err != nil {
		fmt.Fprintln(os.Stderr, "mustgather:", err)
		os.Exit(1)
	}
}

func run(fixture, scenario, out string, o sourcetest.MustGatherOptions) error {
	if fixture == "" {
		if scenario == "" || out == "" {
			return fmt.Errorf("-fixture, or -scenario and -o, are required")
		}
		if err := os.RemoveAll(out); err != nil {
			return err
		}
		_, err := sourcetest.WriteMustGather(scenario, out, o)
		return err
	}
	found := false
	for _, c := range sourcetest.CommittedMustGathers {
		if fixture != "all" && c.Tree != fixture {
			continue
		}
		found = true
		p := filepath.Join("testdata", "must-gathers", c.Tree)
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		if _, err := c.Write(filepath.Join("testdata", "scenarios"), p); err != nil {
			return fmt.Errorf("%s: %w", c.Tree, err)
		}
	}
	if !found {
		return fmt.Errorf("no committed must-gather %q (testdata/must-gathers/README.md lists them)", fixture)
	}
	return nil
}
