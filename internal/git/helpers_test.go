package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestMain isolates git from the machine's configuration: no system or
// global config (so no identity: the fallback is exercised), no variable
// that selects another repository or identity.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "jlgcli-git-home-")
	if err != nil {
		panic(err)
	}
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, []byte("[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		panic(err)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} {
		os.Unsetenv(k)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_CONFIG_GLOBAL", global)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

var ctx = context.Background()

// tgit runs git for a test (as a user would, with an identity of its own
// given through the environment, and without refreshing the index from a
// status) and returns its trimmed stdout.
func tgit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := tgitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func tgitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=Test User", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test User", "GIT_COMMITTER_EMAIL=test@example.com")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", &testGitError{err, stderr.String()}
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

type testGitError struct {
	err    error
	stderr string
}

func (e *testGitError) Error() string { return e.err.Error() + ": " + e.stderr }

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
	return err == nil
}

// newRepo makes a repository on branch main with one commit: a Go file, its
// test, a README, a .gitignore for *.log and build/.
func newRepo(t *testing.T) (string, *Repo) {
	t.Helper()
	dir := t.TempDir()
	tgit(t, dir, "init", "-q")
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	write(t, dir, "main.go", "package main\n\nfunc main() {}\n")
	write(t, dir, "main_test.go", "package main\n\nimport \"testing\"\n\nfunc TestMain(t *testing.T) {}\n")
	write(t, dir, "README.md", "# demo\n")
	tgit(t, dir, "add", "-A")
	tgit(t, dir, "commit", "-q", "-m", "initial")
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r.Dir, r
}

// treeState is everything of a working tree that jlgcli must not change:
// git status, the index file's bytes, and every file outside .git.
type treeState struct {
	status string
	index  string
	files  map[string]string
}

func stateOf(t *testing.T, dir string) treeState {
	t.Helper()
	// The ignored .jlgcli/ (state and worktrees) is jlgcli's own.
	var status []string
	for _, l := range strings.Split(tgit(t, dir, "status", "--porcelain=v1", "--untracked-files=all", "--ignored"), "\n") {
		if !strings.HasPrefix(l, "!! .jlgcli/") {
			status = append(status, l)
		}
	}
	s := treeState{status: strings.Join(status, "\n"), files: files(t, dir, true)}
	idx, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(idx)
	s.index = hex.EncodeToString(sum[:])
	return s
}

func sameState(t *testing.T, what string, before, after treeState) {
	t.Helper()
	if before.status != after.status {
		t.Errorf("%s: git status changed:\nbefore:\n%s\nafter:\n%s", what, before.status, after.status)
	}
	if before.index != after.index {
		t.Errorf("%s: the index file changed", what)
	}
	if a, b := dump(before.files), dump(after.files); a != b {
		t.Errorf("%s: files changed:\nbefore:\n%s\nafter:\n%s", what, a, b)
	}
}

// files reads every file under dir but .git (and .jlgcli when skipJlgcli).
func files(t *testing.T, dir string, skipJlgcli bool) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || skipJlgcli && rel == ".jlgcli" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == ".git" { // a worktree's .git file
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func dump(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + " = " + strings.ReplaceAll(m[k], "\n", `\n`) + "\n")
	}
	return b.String()
}

// dirtyUserTree gives the user's tree every kind of uncommitted change: a
// modified tracked file, a staged new file, a staged change then changed
// again, a deleted file, an untracked file, and ignored files.
func dirtyUserTree(t *testing.T, dir string) {
	t.Helper()
	write(t, dir, "main.go", "package main\n\nfunc main() { println(1) }\n")
	write(t, dir, "staged.txt", "staged\n")
	tgit(t, dir, "add", "staged.txt")
	write(t, dir, "README.md", "# demo\nstaged line\n")
	tgit(t, dir, "add", "README.md")
	write(t, dir, "README.md", "# demo\nstaged line\nunstaged line\n")
	if err := os.Remove(filepath.Join(dir, "main_test.go")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "notes/untracked.txt", "untracked\n")
	write(t, dir, "debug.log", "ignored\n")
	write(t, dir, "build/out.bin", "ignored too\n")
}

func newTask(t *testing.T, r *Repo, id string) *Worktree {
	t.Helper()
	w, err := r.NewWorktree(ctx, id, "Add a greeting", "", false)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
