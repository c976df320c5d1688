package git

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stoppedLanding is a checkout whose landing of a task (greet.go and
// greet_test.go added, README.md changed) was stopped at step.
type stoppedLanding struct {
	dir  string
	r    *Repo
	head string
	rec  landRecord
}

func landingStoppedAt(t *testing.T, step string) stoppedLanding {
	t.Helper()
	dir, r := newRepo(t)
	write(t, dir, "notes.txt", "the user's untracked notes, there before\n")
	s := stoppedLanding{dir: dir, r: r, head: tgit(t, dir, "rev-parse", "main")}
	w := taskWithCommits(t, r, "t1")
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	landStoppedAt(t, step, func() { _, _ = r.SquashMerge(ctx, "main", w.Branch, "feat: greet", "") })
	rec, err := readLanding(filepath.Join(r.GitDir(), landRecordName))
	if err != nil || rec == nil || rec.Done {
		t.Fatalf("the record of a landing stopped at %s: %+v, %v", step, rec, err)
	}
	s.rec = *rec
	return s
}

// traceSettle is the steps of SettleLanding in r, and what it returned.
func traceSettle(t *testing.T, r *Repo) ([]string, *Settled, error) {
	t.Helper()
	var steps []string
	LandHook = func(s string) { steps = append(steps, s) }
	defer func() { LandHook = nil }()
	settled, err := r.SettleLanding(ctx)
	return steps, settled, err
}

// checkFinished checks that the landing of s ended: main at its commit,
// the index and files exactly its tree, the user's untracked notes kept.
func checkFinished(t *testing.T, s stoppedLanding) {
	t.Helper()
	if got := tgit(t, s.dir, "rev-parse", "main"); got != s.rec.Commit {
		t.Errorf("main at %s, want the landing's commit %s", got, s.rec.Commit)
	}
	if got := tgit(t, s.dir, "status", "--porcelain"); got != "?? notes.txt" {
		t.Errorf("status:\n%s\nwant the user's notes.txt alone", got)
	}
	if got := read(t, s.dir, "README.md"); got != "# demo\n\nGreets.\n" {
		t.Errorf("README.md holds %q", got)
	}
}

// The user's changes in a checkout whose landing was stopped after its
// files moved: greet.go (which the landing added) rewritten, a new file.
const usersGreet = "package main // the user's edit\n"

func editStopped(t *testing.T, dir string) {
	t.Helper()
	write(t, dir, "greet.go", usersGreet)
	write(t, dir, "user.txt", "new\n")
}

// checkTakenBack checks that what the landing of s wrote is out and the
// user's edits (editStopped) are as they were.
func checkTakenBack(t *testing.T, s stoppedLanding) {
	t.Helper()
	if got := tgit(t, s.dir, "rev-parse", "main"); got != s.head {
		t.Errorf("main at %s, want %s", got, s.head)
	}
	if got := tgit(t, s.dir, "status", "--porcelain"); got != "?? greet.go\n?? notes.txt\n?? user.txt" {
		t.Errorf("status:\n%s\nwant the user's files alone", got)
	}
	if got := tgit(t, s.dir, "write-tree"); got != tgit(t, s.dir, "rev-parse", "main^{tree}") {
		t.Errorf("the index is tree %s, not main's", got)
	}
	if got := read(t, s.dir, "README.md"); got != "# demo\n" {
		t.Errorf("README.md holds %q", got)
	}
	if exists(s.dir, "greet_test.go") {
		t.Errorf("greet_test.go, which the landing wrote, is still there")
	}
	if got := read(t, s.dir, "greet.go"); got != usersGreet {
		t.Errorf("the user's greet.go holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.r.GitDir(), landRecordName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the record of the landing is left: %v", err)
	}
}

// Settling is itself stopped at each of its steps, as a process killed
// there would be; the next settling ends where an uninterrupted one does:
// a landing stopped before it wrote anything is finished; one whose files
// the user changed since is taken back out.
func TestSettleStoppedAtEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("stops settling at each of its steps")
	}
	for _, c := range []struct {
		name, at string
		edit     bool
	}{
		{"finish", "recorded", false},
		{"take-back", "checked-out", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := landingStoppedAt(t, c.at)
			if c.edit {
				editStopped(t, s.dir)
			}
			steps, settled, err := traceSettle(t, s.r)
			check := func(s stoppedLanding, settled *Settled, err error) {
				t.Helper()
				if c.edit {
					var refused *MergeRefusedError
					if !errors.As(err, &refused) || refused.Reason != RefusedInterrupted {
						t.Fatalf("settled over the user's edit: %v, want refused (interrupted)", err)
					}
					checkTakenBack(t, s)
					return
				}
				if err != nil || settled == nil || settled.Commit != s.rec.Commit {
					t.Fatalf("settled: %+v, %v; want finished at %s", settled, err, s.rec.Commit)
				}
				checkFinished(t, s)
			}
			check(s, settled, err)
			t.Logf("%d steps: %s", len(steps), strings.Join(steps, ", "))
			for i, step := range steps {
				t.Run(fmt.Sprintf("%02d-%s", i+1, strings.ReplaceAll(step, " ", "-")), func(t *testing.T) {
					s := landingStoppedAt(t, c.at)
					if c.edit {
						editStopped(t, s.dir)
					}
					// The ith step: the one after n others of its name.
					n := 0
					for _, p := range steps[:i] {
						if p == step {
							n++
						}
					}
					landStoppedAtNth(t, step, n, func() { _, _ = s.r.SettleLanding(ctx) })
					settled, err := s.r.SettleLanding(ctx)
					if !c.edit && err == nil && settled == nil {
						// Stopped once the record said done: nothing left.
						checkFinished(t, s)
						return
					}
					check(s, settled, err)
				})
			}
		})
	}
}

