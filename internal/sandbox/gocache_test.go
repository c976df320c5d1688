package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoBuildCache: a confined go builds with the user's build cache read
// through (GOCACHEPROG: jlgcli __gocache) and the run's own written; it
// cannot write the user's. Unconfined, the same go writes the user's.
func TestGoBuildCache(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	out, _ := exec.Command(goBin, "env", "GOCACHE").Output()
	user := strings.TrimSpace(string(out))
	if !isDir(user) {
		t.Skip("no Go build cache on this machine")
	}
	runCaches := filepath.Join(t.TempDir(), "run")
	b := boxOf(t, Config{CacheDir: runCaches})
	defer b.RemoveCaches()
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(work, "m_test.go"), []byte("package m\n\nimport (\"strings\"; \"testing\")\n\nfunc TestUpper(t *testing.T) {\n\tif strings.ToUpper(\"a\") != \"A\" {\n\t\tt.Fatal()\n\t}\n}\n"), 0o644)
	env := []string{"HOME=" + t.TempDir(), "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "GOCACHE=" + user, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod"}
	planted := filepath.Join(user, "jlgcli-planted-"+filepath.Base(work))
	defer os.Remove(planted)
	script := `go test -count=1 ./... && echo tested
echo evil > ` + planted + ` 2>/dev/null && echo wrote-user-cache
true`
	got := sh(t, agentOf(b, Needs{}), work, env, script)
	want(t, "confined", got, []string{"tested"}, []string{"wrote-user-cache"})
	ents, _ := filepath.Glob(filepath.Join(runCaches, "agent", "go-prog", "a", "*"))
	if len(ents) == 0 {
		t.Errorf("the run's build cache has no entry: %q", got)
	}
	got = sh(t, nil, work, env, script)
	want(t, "unconfined", got, []string{"wrote-user-cache"}, nil)
}
