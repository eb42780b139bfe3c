//go:build fleet

package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ocl-exporter/ocl_exporter/dashboards"
)

// fleetQuery is one query a user runs, as the fleet test asks it.
type fleetQuery struct {
	where string // file and panel, for messages
	expr  string
	graph bool // a range query, as a graph panel asks
	// multi: the dashboard's cluster variable takes several clusters (the
	// fleet dashboard); its answers must keep the cluster label.
	multi bool
	// forCluster writes the query for Thanos Query, restricted to one
	// cluster; direct is the same query for that cluster's own Prometheus,
	// whose series have no cluster label.
	forCluster func(cluster string) (string, error)
	direct     func() (string, error)
}

// The dashboard JSON the test reads: the panels' targets and variables.
type dashboardJSON struct {
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			Query    string `json:"query"`
			Multi    bool   `json:"multi"`
			AllValue string `json:"allValue"`
		} `json:"list"`
	} `json:"templating"`
}

// dashboardJSONs are the dashboards as users import them, by file name
// under dashboards/ (dashboards.Files renders them; a test there keeps
// the committed files equal).
func dashboardJSONs(t *testing.T) map[string]dashboardJSON {
	t.Helper()
	files, err := dashboards.Files()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]dashboardJSON{}
	for name, b := range files {
		var d dashboardJSON
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = d
	}
	return out
}

var variable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// substitute fills in the dashboard variables as Grafana does for one
// cluster (a regex matching it alone; "" on a cluster's own Prometheus,
// which matches the series without the label), the pool (".*" is the
// All value), and Grafana's interval built-ins.
func substitute(expr, cluster, pool string) (string, error) {
	values := map[string]string{
		"cluster": cluster, "pool": pool,
		"__rate_interval": "1m", "__interval": "10s", "__range": "1h",
	}
	var err error
	out := variable.ReplaceAllStringFunc(expr, func(v string) string {
		s, ok := values[variable.FindStringSubmatch(v)[1]]
		if !ok {
			err = fmt.Errorf("unknown variable %s in %s", v, expr)
		}
		return s
	})
	return out, err
}

// sharedPool is a pool both snapshots have, with different machines:
// chosen in the pool variable, a leak between the clusters' pools of the
// same name would show.
const sharedPool = "worker"

// dashboardQueries are every dashboard target, with the pool variable at
// All and, where the target reads it, at sharedPool.
func dashboardQueries(t *testing.T) []fleetQuery {
	t.Helper()
	var out []fleetQuery
	for name, d := range dashboardJSONs(t) {
		multi := false
		for _, v := range d.Templating.List {
			multi = multi || v.Name == "cluster" && v.Multi
		}
		for _, p := range d.Panels {
			for i, tg := range p.Targets {
				for _, pool := range []string{".*", sharedPool} {
					if pool != ".*" && !strings.Contains(tg.Expr, "$pool") {
						continue
					}
					expr := tg.Expr
					out = append(out, fleetQuery{
						where: fmt.Sprintf("%s %q target %d, pool %s", name, p.Title, i, pool), expr: expr, graph: p.Type == "graph", multi: multi,
						forCluster: func(c string) (string, error) { return substitute(expr, regexp.QuoteMeta(c), pool) },
						direct:     func() (string, error) { return substitute(expr, "", pool) },
					})
				}
			}
		}
	}
	return out
}

// docQueries are the PromQL blocks of docs/queries.md. They are written
// for one cluster's console; on a fleet a user adds cluster="<name>" to
// every selector (what ACM's and prom-label-proxy's tenancy do), which is
// what forCluster does.
func docQueries(t *testing.T) []fleetQuery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "queries.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fleetQuery
	for i, m := range regexp.MustCompile("(?s)```promql\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		expr := m[1]
		out = append(out, fleetQuery{
			where: fmt.Sprintf("docs/queries.md query %d", i+1), expr: expr,
			forCluster: func(c string) (string, error) { return withCluster(expr, c) },
			direct:     func() (string, error) { return expr, nil },
		})
	}
	if len(out) == 0 {
		t.Fatal("docs/queries.md has no promql blocks")
	}
	return out
}

// withCluster adds cluster="<c>" to every selector of expr.
func withCluster(expr, c string) (string, error) {
	root, err := parser.ParseExpr(expr)
	if err != nil {
		return "", err
	}
	parser.Inspect(root, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			vs.LabelMatchers = append(vs.LabelMatchers, labels.MustNewMatcher(labels.MatchEqual, "cluster", c))
		}
		return nil
	})
	return root.String(), nil
}

