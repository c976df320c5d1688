package git

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// checkout's git directory (landRecord), with the trees of the user's index
// and files as they are then. Every jlgcli command in that checkout
// (runner.SettleLanding, through SettleLanding) and every later landing
// (PrepareSquash, Land) reads it first and settles a landing that a stopped
// process left (settle): one that moved the branch is marked done; one
// whose checkout is as the landing left it at one of its steps is finished
// (its remaining steps are made); one whose checkout the user changed since
// is taken back out, the user's changes left as they are (takeBack), and
// refused (RefusedInterrupted) with the command that lands it. The record of
// a landing that ended stays, marked done, until the next one: a task
// killed after its landing, before its report, is told its commit.

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
	// tree the checkout held instead of Head's.
	From string `json:"from,omitempty"`
	// Index is the tree of the user's index before the landing, Files the
	// tree of the checkout's files then (captureTree: tracked files and
	// untracked ones that are not ignored); both when CheckedOut. What the
	// landing stages and writes is told from them, and put back from them.
	// A record of an older jlgcli has no Files (and no Index without From):
	// Head's tree (From's) stands for them.
	Index string `json:"index,omitempty"`
	Files string `json:"files,omitempty"`
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
	deadline := time.Now().Add(landLockWait)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		unlock, err := tryLock(path)
		if err != nil || unlock != nil {
			return unlock, err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("another landing in %s is still going on (%s is locked)", r.Dir, path)
		}
		time.Sleep(delay)
	}
}

// tryLock takes the lock file at path if no process holds it; unlock is
// nil when one does.
func tryLock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return func() { f.Close() }, nil
	}
	f.Close()
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		return nil, nil
	}
	return nil, fmt.Errorf("lock %s: %w", path, err)
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

