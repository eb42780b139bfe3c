package review

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Recording is what a querier answered to a review's queries over one
// window: review/example/history.json holds the lifecycle
// seed004-containerfile-failure read back from a real Prometheus
// (TestReviewRecordsTheExample in test/e2e rewrites it).
type Recording struct {
	Lifecycle string    `json:"lifecycle"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Step      Duration  `json:"step"`
	Series    Series    `json:"series"`
}

// Window is the recording's window at its step.
func (r Recording) Window() Window {
	return Window{From: r.From, To: r.To, Step: time.Duration(r.Step)}
}

//go:embed example/history.json
var exampleJSON []byte

// Example is the recording built into the binary.
func Example() (*Recording, error) {
	var r Recording
	if err := json.Unmarshal(exampleJSON, &r); err != nil {
		return nil, fmt.Errorf("the built-in example history: %w", err)
	}
	return &r, nil
}

// Handler serves the recording as a Prometheus query API: each range
// query is answered with the series recorded for the query it is (its
// text up to the matchers), whatever its matchers, range and step.
func (r *Recording) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/query_range", func(w http.ResponseWriter, req *http.Request) {
		m := model.Matrix{}
		if name := queryName(req.FormValue("query")); name != "" && r.Series[name] != nil {
			m = r.Series[name]
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"status": "success",
			"data":   map[string]any{"resultType": "matrix", "result": m},
		})
	})
	return mux
}

// queryName is the name of the query q is, "" for a fallback: the one
// whose text before its matchers is the longest prefix of q.
func queryName(q string) string {
	best, name := 0, ""
	match := func(tmpl, n string) {
		prefix, _, _ := strings.Cut(tmpl, "{")
		if strings.HasPrefix(q, prefix) && len(prefix) > best {
			best, name = len(prefix), n
		}
	}
	for n, tmpl := range queries {
		match(tmpl, n)
	}
	for _, tmpl := range fallbacks {
		match(tmpl, "")
	}
	return name
}
