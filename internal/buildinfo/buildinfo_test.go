package buildinfo

import (
	"runtime/debug"
	"testing"
)

// A build names its version and commit: from -ldflags when set, else from
// the build information of the Go toolchain.
func TestName(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "7d4670f1a2b3c4d5e6f708192a3b4c5d6e7f8091"},
		{Key: "vcs.time", Value: "2026-11-25T13:28:58Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	dirty := append(vcs[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	info := func(v string, s []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/jlgcli/jlgcli", Version: v}, Settings: s}
	}
	for _, c := range []struct {
		name, version, commit string
		info                  *debug.BuildInfo
		want                  string
	}{
		{"no information", "", "", nil, "dev"},
		{"ldflags", "v1.2.3", "abc1234", info("(devel)", vcs), "v1.2.3 (commit abc1234, 2026-11-25T13:28:58Z)"},
		{"go install @v", "", "", info("v1.2.3", nil), "v1.2.3"},
		{"devel checkout", "", "", info("(devel)", vcs), "dev (commit 7d4670f1a2b3, 2026-11-25T13:28:58Z)"},
		{"dirty checkout", "", "", info("(devel)", dirty), "dev (commit 7d4670f1a2b3-dirty, 2026-11-25T13:28:58Z)"},
		{"pseudo-version", "", "", info("v0.0.0-20261125132858-7d4670f1a2b3+dirty", dirty),
			"v0.0.0-20261125132858-7d4670f1a2b3+dirty (commit 7d4670f1a2b3-dirty, 2026-11-25T13:28:58Z)"},
		{"test binary", "", "", info("", nil), "dev"},
	} {
		if got := Name(c.version, c.commit, c.info); got != c.want {
			t.Errorf("%s: Name = %q, want %q", c.name, got, c.want)
		}
	}
}