// LandingPending reports, from files alone (no git process runs), whether
// the checkout that holds dir has a landing record not marked done in its
// git directory (or one that cannot be read): a landing that a stopped
// jlgcli may have left half done, for SettleLanding. Every command asks it
// first; it is all they pay when there is none.
func LandingPending(dir string) bool {
	d, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dotgit); err == nil {
			gitDir := dotgit
			switch {
			case fi.Mode().IsRegular(): // a linked worktree's: "gitdir: PATH"
				data, err := os.ReadFile(dotgit)
				to, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
				if err != nil || !ok {
					return false
				}
				if gitDir = to; !filepath.IsAbs(to) {
					gitDir = filepath.Join(d, to)
				}
			case !fi.IsDir():
				return false
			}
			rec, err := readLanding(filepath.Join(gitDir, landRecordName))
			return err != nil || rec != nil && !rec.Done
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// Settled is a landing that a stopped jlgcli left half done in a checkout
// and that was finished (SettleLanding).
type Settled struct {
	Dir, Into, Branch, Commit string
}

func (s *Settled) String() string {
	return fmt.Sprintf("finished the landing of %s into %s (commit %s) that a stopped jlgcli left half done in %s", s.Branch, s.Into, s.Commit, s.Dir)
}

// SettleLanding settles the landing that a stopped jlgcli left in the
// checkout (settle), as every command of jlgcli does first: a *Settled when
// it was finished now; nil when there is none, it had ended, or another
// process is landing there now (it holds the lock). When the user changed
// the checkout since, what the landing had staged or written is taken back
// out and the error is a *MergeRefusedError (RefusedInterrupted) that says
// what happened and the command that lands it.
func (r *Repo) SettleLanding(ctx context.Context) (*Settled, error) {
	ctx = inLanding(context.WithoutCancel(ctx))
	path, lock, err := r.landFiles(ctx)
	if err != nil {
		return nil, err
	}
	if rec, err := readLanding(path); err != nil || rec == nil || rec.Done {
		return nil, err
	}
	unlock, err := tryLock(lock)
	if err != nil || unlock == nil {
		return nil, err
	}
	defer unlock()
	_, settled, err := r.settle(ctx, path)
	return settled, err
}

// indexLockWait bounds the wait for a git process that writes the index of
// the checkout (its index.lock) before a landing is settled: one that the
// stopped jlgcli had started ends on its own, within moments.
const indexLockWait = 5 * time.Second

// settle settles the landing a stopped process left in the checkout, the
// caller holding the landing lock, and returns the record of the last
// landing there (nil when there is none, or it was dropped), and, when it
// was finished now, a *Settled:
//   - Into is at its commit (or past it): it ended, and is marked so;
//   - the checkout is as the landing left it at one of its steps (Into
//     checked out at its head, and the index and files as they were
//     before, or the index at From's tree, or both at the commit's): the
//     steps left are made, and it ends;
//   - otherwise the user changed the checkout since (its index, its files,
//     HEAD or Into): what the landing had staged or written is taken back
//     out, path by path, where it is still as the landing left it, and
//     nothing else is touched (takeBack); the record is dropped, and the
//     error is a *MergeRefusedError (RefusedInterrupted) that says what
//     happened and the command that lands it.
//
// A landing into a branch that is not checked out has one write, the
// branch's move: made when the branch is still at its head and not checked
// out, else the record is dropped and the landing refused the same way.
func (r *Repo) settle(ctx context.Context, path string) (*landRecord, *Settled, error) {
	rec, err := readLanding(path)
	if err != nil || rec == nil || rec.Done {
		return rec, nil, err
	}
	g := r.git()
	done := func(finished bool) (*landRecord, *Settled, error) {
		rec.Done = true
		if err := writeLanding(path, *rec); err != nil {
			return nil, nil, err
		}
		landStep("landed")
		if !finished {
			return rec, nil, nil
		}
		return rec, &Settled{Dir: r.Dir, Into: rec.Into, Branch: rec.Branch, Commit: rec.Commit}, nil
	}
	if err := waitIndexLock(g); err != nil {
		return nil, nil, err
	}
	at, err := revCommit(ctx, g, "refs/heads/"+rec.Into)
	if errors.Is(err, ErrNotCommit) {
		at = "" // deleted since
	} else if err != nil {
		return nil, nil, err
	}
	if at != "" && (at == rec.Commit || isAncestor(ctx, g, rec.Commit, at)) {
		return done(false)
	}
	cur, err := currentBranch(ctx, g)
	if err != nil {
		return nil, nil, err
	}
	still := cur == rec.Into && at == rec.Head
	if !rec.CheckedOut {
		if at == rec.Head && cur != rec.Into {
			// Its one write, the branch move, is made now.
			if _, _, err := g.run(ctx, call{args: r.moveBranch(*rec)}); err != nil {
				return nil, nil, err
			}
			landStep("moved")
			return done(true)
		}
		if err := dropLanding(path); err != nil {
			return nil, nil, err
		}
		return nil, nil, r.interrupted(*rec, at, cur, takenBack{})
	}
	t, err := r.landTrees(ctx, g, *rec)
	if err != nil {
		return nil, nil, err
	}
	now, err := indexTree(ctx, g)
	if err != nil {
		// Kept: the next command settles it, once the index is whole.
		return nil, nil, &MergeRefusedError{Reason: RefusedInterrupted, Branch: rec.Branch, Into: rec.Into,
			Detail: fmt.Sprintf("jlgcli was stopped while it merged %s into %s (commit %s), and the index of %s cannot be read as a tree now "+
				"(a merge of yours under way?: %s): nothing was touched; once your index has no unmerged entry, the next jlgcli command "+
				"settles that landing (the record is %s)", rec.Branch, rec.Into, rec.Commit, r.Dir, oneLine(err.Error()), path)}
	}
	files, err := captureTree(ctx, g)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case still && files == t.files && (now == t.index || rec.From != "" && now == t.from):
		// Stopped before the files moved: the steps left are made.
		if err := r.checkOut(ctx, g, path, *rec, now == t.from && now != t.index, ""); err != nil {
			var way *inTheWay
			if errors.As(err, &way) {
				return nil, nil, &MergeRefusedError{Reason: RefusedWouldOverwrite, Branch: rec.Branch, Into: rec.Into,
					Detail: fmt.Sprintf("jlgcli was stopped while it merged %s into %s (commit %s), and files in %s are in the way of its end: %s; "+
						"nothing was touched", rec.Branch, rec.Into, rec.Commit, r.Dir, way.msg),
					Command: "git merge --ff-only " + rec.Commit}
			}
			return nil, nil, err
		}
		return done(true)
	case still && files == t.after && now == t.commit:
		// Stopped between the files and the branch move.
		if _, _, err := g.run(ctx, call{args: r.moveBranch(*rec)}); err != nil {
			return nil, nil, err
		}
		landStep("moved")
		return done(true)
	}
	tb, err := r.takeBack(ctx, g, *rec, t, now, files, !still)
	if err != nil {
		return nil, nil, err
	}
	if err := dropLanding(path); err != nil {
		return nil, nil, err
	}
	return nil, nil, r.interrupted(*rec, at, cur, tb)
}

