// Command gen writes dashboards/*.json from the definitions in package
// dashboards (make dashboards). Run it from the repository root.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ocl-exporter/ocl_exporter/dashboards"
)

func main() {
	dir := flag.String("dir", "dashboards", "directory to write the dashboard JSON files into")
	flag.Parse()
	files, err := dashboards.Files()
	if err == nil {
		for name, b := range files {
			path := filepath.Join(*dir, name)
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				break
			}
			if err = os.WriteFile(path, b, 0o644); err != nil {
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashboards:", err)
		os.Exit(1)
	}
}
