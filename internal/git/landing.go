package git

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jlgcli/jlgcli/internal/durable"
)

// A landing (Land) writes to the user's checkout in several git commands:
// the index and files are brought to the new commit, then the branch is
// moved. A process killed between two of them would leave the squash staged
// with the branch unmoved. So that a landing is never left half done, Land
// first writes what it is about to do, durably, in a record of the
// checkout's git directory (landRecord); every later landing in that
// checkout (a resumed task's, a batch's) reads it first and, from the state
// the checkout is in, finishes that landing, or drops it when nothing of it
// was written, or refuses to touch anything when the user changed the
// checkout since (settle). The record of a landing that ended stays, marked
// done, until the next one: a task killed after its landing, before its
// report, is told its commit.

// Names of the files of landings in a checkout's git directory.
const (
	landRecordName = "jlgcli-landing.json"
	landLockName   = "jlgcli-landing.lock"
)

// landLockWait bounds the wait for another process's landing in the same
// checkout.
const landLockWait = 2 * time.Minute

// LandHook, when set, is called at each step of a landing with the step's
// name: before each of its git calls, "git " and the git command ("git
// read-tree"), from the first call of PrepareSquash to the last of Land,
// those of the ending of an earlier landing included (SettleLanding); and
// between them "record" (nothing written yet), "recorded" (the record is
// written), "staged" (with included changes: the index holds them),
// "checked-out" (index and files at the new commit), "moved" (the branch
// moved) and "landed" (the record marked done). Tests set it to stop the
// process there; jlgcli never does.
var LandHook func(step string)

func landStep(step string) {
	if LandHook != nil {
		LandHook(step)
	}
}

// landingKey marks the context of a landing's git calls (inLanding), whose
// every call is a step of LandHook.
type landingKey struct{}

// inLanding is ctx with its git calls marked as a landing's.
func inLanding(ctx context.Context) context.Context {
	return context.WithValue(ctx, landingKey{}, true)
}

// landCall is the step of LandHook before git call c, when ctx is a
// landing's.
func landCall(ctx context.Context, c call) {
	if LandHook != nil && len(c.args) > 0 && ctx.Value(landingKey{}) != nil {
		landStep("git " + c.args[0])
	}
}

// landRecord is a landing in the user's checkout, written before its first
// write there.
type landRecord struct {
	Into   string `json:"into"`
	Branch string `json:"branch"`
	// Head is Into's head before; Commit the squash commit it moves to.
	Head   string `json:"head"`
	Commit string `json:"commit"`
	// CheckedOut: Into is checked out in the checkout; its index and files
	// move too.
	CheckedOut bool `json:"checkedOut,omitempty"`
	// From is the commit of the task's included uncommitted changes, whose
	// tree the checkout held instead of Head's; Index is the tree of the
	// user's index then, put back if the landing is dropped.
	From  string `json:"from,omitempty"`
	Index string `json:"index,omitempty"`
	// Done: the landing ended, Into is at Commit (or past it).
	Done bool `json:"done,omitempty"`
}

// landFiles are the paths of the landing record and lock of the checkout.
func (r *Repo) landFiles(ctx context.Context) (record, lock string, err error) {
	g := r.git()
	if g.err != nil {
		return "", "", g.err
	}
	out := filepath.Join(g.gitDir, landRecordName)
	return out, filepath.Join(g.gitDir, landLockName), nil
}

// lockLanding takes the checkout's landing lock: one landing at a time in
// a checkout, across processes. A process that dies loses it.
func (r *Repo) lockLanding(ctx context.Context) (unlock func(), err error) {
	_, path, err := r.landFiles(ctx)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(landLockWait)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			f.Close()
			return nil, fmt.Errorf("another landing in %s is still going on (%s is locked)", r.Dir, path)
		}
		time.Sleep(delay)
	}
}

// readLanding reads the checkout's landing record; nil when there is none.
func readLanding(path string) (*landRecord, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec landRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w (remove it once the checkout is as you want it)", path, err)
	}
	return &rec, nil
}

// writeLanding writes rec at path durably (durable.WriteFile).
func writeLanding(path string, rec landRecord) error {
	data, _ := json.MarshalIndent(rec, "", "  ")
	if err := durable.WriteFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("record the landing: %w", err)
	}
	return nil
}

// dropLanding removes the record of a landing that wrote nothing.
func dropLanding(path string) error { return durable.Remove(path) }

