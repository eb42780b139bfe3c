//go:build fleet

package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// The Prometheus HTTP API, as both Prometheus and Thanos Query serve it.

type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
}

func get(ctx context.Context, base, path string, params url.Values, into any) error {
	u := base + path + "?" + params.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var r apiResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("GET %s: %s: %w", u, resp.Status, err)
	}
	if r.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s: %s", u, resp.Status, r.ErrorType, r.Error)
	}
	// A partial answer (a store unreachable) is a warning, not an error,
	// in Thanos: here it is a failure.
	if len(r.Warnings) > 0 {
		return fmt.Errorf("GET %s: warnings: %s", u, strings.Join(r.Warnings, "; "))
	}
	return json.Unmarshal(r.Data, into)
}

// query runs expr at `at` (instant) or over the minute before it every 10
// seconds (span > 0, what a graph panel asks).
func query(ctx context.Context, base, expr string, at time.Time, span time.Duration) (model.Value, error) {
	var data struct {
		ResultType model.ValueType `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	ts := func(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }
	var err error
	if span > 0 {
		err = get(ctx, base, "/api/v1/query_range", url.Values{"query": {expr}, "start": {ts(at.Add(-span))}, "end": {ts(at)}, "step": {"10"}}, &data)
	} else {
		err = get(ctx, base, "/api/v1/query", url.Values{"query": {expr}, "time": {ts(at)}}, &data)
	}
	if err != nil {
		return nil, err
	}
	var v model.Value
	switch data.ResultType {
	case model.ValVector:
		v = &model.Vector{}
	case model.ValMatrix:
		v = &model.Matrix{}
	case model.ValScalar:
		v = &model.Scalar{}
	case model.ValString:
		v = &model.String{}
	default:
		return nil, fmt.Errorf("%s: result type %q", expr, data.ResultType)
	}
	if err := json.Unmarshal(data.Result, v); err != nil {
		return nil, fmt.Errorf("%s: %w", expr, err)
	}
	return v, nil
}

func instant(ctx context.Context, base, expr string, at time.Time) (model.Vector, error) {
	v, err := query(ctx, base, expr, at, 0)
	if err != nil {
		return nil, err
	}
	vec, ok := v.(*model.Vector)
	if !ok {
		return nil, fmt.Errorf("%s: %s, not a vector", expr, v.Type())
	}
	return *vec, nil
}

// labelValues is what a label_values(selector, label) variable lists.
func labelValues(ctx context.Context, base, selector, label string) ([]string, error) {
	var out []string
	err := get(ctx, base, "/api/v1/label/"+label+"/values", url.Values{"match[]": {selector}}, &out)
	slices.Sort(out)
	return out, err
}

// answer is a query result as sorted lines, one per series, for
// comparison and for failure messages.
type answer []string

func (a answer) String() string {
	if len(a) == 0 {
		return "  (empty)\n"
	}
	return "  " + strings.Join(a, "\n  ") + "\n"
}

// byCluster splits a result by its cluster label, with the label removed
// so it compares with the cluster's own Prometheus. Series without the
// label land under "".
func byCluster(v model.Value) map[string]answer {
	out := map[string]answer{}
	add := func(m model.Metric, values string) {
		c := string(m["cluster"])
		m = m.Clone()
		delete(m, "cluster")
		out[c] = append(out[c], m.String()+" "+values)
	}
	switch r := v.(type) {
	case *model.Vector:
		for _, s := range *r {
			add(s.Metric, s.Value.String())
		}
	case *model.Matrix:
		for _, s := range *r {
			var vs []string
			for _, p := range s.Values {
				vs = append(vs, fmt.Sprintf("%s@%d", p.Value, p.Timestamp.Unix()))
			}
			add(s.Metric, strings.Join(vs, " "))
		}
	case *model.Scalar:
		out[""] = answer{r.Value.String()}
	case *model.String:
		out[""] = answer{r.Value}
	}
	for _, a := range out {
		slices.Sort(a)
	}
	return out
}

// only is the whole result as one answer, with any cluster label removed.
func only(v model.Value) answer {
	var all answer
	for _, a := range byCluster(v) {
		all = append(all, a...)
	}
	slices.Sort(all)
	return all
}
