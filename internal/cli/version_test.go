package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// A build names its version and commit: from -ldflags when set, else from
// the build information of the Go toolchain.
func TestBuildVersion(t *testing.T) {
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
		if got := buildVersion(c.version, c.commit, c.info); got != c.want {
			t.Errorf("%s: buildVersion = %q, want %q", c.name, got, c.want)
		}
	}
}

// The binary that `go build` makes in a git checkout names its commit. The
// checkout is a clone of this one's HEAD: Go stamps no VCS information in a
// linked worktree, whose .git is a file.
func TestBuiltBinaryNamesItsCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jlgcli")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	dir := t.TempDir()
	clone := filepath.Join(dir, "src")
	if out, err := exec.Command("git", "clone", "-q", "--shared", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "jlgcli")
	build := exec.Command("go", "build", "-o", bin, "./cmd/jlgcli")
	build.Dir = clone
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "commit " + strings.TrimSpace(string(head))[:12]
	if !strings.Contains(string(out), want) {
		t.Errorf("jlgcli --version = %q, want it to name %q", out, want)
	}
}
