package diagnose

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestForPoolIsDiagnoseWithPool: narrowing a report to a pool (the status
// page's ?pool=) gives what diagnose --pool gives, verdict and summary
// included, for every pool of every fixture and for a pool that does not
// exist.
func TestForPoolIsDiagnoseWithPool(t *testing.T) {
	for name, dir := range fixtures(t) {
		all := report(t, dir, Options{})
		pools := []string{"no-such-pool"}
		for _, p := range all.Pools {
			pools = append(pools, p.Name)
		}
		for _, pool := range pools {
			got, err := json.Marshal(all.ForPool(pool))
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(report(t, dir, Options{Pool: pool}))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("%s: ForPool(%q) differs from --pool (-want +got):\n%s", name, pool, d)
			}
		}
	}
}
