package diagnose

import (
	"os"
	"strings"
	"testing"

	"github.com/ocl-exporter/ocl_exporter/alerts"
)

// TestRepeatedPodFailuresAreTheRunbooks': the count of failed build pods
// that pages is read from the rules (alerts.Limits.RepeatedPodFailures:
// every rule comparing its series agrees); the runbooks that explain the split between
// a retry and a failing build must say the same number.
func TestRepeatedPodFailuresAreTheRunbooks(t *testing.T) {
	word := map[int]string{1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}[alerts.RuleLimits.RepeatedPodFailures]
	if word == "" {
		t.Fatalf("RepeatedPodFailures = %d: give it a word here", alerts.RuleLimits.RepeatedPodFailures)
	}
	for file, says := range map[string]string{
		"OCLBuildPodsFailing.md":     word + " or more page",
		"OCLMachineOSBuildFailed.md": "least " + word + " of its build pods failed",
	} {
		b, err := os.ReadFile("../runbooks/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), says) {
			t.Errorf("runbooks/%s does not say %q: the rules page from %d failed build pods", file, says, alerts.RuleLimits.RepeatedPodFailures)
		}
	}
}
