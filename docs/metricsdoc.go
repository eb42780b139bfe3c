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
	// Type is the family's type as the exposition names it: gauge or counter.
	Type string
	// Labels are the family's label names, sorted.
	Labels []string
	// Stability is STABLE or EXPERIMENTAL (metrics.md says what each promises).
	Stability string
}

// Counter reports whether the family is a counter.
func (m Metric) Counter() bool { return m.Type == "counter" }

var (
	// metricRow is any row whose first cell is a metric name.
	metricRow = regexp.MustCompile("^\\| `([a-z_]+)` \\|")
	// row is its whole shape: | `name` | type | `a`, `b` | stability | Meaning.
	row = regexp.MustCompile("^\\| `([a-z_]+)` \\| (gauge|counter) \\| ([^|]*) \\| (STABLE|EXPERIMENTAL) \\| (.*)")
)

// ReadMetrics reads the metric rows of metrics.md from r. A row that
// names a metric but lacks a type or a stability is an error, so a column
// cannot go missing unnoticed.
func ReadMetrics(r io.Reader) (map[string]Metric, error) {
	out := map[string]Metric{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if !metricRow.MatchString(sc.Text()) {
			continue
		}
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			return nil, fmt.Errorf("metrics.md: row %.60q: want | `name` | gauge or counter | `labels` | STABLE or EXPERIMENTAL | meaning |", sc.Text())
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("metrics.md lists %s twice", m[1])
		}
		metric := Metric{Type: m[2], Labels: []string{}, Stability: m[4]}
		for _, l := range strings.Split(m[3], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				metric.Labels = append(metric.Labels, l)
			}
		}
		sort.Strings(metric.Labels)
		out[m[1]] = metric
	}
	return out, sc.Err()
}
