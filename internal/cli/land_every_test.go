package cli_test

// A landing killed with SIGKILL before each of its git calls (and at each
// of its named steps), the user's checkout then edited or not, and another
// jlgcli command, not resume, run in it: that command ends the landing or
// takes it back out, and never touches the user's edit.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// The user's edits made between the kill and the next command.
const (
	editNone      = "none"
	editTracked   = "tracked"   // answer.txt, which the landing changes, rewritten
	editUntracked = "untracked" // a new file, user.txt
	editStaged    = "staged"    // README.md changed and staged
)

var landEdits = []string{editNone, editTracked, editUntracked, editStaged}

// The bytes of the user's edits.
const (
	userAnswer = "the user's answer, not the task's\n"
	userFile   = "the user's new file\n"
	userReadme = "# demo, as the user staged it\n"
)

// TestLandKillEveryCall kills the jlgcli that lands (task, task
// --include-dirty, batch) before each git call of its landing and at each
// named step, found by tracing a landing first; then, for each user edit
// (none, a tracked file changed, a new untracked file, a staged change),
// runs another command (runs, show, stop, or a new task) and checks:
//   - the user's edit is there, byte for byte;
//   - the checkout (HEAD, main, the index, every file) is exactly as it was
//     before the landing, or exactly as the landing leaves it, with the
//     user's edit on top: a landing the kill left pending is ended when the
//     user changed nothing, and otherwise taken back out;
//   - the command's exit code: its own when nothing was pending, or when it
//     ended the landing (saying so); 3 (incomplete) when the user changed the
//     checkout meanwhile, its message naming the commit and the command that
//     lands it; the command after it then finds nothing to do.
func TestLandKillEveryCall(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a landing at every one of its git calls")
	}
	for _, mode := range []string{"task", "include-dirty", "batch"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			steps := traceLanding(t, mode)
			for i, step := range steps {
				for j, edit := range landEdits {
					name := fmt.Sprintf("%02d-%s/%s", i+1, strings.ReplaceAll(step, " ", "-"), edit)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						landKillCase(t, mode, steps, i, edit, (i+j)%len(nextCommands))
					})
				}
			}
		})
	}
}