// moveBranch is the update-ref of rec's branch move, the end of a landing
// that a stopped process left.
func (r *Repo) moveBranch(rec landRecord) []string {
	return []string{"update-ref", "-m", "jlgcli: squash-merge " + rec.Branch + " (ended after a stop)", "refs/heads/" + rec.Into, rec.Commit, rec.Head}
}

// waitIndexLock waits, up to indexLockWait, for the git process writing
// the index of g's checkout to end (one a killed jlgcli started goes on to
// its end); an error when it does not.
func waitIndexLock(g runner) error {
	lock := filepath.Join(g.gitDir, "index.lock")
	deadline := time.Now().Add(indexLockWait)
	for {
		if _, err := os.Lstat(lock); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("a git process is writing the index of %s (%s exists): once it has ended (or the file is removed if none is), run jlgcli again", g.workTree, lock)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// landTrees are the trees a landing's checkout goes through: the index
// and files before it; From's tree (the index once staged); the commit's
// (the index once checked out); and the files once checked out: those of
// before with the change from Head (or From) to the commit laid on them.
type landTrees struct{ index, files, from, commit, after string }

func (r *Repo) landTrees(ctx context.Context, g runner, rec landRecord) (landTrees, error) {
	var t landTrees
	var err error
	from := rec.Head
	if rec.From != "" {
		from = rec.From
		if t.from, err = revTree(ctx, g, rec.From); err != nil {
			return t, err
		}
	}
	if t.commit, err = revTree(ctx, g, rec.Commit); err != nil {
		return t, err
	}
	if t.index = rec.Index; t.index == "" {
		if t.index, err = revTree(ctx, g, rec.Head); err != nil {
			return t, err
		}
	}
	if t.files = rec.Files; t.files == "" {
		if t.files, err = revTree(ctx, g, from); err != nil {
			return t, err
		}
	}
	t.after, err = layChange(ctx, g, t.files, from, rec.Commit)
	return t, err
}

// layChange is the tree of base with the change from a to b laid on it,
// path by path; submodules' entries are left as base has them (git moves
// no submodule's files).
func layChange(ctx context.Context, g runner, base, a, b string) (string, error) {
	d, err := diffTree(ctx, g, a, b)
	if err != nil {
		return "", err
	}
	var info strings.Builder
	for _, p := range d.paths {
		e := d.entries[p]
		if e.a.gitlink() || e.b.gitlink() {
			continue
		}
		info.WriteString(e.b.indexInfo(base, p))
	}
	return withIndex(ctx, g, base, func(c call) error {
		if info.Len() == 0 {
			return nil
		}
		c.args, c.stdin = []string{"update-index", "-z", "--index-info"}, strings.NewReader(info.String())
		_, _, err := g.run(ctx, c)
		return err
	}, true)
}

// withIndex reads tree into a temporary index and calls f with a call
// that works on it; with write, it returns the tree of that index after f.
func withIndex(ctx context.Context, g runner, tree string, f func(call) error, write bool) (string, error) {
	tmp, err := os.MkdirTemp("", "jlgcli-index-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	c := call{env: []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}, config: []string{"core.splitIndex=false"}}
	rt := c
	rt.args = []string{"read-tree", tree}
	if _, _, err := g.run(ctx, rt); err != nil {
		return "", err
	}
	if err := f(c); err != nil || !write {
		return "", err
	}
	c.args = []string{"write-tree"}
	out, _, err := g.run(ctx, c)
	return strings.TrimSpace(out), err
}

// indexTree is the tree of the checkout's index, written from a copy of
// it: the user's index is only read. It fails when the index has unmerged
// entries.
func indexTree(ctx context.Context, g runner) (string, error) {
	tmp, err := os.MkdirTemp("", "jlgcli-index-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	if err := copyFile(filepath.Join(g.gitDir, "index"), index); errors.Is(err, os.ErrNotExist) {
		return "", errors.New("the checkout has no index")
	} else if err != nil {
		return "", err
	}
	out, _, err := g.run(ctx, call{args: []string{"write-tree"}, env: []string{"GIT_INDEX_FILE=" + index}, config: []string{"core.splitIndex=false"}})
	return strings.TrimSpace(out), err
}

// treeEntry is a path's entry in a tree: its mode and object; mode 000000
// when the path is not there.
type treeEntry struct{ mode, oid string }

func (e treeEntry) absent() bool  { return strings.Trim(e.mode, "0") == "" }
func (e treeEntry) gitlink() bool { return e.mode == "160000" }

// indexInfo is e at path p as a line of git update-index -z --index-info
// (an absent entry removes p); like is an object id of the repository,
// whose length the null id takes.
func (e treeEntry) indexInfo(like, p string) string {
	if e.absent() {
		return "0 " + strings.Repeat("0", len(like)) + "\t" + p + "\x00"
	}
	return e.mode + " " + e.oid + "\t" + p + "\x00"
}

// treeDiff is how two trees differ, path by path (git diff-tree -r).
type treeDiff struct {
	paths   []string // in git's order
	entries map[string]struct{ a, b treeEntry }
}

// at is p's entry in the second tree, or def when the trees agree there.
func (d treeDiff) at(p string, def treeEntry) treeEntry {
	if e, ok := d.entries[p]; ok {
		return e.b
	}
	return def
}

func diffTree(ctx context.Context, g runner, a, b string) (treeDiff, error) {
	d := treeDiff{entries: map[string]struct{ a, b treeEntry }{}}
	if a == b {
		return d, nil
	}
	out, _, err := g.run(ctx, call{args: []string{"diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", a, b}})
	if err != nil {
		return d, err
	}
	f := strings.Split(out, "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":")) // mode mode oid oid status
		if len(meta) < 5 {
			return d, fmt.Errorf("git diff-tree: unexpected line %q", f[i])
		}
		p := f[i+1]
		d.paths = append(d.paths, p)
		d.entries[p] = struct{ a, b treeEntry }{treeEntry{meta[0], meta[2]}, treeEntry{meta[1], meta[3]}}
	}
	return d, nil
}

// takenBack is what takeBack did: the paths where what the landing had
// staged or written was put back as it was before; those the user changed
// (left as they are); and those where it is in a commit the user made
// since (left as they are). A path can be in back and theirs: its index
// entry or its file was put back, the other is the user's.
type takenBack struct {
	back, theirs, committed []string
	// entries are the paths of back whose index entry was put back.
	entries map[string]bool
}

// backList lists tb.back, saying of a path that the user changed too
// which of its entry and its file was put back.
func (tb takenBack) backList() string {
	list := make([]string, len(tb.back))
	for i, p := range tb.back {
		list[i] = p
		if slices.Contains(tb.theirs, p) {
			if tb.entries[p] {
				list[i] += " (its index entry)"
			} else {
				list[i] += " (its file)"
			}
		}
	}
	return listed(list)
}

// takeBack takes out of the checkout what the landing rec had staged or
// written there, where it is still as the landing left it. now and files
// are the trees of the index and files now; moved: HEAD or the branch
// moved since, and an entry or file that HEAD's commit now holds is the
// user's (they committed it). Submodules are never touched.
//
// An index entry is the landing's when the index did not hold it before
// and the landing put it there (From's, or the commit's): it is put back as
// the index had it before. A file is the landing's when it is as the
// landing wrote it (the commit's), not as before: it is put back as it was
// (removed when there was none). Anything else is the user's.
func (r *Repo) takeBack(ctx context.Context, g runner, rec landRecord, t landTrees, now, files string, moved bool) (takenBack, error) {
	tb := takenBack{entries: map[string]bool{}}
	var headIndex, headFiles treeDiff // HEAD's tree against the index, and the files, of before
	if moved {
		if ht, err := revTree(ctx, g, "HEAD"); err == nil {
			if headIndex, err = diffTree(ctx, g, t.index, ht); err != nil {
				return tb, err
			}
			if headFiles, err = diffTree(ctx, g, t.files, ht); err != nil {
				return tb, err
			}
		}
	}
	committed := func(d treeDiff, p string, before, e treeEntry) bool {
		return d.entries != nil && d.at(p, before) == e
	}
	note := func(list *[]string, p string) {
		if !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}

	index, err := diffTree(ctx, g, t.index, now)
	if err != nil {
		return tb, err
	}
	staged, err := diffTree(ctx, g, t.index, t.commit)
	if err != nil {
		return tb, err
	}
	var stagedFrom treeDiff
	if t.from != "" {
		if stagedFrom, err = diffTree(ctx, g, t.index, t.from); err != nil {
			return tb, err
		}
	}
	var info strings.Builder
	for _, p := range index.paths {
		e := index.entries[p]
		c, byCommit := staged.entries[p]
		f, byFrom := stagedFrom.entries[p]
		switch {
		case !(byCommit && c.b == e.b || byFrom && f.b == e.b) || e.a.gitlink() || e.b.gitlink():
			note(&tb.theirs, p)
		case committed(headIndex, p, e.a, e.b):
			note(&tb.committed, p)
		default:
			info.WriteString(e.a.indexInfo(t.commit, p))
			note(&tb.back, p)
			tb.entries[p] = true
		}
	}

	written, err := diffTree(ctx, g, t.files, t.after)
	if err != nil {
		return tb, err
	}
	wt, err := diffTree(ctx, g, t.files, files)
	if err != nil {
		return tb, err
	}
	var restore, remove []string
	for _, p := range wt.paths {
		e := wt.entries[p]
		w, byLanding := written.entries[p]
		switch {
		case !byLanding || w.b != e.b || e.a.gitlink() || e.b.gitlink():
			note(&tb.theirs, p)
		case committed(headFiles, p, e.a, e.b):
			note(&tb.committed, p)
		case e.a.absent():
			remove = append(remove, p)
			note(&tb.back, p)
		default:
			restore = append(restore, p)
			note(&tb.back, p)
		}
	}

	// The files first, then the index: a process stopped in between
	// leaves the index's entries, which the next one takes back.
	if len(restore) > 0 {
		paths := strings.Join(restore, "\x00") + "\x00"
		if _, err := withIndex(ctx, g, t.files, func(c call) error {
			c.args, c.stdin = []string{"checkout-index", "-f", "-z", "--stdin"}, strings.NewReader(paths)
			_, _, err := g.run(ctx, c)
			return err
		}, false); err != nil {
			return tb, err
		}
	}
	for _, p := range remove {
		if err := removeFile(r.Dir, p); err != nil {
			return tb, err
		}
	}
	if info.Len() > 0 {
		if _, _, err := g.run(ctx, call{args: []string{"update-index", "-z", "--index-info"}, stdin: strings.NewReader(info.String())}); err != nil {
			return tb, err
		}
	}
	if len(tb.back) > 0 {
		if _, _, err := g.run(ctx, call{args: []string{"update-index", "-q", "--refresh"}, ok: []int{1}}); err != nil {
			return tb, err
		}
	}
	return tb, nil
}

// removeFile removes the file p (slash-separated, relative to top) and the
// directories above it that it leaves empty, up to top.
func removeFile(top, p string) error {
	path := filepath.Join(top, filepath.FromSlash(p))
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for d := filepath.Dir(path); d != top && strings.HasPrefix(d, top+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}

// interrupted is the refusal of the landing rec that a stopped process
// left and that the user's changes since stopped from ending: into is at
// at ("": deleted), cur is checked out, and tb is what was taken back.
func (r *Repo) interrupted(rec landRecord, at, cur string, tb takenBack) error {
	var changed []string
	if len(tb.theirs) > 0 {
		changed = append(changed, listed(tb.theirs))
	}
	switch {
	case at == "":
		changed = append(changed, rec.Into+" was deleted")
	case at != rec.Head:
		changed = append(changed, rec.Into+" moved to "+at)
	}
	switch {
	case cur == "":
		changed = append(changed, "HEAD is detached")
	case cur != rec.Into && rec.CheckedOut:
		changed = append(changed, cur+" is checked out")
	case cur == rec.Into && !rec.CheckedOut:
		changed = append(changed, rec.Into+" was checked out")
	}
	what := "changed since"
	if len(changed) > 0 {
		what += " (" + strings.Join(changed, "; ") + ")"
	}
	var did []string
	if len(tb.back) > 0 {
		did = append(did, "what it had staged or written was put back as it was before ("+tb.backList()+")")
	}
	if len(tb.committed) > 0 {
		did = append(did, "what it had staged or written of "+listed(tb.committed)+" is in the commit you made since, and was left there")
	}
	if len(did) == 0 {
		did = append(did, "nothing of it was there")
	}
	did = append(did, "your changes were left as they are")
	detail := fmt.Sprintf("jlgcli was stopped while it merged %s into %s (commit %s), and %s %s: %s; the work is kept in %s and commit %s",
		rec.Branch, rec.Into, rec.Commit, r.Dir, what, strings.Join(did, ", "), kept(&rec), rec.Commit)
	var cmd []string
	if len(tb.committed) == 0 {
		// When the user committed it, what is left to land is theirs to
		// say (git diff COMMIT HEAD shows it).
		dirty := len(tb.theirs) > 0
		if dirty {
			cmd = append(cmd, "git stash -u")
		}
		if cur != rec.Into {
			cmd = append(cmd, "git switch "+shellQuote(rec.Into))
		}
		if at == rec.Head {
			cmd = append(cmd, "git merge --ff-only "+rec.Commit)
		} else {
			cmd = append(cmd, "git cherry-pick "+rec.Commit)
		}
		if dirty {
			cmd = append(cmd, "git stash pop")
		}
	} else {
		detail += " (git diff " + rec.Commit + " HEAD shows how your commit differs from it)"
	}
	return &MergeRefusedError{Reason: RefusedInterrupted, Branch: rec.Branch, Into: rec.Into, Detail: detail, Command: strings.Join(cmd, " && ")}
}

// listed is paths, comma-separated, the first ten.
func listed(paths []string) string {
	if len(paths) > 10 {
		return strings.Join(paths[:10], ", ") + fmt.Sprintf(" and %d more", len(paths)-10)
	}
	return strings.Join(paths, ", ")
}

// kept names what holds the user's work of an interrupted landing.
func kept(rec *landRecord) string {
	if rec.From != "" {
		return "branch " + rec.Branch + " (your changes it took in: commit " + rec.From + ")"
	}
	return "branch " + rec.Branch
}
