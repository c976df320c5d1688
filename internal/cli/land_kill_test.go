package cli_test

// A task killed with SIGKILL at each step of its landing in the user's
// checkout, then resumed: the checkout must end exactly at the squash
// commit (or, killed before any write, exactly as it was).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jlgcli/jlgcli/internal/git"
)

// landKillEnv names the step of a landing (git.LandHook) at which the
// jlgcli started by a test kills itself with SIGKILL: a step's name
// ("checked-out"), or #N, the Nth step of the process's landings (its
// git calls and named steps, counted from 1).
const landKillEnv = "JLGCLI_TEST_LAND_KILL"

// landTraceEnv names a file where the jlgcli started by a test appends
// the name of each step of its landings, one a line.
const landTraceEnv = "JLGCLI_TEST_LAND_TRACE"

// armLandKill makes this jlgcli kill itself at the landing step the test
// asked for, and trace the steps where it was asked to.
func armLandKill() {
	step, trace := os.Getenv(landKillEnv), os.Getenv(landTraceEnv)
	if step == "" && trace == "" {
		return
	}
	n := 0
	git.LandHook = func(s string) {
		n++
		if trace != "" {
			if f, err := os.OpenFile(trace, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
				fmt.Fprintln(f, s)
				f.Close()
			}
		}
		if s == step || step == "#"+strconv.Itoa(n) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
}

func tgitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestLandingKilledAtEachStep kills `jlgcli task` at each step of its
// landing (a clean tree, and a tree whose changes the task took in with
// --include-dirty), and `jlgcli batch` at each step of its one task's,
// checks what the kill left, resumes the run and checks that main is at the
// squash commit, the index and the files are exactly its tree, and nothing
// else is in the user's status.
func TestLandingKilledAtEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two dozen tasks")
	}
	steps := []string{"record", "recorded", "staged", "checked-out", "moved", "landed"}
	for _, mode := range []string{"task", "include-dirty", "batch"} {
		for _, step := range steps {
			if step == "staged" && mode != "include-dirty" {
				continue // only a landing from included changes stages them
			}
			t.Run(mode+"/"+step, func(t *testing.T) {
				t.Parallel()
				landKilledAt(t, step, mode)
			})
		}
	}
}

// landWorld is a repository on main where a task (or a batch of one
// sheet) makes the answer 42, writes gone.txt and removes old.txt, and
// lands by a squash merge into the checked-out main: mode task, batch, or
// include-dirty (a task that takes in the user's staged README.md and
// untracked notes.txt).
type landWorld struct {
	mode             string
	work, repo, head string
	// args are the arguments of the command that lands.
	args []string
}