// TestQueriesPerCluster asks every dashboard query (with the cluster
// variable set to each cluster) and every docs/queries.md query (with
// each cluster's label added) of Thanos Query, and the same query of that
// cluster's own Prometheus: the answers must be equal, series for series
// and value for value, and no series of the Thanos answer may carry
// another cluster's label. Answers empty on both sides prove nothing and
// are listed in the log.
func TestQueriesPerCluster(t *testing.T) {
	ctx := context.Background()
	at := settled(t, ctx)
	queries := append(dashboardQueries(t), docQueries(t)...)

	var empty []string
	nonEmpty := map[string]int{}
	distinct := 0 // queries whose answer differs between the clusters
	for _, q := range queries {
		own := map[string]string{}
		for _, c := range fleet.members {
			got, want, err := ask(ctx, q, c, at)
			if err != nil {
				t.Errorf("%s, cluster %s: %v", q.where, c.name, err)
				continue
			}
			byC := byCluster(got)
			for other, a := range byC {
				if other != "" && other != c.name {
					t.Errorf("%s, cluster %s: Thanos answers with series of cluster %q:\n%s", q.where, c.name, other, a)
				}
			}
			if q.multi && len(byC[""]) > 0 {
				t.Errorf("%s: a fleet dashboard query must keep the cluster label, these series lost it:\n%s", q.where, byC[""])
			}
			mine := slices.Sorted(slices.Values(append(append(answer{}, byC[c.name]...), byC[""]...)))
			if !slices.Equal(mine, want) {
				t.Errorf("%s, cluster %s: Thanos Query and the cluster's Prometheus disagree\nthanos:\n%sprometheus:\n%s", q.where, c.name, answer(mine), want)
				continue
			}
			if len(want) == 0 {
				empty = append(empty, fmt.Sprintf("%s, cluster %s", q.where, c.name))
			} else {
				nonEmpty[c.name]++
			}
			own[c.name] = want.String()
		}
		if len(own) == len(fleet.members) && own[fleet.members[0].name] != own[fleet.members[1].name] {
			distinct++
		}
	}
	if q := multiClusterQueries(queries); len(q) > 0 {
		checkFleetWide(t, ctx, q, at)
	}
	t.Logf("%d queries (dashboard targets with pool All and '"+sharedPool+"', docs/queries.md blocks) x %d clusters (%s): non-empty and equal per cluster %v; answers differing between the clusters %d",
		len(queries), len(fleet.members), names(), nonEmpty, distinct)
	if len(empty) > 0 {
		t.Logf("empty on both Thanos and the cluster's Prometheus (nothing in that snapshot for them to show):\n  %s", strings.Join(empty, "\n  "))
	}
	for _, c := range fleet.members {
		if nonEmpty[c.name] == 0 {
			t.Errorf("cluster %s: no query returned anything: the fleet carries no data", c.name)
		}
	}
	// Two clusters answering everything alike could not show a leak.
	if distinct == 0 {
		t.Error("every query answers the same for every cluster: the snapshots cannot tell a cross-cluster leak")
	}
}

// ask runs q for cluster c through Thanos Query and on c's Prometheus.
func ask(ctx context.Context, q fleetQuery, c *member, at time.Time) (got model.Value, want answer, err error) {
	span := time.Duration(0)
	if q.graph {
		span = time.Minute
	}
	texpr, err := q.forCluster(c.name)
	if err != nil {
		return nil, nil, err
	}
	dexpr, err := q.direct()
	if err != nil {
		return nil, nil, err
	}
	if got, err = query(ctx, fleet.queryURL, texpr, at, span); err != nil {
		return nil, nil, fmt.Errorf("thanos: %w", err)
	}
	direct, err := query(ctx, c.promURL, dexpr, at, span)
	if err != nil {
		return nil, nil, fmt.Errorf("prometheus: %w", err)
	}
	if d := byCluster(direct); len(d) > 1 || len(d) == 1 && d[""] == nil {
		return nil, nil, fmt.Errorf("the cluster's own Prometheus answers with a cluster label: %v", d)
	}
	return got, only(direct), nil
}

func multiClusterQueries(qs []fleetQuery) []fleetQuery {
	var out []fleetQuery
	for _, q := range qs {
		if q.multi {
			out = append(out, q)
		}
	}
	return out
}

