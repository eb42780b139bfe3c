// Command mustgather writes a scenario of testdata/scenarios as the
// must-gather image of a release lays it out (source/sourcetest
// WriteMustGather), for the committed fixtures of testdata/must-gathers:
//
//	go run ./hack/mustgather -release 17 -scenario testdata/scenarios/seed004-build-failed -o testdata/must-gathers/4.17-seed004-build-failed
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ocl-exporter/ocl_exporter/source/sourcetest"
)

func main() {
	var (
		release  = flag.Int("release", 19, "the must-gather image's minor release, 16 for 4.16")
		scenario = flag.String("scenario", "", "the flat snapshot to write")
		out      = flag.String("o", "", "the directory to write the must-gather into (replaced)")
		noMsg    = flag.Bool("no-termination-messages", false, "empty the build pods' image-build termination messages, as before FallbackToLogsOnError")
	)
	flag.Parse()
	if *scenario == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "mustgather: -scenario and -o are required")
		os.Exit(2)
	}
	if err := os.RemoveAll(*out); err != nil {
		fmt.Fprintln(os.Stderr, "mustgather:", err)
		os.Exit(1)
	}
	o := sourcetest.MustGatherOptions{Release: sourcetest.Release(*release), At: sourcetest.Now, NoTerminationMessages: *noMsg}
	if _, err := sourcetest.WriteMustGather(*scenario, *out, o); err != nil {
		fmt.Fprintln(os.Stderr, "mustgather:", err)
		os.Exit(1)
	}
}