func newLandWorld(t *testing.T, mode string) *landWorld {
	t.Helper()
	dirty := mode == "include-dirty"
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	for _, d := range []string{repo, filepath.Join(work, "home"), filepath.Join(work, "xdg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"repo/jlgcli.toml": "backend = \"fake\"\n[backends.fake]\ncommand = [\"fakeagent\"]\n",
		"repo/check.sh":    "[ \"$(cat answer.txt)\" = 42 ] && exit 0\necho \"FAIL: the answer is $(cat answer.txt)\"\nexit 1\n",
		"repo/answer.txt":  "base\n",
		"repo/README.md":   "# demo\n",
		"agent.script":     "write answer.txt 42\\n ;; write gone.txt x ;; remove old.txt ;; reply done\n",
		"repo/old.txt":     "to be removed by the task\n",
		"repo/sheets/a.md": "# a\nMake the answer 42.\n",
	}
	if err := os.MkdirAll(filepath.Join(repo, "sheets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tgitOut(t, work, "init", "-q", "-b", "main", "repo")
	tgitOut(t, repo, "add", "-A")
	tgitOut(t, repo, "commit", "-q", "-m", "initial")
	w := &landWorld{mode: mode, work: work, repo: repo, head: tgitOut(t, repo, "rev-parse", "main")}
	w.args = []string{"task", "--json", "--check", "sh check.sh", "Make the answer 42"}
	if mode == "batch" {
		w.args = []string{"batch", "--json", "--check", "sh check.sh", "sheets"}
	}
	if dirty {
		if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo, being edited\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("my notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		tgitOut(t, repo, "add", "README.md")
		w.args = append(w.args[:2], append([]string{"--include-dirty"}, w.args[2:]...)...)
	}
	t.Cleanup(func() { killLeftovers(t, work) })
	return w
}

// runID is the id of the run of the command that lands.
func (w *landWorld) runID(t *testing.T) string {
	t.Helper()
	for _, r := range runIDs(t, w.repo) {
		meta, err := os.ReadFile(filepath.Join(w.repo, ".jlgcli", "runs", r, "meta.json"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(meta), `"command": "`+w.args[0]+`"`) {
			return r
		}
	}
	t.Fatalf("no %s run: %v", w.args[0], runIDs(t, w.repo))
	return ""
}

func landKilledAt(t *testing.T, step, mode string) {
	dirty := mode == "include-dirty"
	w := newLandWorld(t, mode)
	work, repo, head, args := w.work, w.repo, w.head, w.args
	before := tgitOut(t, repo, "status", "--porcelain")
	beforeIndex := tgitOut(t, repo, "ls-files", "-s")

	env := append(killEnv(t, work), landKillEnv+"="+step)
	code, _, stderr := runJlgcli(t, repo, env, args...)
	if code != -int(syscall.SIGKILL) {
		t.Fatalf("jlgcli task exited %d, want killed at %s\nstderr:\n%s", code, step, stderr)
	}
	id := w.runID(t)
	if step == "record" {
		// Killed before any write in the checkout: it is as it was.
		if got := tgitOut(t, repo, "rev-parse", "main"); got != head {
			t.Errorf("after a kill before any write main is at %s, want %s", got, head)
		}
		if got := tgitOut(t, repo, "status", "--porcelain"); got != before {
			t.Errorf("after a kill before any write the status is\n%s\nwant\n%s", got, before)
		}
		if got := tgitOut(t, repo, "ls-files", "-s"); got != beforeIndex {
			t.Errorf("after a kill before any write the index is\n%s\nwant\n%s", got, beforeIndex)
		}
	}

	code, stdout, stderr := runJlgcli(t, repo, killEnv(t, work), "resume", "--json", id)
	if code != 0 {
		t.Fatalf("resume exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	branch := ""
	c := tgitOut(t, repo, "rev-parse", "main")
	if mode == "batch" {
		var res struct {
			Status string `json:"status"`
			Tasks  []struct {
				Status, Details string
				Commit          *string
				Branch          string
			} `json:"tasks"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		if res.Status != "done" || len(res.Tasks) != 1 || res.Tasks[0].Status != "done" || res.Tasks[0].Commit == nil || *res.Tasks[0].Commit != c {
			t.Fatalf("resume: %s\nwant done, its task merged at main (%s)\nstderr:\n%s", stdout, c, stderr)
		}
		branch = res.Tasks[0].Branch
	} else {
		branch = checkTaskResumed(t, stdout, stderr, c)
	}
	checkLanded(t, repo, head, branch, dirty)
}

// checkTaskResumed checks a resumed task's result: done, merged at c; it
// returns the task's branch.
func checkTaskResumed(t *testing.T, stdout, stderr, c string) string {
	t.Helper()
	var res struct {
		Status string `json:"status"`
		Git    struct {
			Branch string `json:"branch"`
			Merge  struct {
				Status string `json:"status"`
				Commit string `json:"commit"`
				Reason string `json:"reason"`
			} `json:"merge"`
		} `json:"git"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if res.Status != "done" || res.Git.Merge.Status != "merged" || res.Git.Merge.Commit != c {
		t.Errorf("resume: status %s, merge %s at %s (%s); want done, merged at main (%s)\nstderr:\n%s",
			res.Status, res.Git.Merge.Status, res.Git.Merge.Commit, res.Git.Merge.Reason, c, stderr)
	}
	return res.Git.Branch
}

// checkLanded checks that main is one squash commit on head with the tree
// of branch, checked out, the index and files exactly its tree.
func checkLanded(t *testing.T, repo, head, branch string, dirty bool) {
	t.Helper()
	if got := tgitOut(t, repo, "rev-parse", "main^"); got != head {
		t.Errorf("main^ is %s, want the old main %s", got, head)
	}
	if got := tgitOut(t, repo, "rev-list", "--count", head+"..main"); got != "1" {
		t.Errorf("%s commits landed, want 1", got)
	}
	if a, b := tgitOut(t, repo, "rev-parse", "main^{tree}"), tgitOut(t, repo, "rev-parse", branch+"^{tree}"); a != b {
		t.Errorf("main's tree %s, the task branch's %s", a, b)
	}
	if got := tgitOut(t, repo, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("HEAD is %s", got)
	}
	if got := tgitOut(t, repo, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("status after the resume:\n%s", got)
	}
	if a, b := tgitOut(t, repo, "write-tree"), tgitOut(t, repo, "rev-parse", "main^{tree}"); a != b {
		t.Errorf("the index is tree %s, main's is %s", a, b)
	}
	// The files, byte for byte.
	for _, f := range strings.Split(tgitOut(t, repo, "ls-tree", "-r", "--name-only", "main"), "\n") {
		if got, want := tgitOut(t, repo, "hash-object", "--", f), tgitOut(t, repo, "rev-parse", "main:"+f); got != want {
			t.Errorf("%s is blob %s, main has %s", f, got, want)
		}
	}
	want := map[string]string{"answer.txt": "42\n", "gone.txt": "x", "README.md": "# demo\n"}
	if dirty {
		want["README.md"], want["notes.txt"] = "# demo, being edited\n", "my notes\n"
	}
	for f, w := range want {
		if data, err := os.ReadFile(filepath.Join(repo, f)); err != nil || string(data) != w {
			t.Errorf("%s holds %q (%v), want %q", f, data, err, w)
		}
	}
	if _, err := os.Lstat(filepath.Join(repo, "old.txt")); !os.IsNotExist(err) {
		t.Errorf("old.txt, removed by the task, is still there: %v", err)
	}
}
