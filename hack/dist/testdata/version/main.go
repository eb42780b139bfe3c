// Command version stands in for ocl_exporter in hack/dist's tests: a
// small binary that prints its -X version stamp the way ocl_exporter
// --version does.
package main

import (
	"fmt"

	"github.com/prometheus/common/version"
)

func main() { fmt.Println(version.Print("ocl_exporter")) }