// The user committed what a stopped landing had staged, then changed a
// file: nothing is touched (it is their commit now), and the refusal says
// so, with no command (what is left to land is theirs to say).
func TestSettleLandingTheUserCommitted(t *testing.T) {
	s := landingStoppedAt(t, "checked-out")
	tgit(t, s.dir, "commit", "-q", "-m", "mine, with what was staged")
	write(t, s.dir, "greet.go", usersGreet)
	before := stateOf(t, s.dir)
	mine := tgit(t, s.dir, "rev-parse", "main")

	_, err := s.r.SettleLanding(ctx)
	var refused *MergeRefusedError
	if !errors.As(err, &refused) || refused.Reason != RefusedInterrupted {
		t.Fatalf("settled: %v, want refused (interrupted)", err)
	}
	for _, want := range []string{"main moved to " + mine, "is in the commit you made since", "git diff " + s.rec.Commit + " HEAD"} {
		if !strings.Contains(refused.Detail, want) {
			t.Errorf("the refusal does not say %q: %s", want, refused.Detail)
		}
	}
	if refused.Command != "" {
		t.Errorf("a command to land it: %s", refused.Command)
	}
	sameState(t, "the user's checkout", before, stateOf(t, s.dir))
	if got := tgit(t, s.dir, "rev-parse", "main"); got != mine {
		t.Errorf("main at %s, want the user's %s", got, mine)
	}
}

// The user switched to a new branch, which took the staged squash along,
// and changed a file: what the landing staged and wrote is taken out
// there, their file stays, and the command switches back to land it.
func TestSettleLandingTheUserSwitched(t *testing.T) {
	s := landingStoppedAt(t, "checked-out")
	tgit(t, s.dir, "switch", "-q", "-c", "side")
	editStopped(t, s.dir)

	_, err := s.r.SettleLanding(ctx)
	var refused *MergeRefusedError
	if !errors.As(err, &refused) || refused.Reason != RefusedInterrupted {
		t.Fatalf("settled: %v, want refused (interrupted)", err)
	}
	if want := "git stash -u && git switch main && git merge --ff-only " + s.rec.Commit + " && git stash pop"; refused.Command != want {
		t.Errorf("command %q, want %q", refused.Command, want)
	}
	if !strings.Contains(refused.Detail, "side is checked out") {
		t.Errorf("the refusal does not say side is checked out: %s", refused.Detail)
	}
	if got := tgit(t, s.dir, "symbolic-ref", "HEAD"); got != "refs/heads/side" {
		t.Errorf("HEAD is %s", got)
	}
	checkTakenBack(t, s)
}

