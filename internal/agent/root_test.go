package agent

import (
	"strings"
	"testing"
)

// Claude Code run as root without IS_SANDBOX=1 refuses its permission flag
// on stderr and exits 1: the crash carries the hint that gets past it.
func TestClaudeRootRefusalHint(t *testing.T) {
	spec := claudeSpec()
	r := parseStream(spec.newParser(), nil, callEnd{ExitCode: 1,
		Stderr: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n"})
	if r.Failure == nil || r.Failure.Kind != FailCrash {
		t.Fatalf("failure = %+v, want a crash", r.Failure)
	}
	if !strings.Contains(r.Failure.Hint, "IS_SANDBOX=1") || !strings.Contains(r.Failure.Hint, "--env IS_SANDBOX=1") {
		t.Errorf("hint = %q, want the IS_SANDBOX=1 advice", r.Failure.Hint)
	}
	other := parseStream(spec.newParser(), nil, callEnd{ExitCode: 1, Stderr: "segmentation fault\n"})
	if other.Failure == nil || other.Failure.Hint != "" {
		t.Errorf("another crash: failure = %+v, want no hint", other.Failure)
	}
}

// The note of `backends`: as root only, and not when IS_SANDBOX=1 is set.
func TestClaudeRootNote(t *testing.T) {
	defer func(f func() int) { geteuid = f }(geteuid)
	for _, tc := range []struct {
		uid  int
		env  []string
		note bool
	}{
		{0, nil, true},
		{0, []string{"IS_SANDBOX=0"}, true},
		{0, []string{"IS_SANDBOX=0", "IS_SANDBOX=1"}, false},
		{1000, nil, false},
	} {
		geteuid = func() int { return tc.uid }
		if got := rootNote(tc.env); (got != "") != tc.note {
			t.Errorf("uid %d, env %q: note %q, want one: %v", tc.uid, tc.env, got, tc.note)
		}
	}
}

func TestPackages(t *testing.T) {
	for _, b := range Builtins {
		if Package(b) == "" || InstallCommand(b) != "npm install -g "+Package(b) {
			t.Errorf("%s: package %q, install %q", b, Package(b), InstallCommand(b))
		}
	}
	if Package("fake") != "" || InstallCommand("fake") != "" {
		t.Error("a backend that is not built in has a package")
	}
}