// checkFleetWide asks the fleet dashboard's queries for every cluster at
// once (the All value of its cluster variable): each cluster's rows must
// be that cluster's own answer.
func checkFleetWide(t *testing.T, ctx context.Context, qs []fleetQuery, at time.Time) {
	t.Helper()
	for _, q := range qs {
		span := time.Duration(0)
		if q.graph {
			span = time.Minute
		}
		all, err := substitute(q.expr, ".*", ".*")
		if err != nil {
			t.Error(err)
			continue
		}
		got, err := query(ctx, fleet.queryURL, all, at, span)
		if err != nil {
			t.Errorf("%s, every cluster: %v", q.where, err)
			continue
		}
		byC := byCluster(got)
		if len(byC[""]) > 0 {
			t.Errorf("%s, every cluster: series without a cluster label:\n%s", q.where, byC[""])
		}
		for _, c := range fleet.members {
			dexpr, err := q.direct()
			if err != nil {
				t.Error(err)
				continue
			}
			direct, err := query(ctx, c.promURL, dexpr, at, span)
			if err != nil {
				t.Errorf("%s, cluster %s: %v", q.where, c.name, err)
				continue
			}
			if want := only(direct); !slices.Equal(byC[c.name], want) {
				t.Errorf("%s, every cluster: the rows of cluster %s differ from its Prometheus\nthanos:\n%sprometheus:\n%s", q.where, c.name, byC[c.name], want)
			}
		}
	}
}

// TestVariablesPerCluster: the cluster variable lists every cluster of
// the fleet, and each dashboard's other variables list, for one cluster,
// what that cluster's own Prometheus lists.
func TestVariablesPerCluster(t *testing.T) {
	ctx := context.Background()
	pattern := regexp.MustCompile(`^label_values\((.*), (\w+)\)$`)
	for path, d := range dashboardJSONs(t) {
		for _, v := range d.Templating.List {
			// go test ./dashboards/ holds every query variable to this shape.
			m := pattern.FindStringSubmatch(v.Query)
			if v.Type != "query" || m == nil {
				continue
			}
			if v.Name == "cluster" {
				got, err := labelValues(ctx, fleet.queryURL, m[1], m[2])
				if err != nil {
					t.Errorf("%s: variable cluster: %v", path, err)
				} else if want := strings.Split(names(), ", "); !slices.Equal(got, want) {
					t.Errorf("%s: variable cluster lists %v through Thanos, want %v", path, got, want)
				}
				continue
			}
			for _, c := range fleet.members {
				tsel, err1 := substitute(m[1], regexp.QuoteMeta(c.name), ".*")
				dsel, err2 := substitute(m[1], "", ".*")
				if err1 != nil || err2 != nil {
					t.Errorf("%s: variable %s: %v %v", path, v.Name, err1, err2)
					continue
				}
				got, err1 := labelValues(ctx, fleet.queryURL, tsel, m[2])
				want, err2 := labelValues(ctx, c.promURL, dsel, m[2])
				switch {
				case err1 != nil || err2 != nil:
					t.Errorf("%s: variable %s, cluster %s: %v %v", path, v.Name, c.name, err1, err2)
				case len(want) == 0:
					t.Errorf("%s: variable %s, cluster %s: lists nothing on the cluster's Prometheus", path, v.Name, c.name)
				case !slices.Equal(got, want):
					t.Errorf("%s: variable %s, cluster %s: Thanos lists %v, the cluster's Prometheus %v", path, v.Name, c.name, got, want)
				}
			}
		}
	}
}

// settled waits until every cluster's rules have been evaluated and its
// exporter scraped for a while, and past the first minute boundary after
// that (the docs/queries.md subqueries step on minute boundaries, so
// before it they see nothing), and returns a time a few seconds back
// that both Thanos and each Prometheus have every sample of.
func settled(t *testing.T, ctx context.Context) time.Time {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		v, err := instant(ctx, fleet.queryURL, `count by (cluster) (ocl:build_max_duration_seconds) and count by (cluster) (count_over_time(ocl_exporter_build_info[1m]) > 10)`, time.Now())
		if err == nil && len(v) == len(fleet.members) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the clusters' Prometheus servers did not scrape and evaluate the rules within 2m: %v %v", v, err)
		}
		time.Sleep(time.Second)
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 5*time.Second)))
	return time.Now().Add(-3 * time.Second).Truncate(time.Second)
}