// A landing under way in another process (it holds the lock) is not
// touched: SettleLanding leaves it to that process.
func TestSettleLandingLeavesALiveOne(t *testing.T) {
	s := landingStoppedAt(t, "checked-out")
	before := stateOf(t, s.dir)
	unlock, err := s.r.lockLanding(ctx)
	if err != nil {
		t.Fatal(err)
	}
	settled, err := s.r.SettleLanding(ctx)
	unlock()
	if err != nil || settled != nil {
		t.Fatalf("settled a landing under way: %+v, %v", settled, err)
	}
	sameState(t, "the checkout of a landing under way", before, stateOf(t, s.dir))
	if !LandingPending(s.dir) {
		t.Errorf("the landing under way is not pending any more")
	}
}

// LandingPending reads the record of the checkout that holds a directory,
// a linked worktree's too, and runs no git.
func TestLandingPending(t *testing.T) {
	dir, r := newRepo(t)
	write(t, dir, "sub/dir/f.txt", "x\n")
	if LandingPending(filepath.Join(dir, "sub", "dir")) {
		t.Errorf("pending without a record")
	}
	path := filepath.Join(r.GitDir(), landRecordName)
	if err := writeLanding(path, landRecord{Into: "main", Branch: "b", Head: "h", Commit: "c", CheckedOut: true}); err != nil {
		t.Fatal(err)
	}
	if !LandingPending(filepath.Join(dir, "sub", "dir")) {
		t.Errorf("not pending with a record not done")
	}
	if err := writeLanding(path, landRecord{Into: "main", Branch: "b", Head: "h", Commit: "c", Done: true}); err != nil {
		t.Fatal(err)
	}
	if LandingPending(dir) {
		t.Errorf("pending with a record done")
	}
	if err := os.WriteFile(path, []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !LandingPending(dir) {
		t.Errorf("a damaged record is not pending (SettleLanding says what it is)")
	}

	linked := filepath.Join(t.TempDir(), "linked")
	tgit(t, dir, "worktree", "add", "-q", "-b", "other", linked)
	lr, err := Open(ctx, linked)
	if err != nil {
		t.Fatal(err)
	}
	if LandingPending(linked) {
		t.Errorf("the linked worktree has the main checkout's record")
	}
	if err := writeLanding(filepath.Join(lr.GitDir(), landRecordName), landRecord{Into: "other", CheckedOut: true}); err != nil {
		t.Fatal(err)
	}
	if !LandingPending(linked) {
		t.Errorf("the linked worktree's own record is not read")
	}
}

// An index with unmerged entries cannot be read as a tree: nothing is
// touched and the record is kept; once the entries are gone, the landing,
// as it left the checkout, is finished.
func TestSettleLandingUnmergedIndex(t *testing.T) {
	s := landingStoppedAt(t, "checked-out")
	blob := tgit(t, s.dir, "rev-parse", "main:README.md")
	var info strings.Builder
	for stage := 1; stage <= 3; stage++ {
		fmt.Fprintf(&info, "100644 %s %d\tconflict.txt\n", blob, stage)
	}
	cmd := exec.Command("git", "update-index", "--index-info")
	cmd.Dir, cmd.Stdin = s.dir, strings.NewReader(info.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	before := stateOf(t, s.dir)

	_, err := s.r.SettleLanding(ctx)
	var refused *MergeRefusedError
	if !errors.As(err, &refused) || refused.Reason != RefusedInterrupted || !strings.Contains(refused.Detail, "cannot be read as a tree") {
		t.Fatalf("settled over unmerged entries: %v, want refused (interrupted), nothing touched", err)
	}
	sameState(t, "a checkout with unmerged entries", before, stateOf(t, s.dir))
	if !LandingPending(s.dir) {
		t.Fatalf("the record was not kept")
	}

	tgit(t, s.dir, "update-index", "--force-remove", "conflict.txt")
	settled, err := s.r.SettleLanding(ctx)
	if err != nil || settled == nil {
		t.Fatalf("settled: %+v, %v; want finished", settled, err)
	}
	checkFinished(t, s)
}