// traceLanding runs the landing of mode to its end and returns its steps
// (git.LandHook), checking that they hold the named steps in order.
func traceLanding(t *testing.T, mode string) []string {
	t.Helper()
	w := newLandWorld(t, mode)
	trace := filepath.Join(w.work, "trace")
	code, stdout, stderr := runJlgcli(t, w.repo, append(killEnv(t, w.work), landTraceEnv+"="+trace), w.args...)
	if code != 0 {
		t.Fatalf("%s exited %d\n%s\n%s", w.args[0], code, stdout, stderr)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	steps := strings.Split(strings.TrimSpace(string(data)), "\n")
	want := []string{"record", "recorded", "git update-index", "git read-tree", "checked-out", "git update-ref", "moved", "landed"}
	if mode == "include-dirty" {
		want = slices.Insert(want, 2, "git read-tree", "staged")
	}
	k := 0
	for _, s := range steps {
		if k < len(want) && s == want[k] {
			k++
		}
	}
	if k < len(want) || steps[len(steps)-1] != "landed" {
		t.Fatalf("the steps of the landing are\n%s\nwant them to hold %v in order, and end with landed", strings.Join(steps, "\n"), want)
	}
	t.Logf("%s: %d steps: %s", mode, len(steps), strings.Join(steps, ", "))
	return steps
}

// A command run after the kill: its arguments (ID: the killed run's id)
// and its exit code when there was nothing to refuse.
var nextCommands = []struct {
	args []string
	code int
}{
	{[]string{"runs", "--json"}, 0},
	{[]string{"show", "--json", "ID"}, 0},
	{[]string{"stop", "ID"}, 64}, // the run is not live
	// A task that changes nothing of the user's (its own file, no merge).
	{[]string{"task", "--json", "--merge", "none", "--check", "true", "Write another file"}, 0},
}

// checkout is what the test compares of the user's checkout: HEAD, main,
// the index (git ls-files -s) and every file but .git and .jlgcli, with its
// mode and bytes.
type checkout struct {
	HEAD, Main string
	Index      string
	Files      map[string]string
}

func readCheckout(t *testing.T, repo string) checkout {
	t.Helper()
	c := checkout{HEAD: tgitOut(t, repo, "symbolic-ref", "HEAD"), Main: tgitOut(t, repo, "rev-parse", "main"),
		Index: tgitOut(t, repo, "ls-files", "-s"), Files: map[string]string{}}
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		if d.IsDir() {
			if rel == ".git" || rel == ".jlgcli" {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c.Files[filepath.ToSlash(rel)] = fmt.Sprintf("%v %q", fi.Mode(), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// diff says how got differs from want, "" when it does not.
func (want checkout) diff(got checkout) string {
	var b strings.Builder
	if got.HEAD != want.HEAD {
		fmt.Fprintf(&b, "HEAD is %s, want %s\n", got.HEAD, want.HEAD)
	}
	if got.Main != want.Main {
		fmt.Fprintf(&b, "main is %s, want %s\n", got.Main, want.Main)
	}
	if got.Index != want.Index {
		fmt.Fprintf(&b, "the index is\n%s\nwant\n%s\n", got.Index, want.Index)
	}
	var names []string
	for f := range want.Files {
		names = append(names, f)
	}
	for f := range got.Files {
		if _, ok := want.Files[f]; !ok {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	for _, f := range slices.Compact(names) {
		if g, w := got.Files[f], want.Files[f]; g != w {
			fmt.Fprintf(&b, "%s is %s, want %s\n", f, cmpOr(g, "absent"), cmpOr(w, "absent"))
		}
	}
	return b.String()
}

func cmpOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// landed is the checkout as a landing of branch leaves before: main one
// commit on it (the commit found there, whose parent and tree the caller
// checks), the index and the files its tree, with the untracked files of
// before that the tree does not hold.
func landed(t *testing.T, repo string, before checkout, commit string) checkout {
	t.Helper()
	after := checkout{HEAD: before.HEAD, Main: commit, Files: map[string]string{}}
	var index []string
	tracked := map[string]bool{}
	for _, l := range strings.Split(before.Index, "\n") {
		if _, p, ok := strings.Cut(l, "\t"); ok {
			tracked[p] = true
		}
	}
	for _, l := range strings.Split(tgitOut(t, repo, "ls-tree", "-r", commit), "\n") {
		meta, p, _ := strings.Cut(l, "\t")
		f := strings.Fields(meta) // mode type sha
		index = append(index, f[0]+" "+f[2]+" 0\t"+p)
		mode := os.FileMode(0o644)
		if f[0] == "100755" {
			mode = 0o755
		}
		out, err := exec.Command("git", "-C", repo, "cat-file", "blob", f[2]).Output()
		if err != nil {
			t.Fatal(err)
		}
		after.Files[p] = fmt.Sprintf("%v %q", mode, out)
	}
	for p, v := range before.Files {
		if _, in := after.Files[p]; !in && !tracked[p] {
			after.Files[p] = v
		}
	}
	after.Index = strings.Join(index, "\n")
	return after
}

// withEdit is c with the user's edit on top.
func withEdit(t *testing.T, repo string, c checkout, edit string) checkout {
	t.Helper()
	e := checkout{HEAD: c.HEAD, Main: c.Main, Index: c.Index, Files: map[string]string{}}
	for k, v := range c.Files {
		e.Files[k] = v
	}
	switch edit {
	case editTracked:
		e.Files["answer.txt"] = fmt.Sprintf("%v %q", os.FileMode(0o644), userAnswer)
	case editUntracked:
		e.Files["user.txt"] = fmt.Sprintf("%v %q", os.FileMode(0o644), userFile)
	case editStaged:
		e.Files["README.md"] = fmt.Sprintf("%v %q", os.FileMode(0o644), userReadme)
		lines := strings.Split(e.Index, "\n")
		for i, l := range lines {
			if strings.HasSuffix(l, "\tREADME.md") {
				lines[i] = "100644 " + userReadmeBlob(t, repo) + " 0\tREADME.md"
			}
		}
		e.Index = strings.Join(lines, "\n")
	}
	return e
}

// userReadmeBlob is the blob of the user's staged README.md.
func userReadmeBlob(t *testing.T, repo string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(f, []byte(userReadme), 0o644); err != nil {
		t.Fatal(err)
	}
	return tgitOut(t, repo, "hash-object", f)
}

// makeEdit makes the user's edit in repo.
func makeEdit(t *testing.T, repo, edit string) {
	t.Helper()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	switch edit {
	case editTracked:
		write("answer.txt", userAnswer)
	case editUntracked:
		write("user.txt", userFile)
	case editStaged:
		write("README.md", userReadme)
		tgitOut(t, repo, "add", "README.md")
	}
}

// landRecordOf is the landing record of repo, nil when there is none.
func landRecordOf(t *testing.T, repo string) *struct {
	Into, Branch, Head, Commit string
	Done                       bool
} {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, ".git", "jlgcli-landing.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Into, Branch, Head, Commit string
		Done                       bool
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

func landKillCase(t *testing.T, mode string, steps []string, i int, edit string, next int) {
	w := newLandWorld(t, mode)
	before := readCheckout(t, w.repo)
	env := killEnv(t, w.work)
	code, stdout, stderr := runJlgcli(t, w.repo, append(env, fmt.Sprintf("%s=#%d", landKillEnv, i+1)), w.args...)
	if code != -int(syscall.SIGKILL) {
		t.Fatalf("%s exited %d, want killed at step %d (%s)\nstdout:\n%s\nstderr:\n%s", w.args[0], code, i+1, steps[i], stdout, stderr)
	}
	id := w.runID(t)
	rec := landRecordOf(t, w.repo)
	// Where the kill fell: before the record, with the landing pending,
	// or once main moved (at "moved", before the record says so).
	recorded, moved := slices.Index(steps, "recorded"), slices.Index(steps, "moved")
	pending := i >= recorded && i < moved
	if open := i >= recorded && i <= moved; (rec != nil && !rec.Done) != open {
		t.Fatalf("killed at step %d (%s): record %+v, want one not done: %v", i+1, steps[i], rec, open)
	}
	makeEdit(t, w.repo, edit)

	cmd := nextCommands[next]
	args := slices.Clone(cmd.args)
	for k, a := range args {
		if a == "ID" {
			args[k] = id
		}
	}
	code, stdout, stderr = runJlgcli(t, w.repo, env, args...)
	got := readCheckout(t, w.repo)
	t.Logf("killed at step %d (%s), edit %s, then jlgcli %s: exit %d\nstderr:\n%s", i+1, steps[i], edit, strings.Join(args, " "), code, stderr)

	// The user's edit, byte for byte.
	switch edit {
	case editTracked:
		checkBytes(t, w.repo, "answer.txt", userAnswer)
	case editUntracked:
		checkBytes(t, w.repo, "user.txt", userFile)
	case editStaged:
		checkBytes(t, w.repo, "README.md", userReadme)
		if blob, want := tgitOut(t, w.repo, "rev-parse", ":README.md"), userReadmeBlob(t, w.repo); blob != want {
			t.Errorf("the user's staged README.md is blob %s in the index, want %s", blob, want)
		}
	}

	// Exactly as before, or exactly as landed, with the edit on top.
	landedState := i >= moved || pending && edit == editNone
	var want checkout
	if landedState {
		c := got.Main
		if c == w.head || tgitOut(t, w.repo, "rev-parse", c+"^") != w.head {
			t.Fatalf("main is at %s, want a commit on %s", c, w.head)
		}
		if rec == nil || c != rec.Commit {
			t.Errorf("main is at %s, want the recorded squash commit (%+v)", c, rec)
		}
		if a, b := tgitOut(t, w.repo, "rev-parse", c+"^{tree}"), tgitOut(t, w.repo, "rev-parse", rec.Branch+"^{tree}"); a != b {
			t.Errorf("main's tree is %s, the task branch's %s", a, b)
		}
		want = withEdit(t, w.repo, landed(t, w.repo, before, c), edit)
	} else {
		want = withEdit(t, w.repo, before, edit)
	}
	what := "as before the landing"
	if landedState {
		what = "as landed"
	}
	if d := want.diff(got); d != "" {
		t.Errorf("the checkout is not exactly %s (with the user's edit %s):\n%s", what, edit, d)
	}

	// The command's exit code and message.
	refused := pending && edit != editNone
	switch {
	case refused:
		if code != 3 {
			t.Errorf("exit %d, want 3 (incomplete)", code)
		}
		for _, s := range []string{"jlgcli was stopped while it merged " + rec.Branch + " into main", rec.Commit,
			"git stash -u && git merge --ff-only " + rec.Commit + " && git stash pop"} {
			if !strings.Contains(stderr, s) {
				t.Errorf("stderr does not say %q", s)
			}
		}
	case code != cmd.code:
		t.Errorf("exit %d, want %d", code, cmd.code)
	}
	finished := pending && edit == editNone
	if said := strings.Contains(stderr, "finished the landing of "+branchOf(rec)+" into main"); said != finished {
		t.Errorf("the command says it finished the landing: %v, want %v", said, finished)
	}
	if r := landRecordOf(t, w.repo); r != nil && !r.Done {
		t.Errorf("the landing is still pending: %+v", r)
	}
	if refused {
		// Said once: the next command has nothing to say.
		code, _, stderr := runJlgcli(t, w.repo, env, "runs", "--json")
		if code != 0 || strings.Contains(stderr, "landing") {
			t.Errorf("the command after: exit %d\n%s", code, stderr)
		}
	}
}

func checkBytes(t *testing.T, repo, name, want string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, name))
	if err != nil || string(data) != want {
		t.Errorf("the user's %s holds %q (%v), want %q", name, data, err, want)
	}
}

func branchOf(rec *struct {
	Into, Branch, Head, Commit string
	Done                       bool
}) string {
	if rec == nil {
		return "the task branch"
	}
	return rec.Branch
}
