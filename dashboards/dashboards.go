package dashboards

// All maps each dashboard file in dashboards/ to its definition. The file
// name becomes the console ConfigMap's name (hack/bundle), the UID
// Grafana's URL.
var All = map[string]Dashboard{
	"overview.json": Overview,
	"builds.json":   Builds,
	"rollout.json":  Rollout,
}

// Files renders every dashboard, by file name.
func Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, d := range All {
		b, err := Render(d)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
}