// settle ends the landing a killed process left in the checkout, the
// caller holding the landing lock, and returns the record of the last
// landing there (nil when there is none, or it was dropped):
//   - Into is at its commit (or past it): it ended;
//   - Into is at its head, checked out, the index at the commit's tree and
//     the files as the index says: only the branch move is missing, and
//     it is made (only if Into is still at the head);
//   - nothing of it was written (the checkout is as it was before, or
//     clean): the record is dropped, the landing can start again;
//   - otherwise the checkout changed since: a *MergeRefusedError
//     (RefusedInterrupted) that says how to end it by hand, and nothing is
//     touched.
func (r *Repo) settle(ctx context.Context, path string) (*landRecord, error) {
	rec, err := readLanding(path)
	if err != nil || rec == nil || rec.Done {
		return rec, err
	}
	g := r.git()
	done := func() (*landRecord, error) {
		rec.Done = true
		return rec, writeLanding(path, *rec)
	}
	at, err := revCommit(ctx, g, "refs/heads/"+rec.Into)
	if err != nil {
		return nil, err
	}
	if at == rec.Commit || isAncestor(ctx, g, rec.Commit, at) {
		return done()
	}
	if !rec.CheckedOut {
		// Its one write, the branch move, was not made.
		return nil, dropLanding(path)
	}
	cur, err := currentBranch(ctx, g)
	if err != nil {
		return nil, err
	}
	clean, err := filesAsIndex(ctx, g)
	if err != nil {
		return nil, err
	}
	if cur == rec.Into && at == rec.Head && clean && indexIs(ctx, g, rec.Commit) {
		// Killed between the files and the branch move.
		if _, _, err := g.run(ctx, call{args: []string{"update-ref", "-m", "jlgcli: squash-merge " + rec.Branch + " (ended after a stop)",
			"refs/heads/" + rec.Into, rec.Commit, rec.Head}}); err != nil {
			return nil, err
		}
		return done()
	}
	if cur == rec.Into && at == rec.Head && rec.From != "" && (indexIs(ctx, g, rec.From) || indexIs(ctx, g, rec.Index)) {
		// Killed before the files moved, the user's changes still there:
		// their index goes back as it was.
		if tree, err := captureTree(ctx, g); err != nil {
			return nil, err
		} else if from, err := revTree(ctx, g, rec.From); err != nil {
			return nil, err
		} else if tree == from {
			if !indexIs(ctx, g, rec.Index) {
				if _, _, err := g.run(ctx, call{args: []string{"read-tree", rec.Index}}); err != nil {
					return nil, err
				}
			}
			return nil, dropLanding(path)
		}
	}
	if clean && indexIs(ctx, g, "HEAD") {
		// Nothing of it is in the checkout (not written, or undone).
		return nil, dropLanding(path)
	}
	return nil, &MergeRefusedError{Reason: RefusedInterrupted, Branch: rec.Branch, Into: rec.Into,
		Detail: fmt.Sprintf("jlgcli was stopped while it merged %s into %s (commit %s) and %s has changed since; nothing was touched "+
			"(git status shows what differs; the work is kept in %s; the record is %s)", rec.Branch, rec.Into, rec.Commit, r.Dir, kept(rec), path),
		Command: fmt.Sprintf("git switch %s && git merge --ff-only %s", shellQuote(rec.Into), rec.Commit)}
}

// kept names what holds the user's work of an interrupted landing.
func kept(rec *landRecord) string {
	if rec.From != "" {
		return "branch " + rec.Branch + " and commit " + rec.From
	}
	return "branch " + rec.Branch
}

// indexIs reports whether the index of the checkout at dir holds exactly
// the tree of rev.
func indexIs(ctx context.Context, g runner, rev string) bool {
	if rev == "" {
		return false
	}
	_, code, err := g.run(ctx, call{args: []string{"diff-index", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", rev, "--"}, ok: []int{1}})
	return err == nil && code == 0
}

// filesAsIndex reports whether the tracked files of the checkout at dir are
// as its index says (untracked files do not count).
func filesAsIndex(ctx context.Context, g runner) (bool, error) {
	out, _, err := g.run(ctx, call{args: []string{"status", "--porcelain", "-z", "--untracked-files=no", "--ignore-submodules=dirty", "--", ".", notState}})
	if err != nil {
		return false, err
	}
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 2 {
			continue
		}
		if e[1] != ' ' || e[0] == 'U' {
			return false, nil
		}
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the path it was renamed or copied from
		}
	}
	return true, nil
}
