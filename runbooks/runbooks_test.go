package runbooks

import "testing"

func TestReleaseTag(t *testing.T) {
	for _, c := range []struct {
		version, tag string
		ok           bool
	}{
		{"v0.1.0", "v0.1.0", true},
		{"0.3.0", "v0.3.0", true},
		{"v1.2.3-rc.1", "v1.2.3-rc.1", true},
		{"132ff7f-dirty", "", false},
		{"main", "", false},
		{"v1.2", "", false},
		{"", "", false},
	} {
		if tag, ok := ReleaseTag(c.version); tag != c.tag || ok != c.ok {
			t.Errorf("ReleaseTag(%q) = %q, %v; want %q, %v", c.version, tag, ok, c.tag, c.ok)
		}
	}
	if got, want := At("v0.1.0"), "https://github.com/ocl-exporter/ocl_exporter/blob/v0.1.0/runbooks/"; got != want {
		t.Errorf("At(v0.1.0) = %s, want %s", got, want)
	}
}
