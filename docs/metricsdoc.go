// Package docs reads the documentation the tests hold the code to. Its
// only Go is the reader of metrics.md: the metric list that a test keeps
// equal to a real scrape, and that alert and dashboard tests check their
// queries against.
package docs

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// Metric is one documented metric family.
type Metric struct {
	// Labels are the family's label names, sorted.
	Labels []string
	// Counter is true for counters: their meaning starts "Counter." or
	// their name ends in _total.
	Counter bool
}

// row matches a metric row: | `name` | `a`, `b` | Meaning.
var row = regexp.MustCompile("^\\| `([a-z_]+)` \\| ([^|]*) \\| (.*)")

// ReadMetrics reads the metric rows of metrics.md from r.
func ReadMetrics(r io.Reader) (map[string]Metric, error) {
	out := map[string]Metric{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("metrics.md lists %s twice", m[1])
		}
		metric := Metric{Labels: []string{}, Counter: strings.HasSuffix(m[1], "_total") || strings.HasPrefix(m[3], "Counter.")}
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				metric.Labels = append(metric.Labels, l)
			}
		}
		sort.Strings(metric.Labels)
		out[m[1]] = metric
	}
	return out, sc.Err()
}
