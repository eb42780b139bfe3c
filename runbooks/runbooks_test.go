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
		{"v1.2.3-dirty", "", false},
		{"v1.2.3-4-gabcdef0", "", false},
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
	if got, want := AtIn("https://github.com/fork/ocl_exporter/", "abc1234"), "https://github.com/fork/ocl_exporter/blob/abc1234/runbooks/"; got != want {
		t.Errorf("AtIn = %s, want %s", got, want)
	}
}

func TestRef(t *testing.T) {
	const commit = "132ff7f0123456789abcdef0123456789abcdef0"
	for _, c := range []struct{ version, revision, want string }{
		{"0.3.0", commit, "v0.3.0"},
		{"v0.3.0", "", "v0.3.0"},
		{"v0.3.0-dirty", commit, commit},
		{"v0.3.0-2-g132ff7f", commit, commit},
		{"132ff7f-dirty", commit, commit},
		{"", commit + "-modified", commit},
		{"", "unknown", "main"},
		{"", "", "main"},
	} {
		if got := Ref(c.version, c.revision); got != c.want {
			t.Errorf("Ref(%q, %q) = %s, want %s", c.version, c.revision, got, c.want)
		}
	}
}
