package collector

import (
	"strings"
	"testing"
)

// TestHelpIsOneSentence keeps each HELP text one short sentence, as
// node_exporter's and kube-state-metrics' are: the whole story of a metric
// is docs/metrics.md's, where it can be read and reviewed.
func TestHelpIsOneSentence(t *testing.T) {
	const most = 140
	for _, s := range New(nil, DefaultOptions).Specs() {
		body, ok := strings.CutSuffix(s.Help, ".")
		switch {
		case !ok:
			t.Errorf("%s: HELP does not end in a full stop: %q", s.Name, s.Help)
		case strings.Contains(body, ". "), strings.Contains(body, "; "):
			t.Errorf("%s: HELP is more than one sentence: %q", s.Name, s.Help)
		case len(s.Help) > most:
			t.Errorf("%s: HELP is %d bytes, over %d: keep one sentence, the rest in docs/metrics.md", s.Name, len(s.Help), most)
		}
	}
}
