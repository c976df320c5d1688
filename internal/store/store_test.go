package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewRunID(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 4, 15, 0, 0, time.FixedZone("CET", 3600))
	id := NewRunID(now)
	if !regexp.MustCompile(`^20261122T031500Z-[0-9a-f]{8}$`).MatchString(id) {
		t.Fatalf("NewRunID = %q", id)
	}
	if err := checkID(id); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 10000 {
		id := NewRunID(now)
		if seen[id] {
			t.Fatalf("duplicate id %s in the same second", id)
		}
		seen[id] = true
	}
	if a, b := NewRunID(now), NewRunID(now.Add(time.Second)); a >= b {
		t.Errorf("ids do not sort by time: %s >= %s", a, b)
	}
}

// env is a getenv over a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// gitRepo makes a repository with git init (and one commit) and returns its
// root, symlinks resolved.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(dir, "repo")
	git(t, "", "init", "-q", dir)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// outsideRepo is a temporary directory that no git repository contains.
func outsideRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if root, ok := repoRoot(dir); ok {
		t.Skipf("the temporary directory is inside the git repository %s", root)
	}
	return dir
}

func TestStateDirPrecedence(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	out := outsideRepo(t)
	xdg := map[string]string{"XDG_STATE_HOME": "/xdg/state", "HOME": "/home/u"}
	cwd, _ := os.Getwd()

	for _, tc := range []struct {
		name, dir, override string
		env                 map[string]string
		want                string
	}{
		{"override wins in a repository", sub, "/custom/state", xdg, "/custom/state"},
		{"relative override", sub, "rel", xdg, filepath.Join(cwd, "rel")},
		{"repository root from a subdirectory", sub, "", xdg, filepath.Join(repo, ".jlgcli")},
		{"repository root", repo, "", xdg, filepath.Join(repo, ".jlgcli")},
		{"outside: XDG_STATE_HOME", out, "", xdg, "/xdg/state/jlgcli"},
		{"outside: HOME", out, "", map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/jlgcli"},
		{"outside: relative XDG_STATE_HOME is ignored", out, "", map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/home/u"}, "/home/u/.local/state/jlgcli"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StateDir(tc.dir, env(tc.env), tc.override)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("StateDir = %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := StateDir(out, env(nil), ""); err == nil || !strings.Contains(err.Error(), "--state-dir") {
		t.Errorf("no XDG_STATE_HOME nor HOME: err = %v, want a hint at --state-dir", err)
	}
}

func readExclude(t *testing.T, gitDir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(gitDir, "info", "exclude"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// ignored tells whether git ignores path in the repository at dir.
func ignored(t *testing.T, dir, path string) bool {
	t.Helper()
	cmd := exec.Command("git", "check-ignore", "-q", path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return cmd.Run() == nil
}

func TestExcludeIdempotent(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	gitDir := filepath.Join(repo, ".git")
	before := readExclude(t, gitDir)
	for range 3 {
		if _, err := StateDir(repo, env(nil), ""); err != nil {
			t.Fatal(err)
		}
	}
	got := readExclude(t, gitDir)
	if got != before+".jlgcli/\n" {
		t.Errorf("exclude after three calls:\n%s", got)
	}
	if !ignored(t, repo, ".jlgcli/runs/x/events.jsonl") {
		t.Error("git does not ignore .jlgcli/")
	}
	// An exclude file with no final newline, or none at all; two processes'
	// worth of concurrent calls.
	for _, content := range []string{"*.o", ""} {
		if content == "" {
			os.RemoveAll(filepath.Join(gitDir, "info"))
		} else if err := os.WriteFile(filepath.Join(gitDir, "info", "exclude"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := StateDir(filepath.Join(repo), env(nil), ""); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		want := ".jlgcli/\n"
		if content != "" {
			want = content + "\n" + want
		}
		if got := readExclude(t, gitDir); got != want {
			t.Errorf("exclude that was %q: %q, want %q", content, got, want)
		}
	}
	// A line the user wrote in another form counts.
	if err := os.WriteFile(filepath.Join(gitDir, "info", "exclude"), []byte("/.jlgcli\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := StateDir(repo, env(nil), ""); err != nil {
		t.Fatal(err)
	}
	if got := readExclude(t, gitDir); got != "/.jlgcli\n" {
		t.Errorf("exclude with /.jlgcli: %q", got)
	}
}

func TestExcludeWorktree(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	wt := filepath.Join(filepath.Dir(repo), "wt")
	git(t, repo, "worktree", "add", "-q", wt)
	got, err := StateDir(wt, env(nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wt, ".jlgcli"); got != want {
		t.Errorf("StateDir in a worktree = %s, want %s", got, want)
	}
	// git reads info/exclude from the common directory.
	if ex := readExclude(t, filepath.Join(repo, ".git")); strings.Count(ex, ".jlgcli/\n") != 1 {
		t.Errorf("main exclude: %q", ex)
	}
	if !ignored(t, wt, ".jlgcli/index.db") {
		t.Error("git does not ignore .jlgcli/ in the worktree")
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "worktrees", "wt", "info")); err == nil {
		t.Error("an exclude was written in the worktree's private git directory")
	}
}

func TestExcludeGitFile(t *testing.T) {
	t.Parallel()
	base := outsideRepo(t)
	// A submodule's .git file points at a git directory with no commondir.
	mod, gitDir := filepath.Join(base, "mod"), filepath.Join(base, "modules", "mod")
	for _, d := range []string{mod, gitDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, ".git"), []byte("gitdir: ../modules/mod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := StateDir(mod, env(nil), ""); err != nil || got != filepath.Join(mod, ".jlgcli") {
		t.Fatalf("StateDir = %s, %v", got, err)
	}
	if ex := readExclude(t, gitDir); ex != ".jlgcli/\n" {
		t.Errorf("exclude = %q", ex)
	}
	// A .git file that leads nowhere: the state is still at the root, the
	// exclude step is skipped.
	broken := filepath.Join(base, "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"gitdir: /nonexistent/x\n", "garbage"} {
		if err := os.WriteFile(filepath.Join(broken, ".git"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := StateDir(broken, env(nil), ""); err != nil || got != filepath.Join(broken, ".jlgcli") {
			t.Errorf(".git file %q: StateDir = %s, %v", content, got, err)
		}
	}
}

func TestCheckID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"", ".", "..", "../x", "a/b", ".hidden", "a b", strings.Repeat("a", 129)} {
		if checkID(id) == nil {
			t.Errorf("checkID(%q) accepted", id)
		}
	}
	for _, id := range []string{"20261122T041500Z-3fa91c07", "my-run_1.2"} {
		if err := checkID(id); err != nil {
			t.Errorf("checkID(%q) = %v", id, err)
		}
	}
}
