package dashboards

// All maps each dashboard file under dashboards/ to its definition. The
// file name becomes the ConfigMap's name (hack/bundle), the UID Grafana's
// URL. The console gets dashboards/*.json; fleet/ is for hubs only,
// grafana/ for Grafana only.
var All = map[string]Dashboard{
	"overview.json":    Overview,
	"builds.json":      Builds,
	"rollout.json":     Rollout,
	"fleet/fleet.json": Fleet,
	// Grafana only, for a Grafana (ACM's too) and not the console.
	"grafana/incident.json": Incident,
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

// Perses renders, by UID, every dashboard of one cluster as a Perses
// dashboard spec: those of the console and the Grafana-only ones (Perses
// draws their state timelines, not their alert annotations). Fleet
// dashboards stay off it, as off the console: the Perses console view
// sees one cluster.
func Perses() (map[string]PersesSpec, error) {
	out := map[string]PersesSpec{}
	for _, d := range All {
		if d.Fleet {
			continue
		}
		s, err := RenderPerses(d)
		if err != nil {
			return nil, err
		}
		out[d.UID] = s
	}
	return out, nil
}
