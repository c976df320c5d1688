package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/guard"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Git's control files (the repository's config and hooks, a worktree's
// .git file, tracked hooks: git.ControlPaths) are checked around every
// agent call of a loop in a repository and of a task, confined or not: a
// snapshot before the call, compared after it; any change is undone byte
// for byte, journaled (EventGitControl), said on stderr, and ends the
// attempt as refused: a loop's iteration is refused as a guard refuses
// done (controlGuard), a task's attempt fails its gate with a git-control
// finding that the next attempt's prompt shows (tester). The checks a
// loop's guard or a task's gate runs are checked the same way.

// EventGitControl is the journal event of changes to git's control files
// that jlgcli undid (GitControlData).
const EventGitControl = "git-control"

// GitControlData is the payload of an EventGitControl event.
type GitControlData struct {
	// After is what made the changes: "agent" (its call) or "checks".
	After   string              `json:"after"`
	Changes []git.ControlChange `json:"changes"`
	// Error, when set, says that they could not all be undone: the run
	// stops.
	Error string `json:"error,omitempty"`
}

// controlGuardName is the name of the refusals of changes to git's
// control files (engine.Refusal.Guard).
const controlGuardName = "git-control"

// controlWatch keeps git's control files of a run's working tree as they
// were before each agent call.
type controlWatch struct {
	paths []string
	// top is the working tree's top, for the paths the messages name.
	top    string
	record func(engine.Event) error // nil: no journal
	warn   func(format string, a ...any)

	mu sync.Mutex
	// roots are the records begin took (shared), until end.
	roots []*sharedRoot
	// last are the changes of the last call, undone, until taken.
	last []git.ControlChange
	// broken is why the files could not be put back: no other call runs.
	broken error
}

// newControlWatch watches paths (git.ControlPaths) of the working tree at
// top; record journals its events (nil: none).
func newControlWatch(paths []string, top string, record func(engine.Event) error, p Parts) *controlWatch {
	return &controlWatch{paths: paths, top: top, record: record, warn: p.warn}
}

// WatchGit is agent a with git's control files of the repository holding
// dir checked around each of its calls as a loop's are (put back, and
// said), for a single call (`jlgcli run`), which has no iteration to
// refuse; a itself when dir is in no repository.
func WatchGit(ctx context.Context, a agent.Agent, dir string, p Parts) (agent.Agent, error) {
	w, err := loopWatch(ctx, dir, nil, p)
	if err != nil {
		return nil, err
	}
	return w.agent(a), nil
}

// loopWatch is the watch of a loop in dir, nil when dir is in no git
// repository (or git is not installed): there is nothing of git's to keep.
// record journals its events (nil: none).
func loopWatch(ctx context.Context, dir string, record func(engine.Event) error, p Parts) (*controlWatch, error) {
	// A few short git calls, made even when the run is being stopped (it
	// then ends at once, as it would have).
	ctx = context.WithoutCancel(ctx)
	paths, err := git.ControlPaths(ctx, dir)
	if errors.Is(err, git.ErrNotRepository) || errors.Is(err, git.ErrGitNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list git's control files of %s: %w", dir, err)
	}
	top := dir
	if r, err := git.Open(ctx, dir); err == nil {
		top = r.Dir
	}
	return newControlWatch(paths, top, record, p), nil
}

// taskWatch is the watch of a task in its worktree wt, from wt's record
// (git.Worktree.ControlPaths); rec journals its events (nil: none).
func taskWatch(ctx context.Context, wt *git.Worktree, rec taskengine.Recorder, p Parts) (*controlWatch, error) {
	paths, err := wt.ControlPaths(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("list git's control files of the worktree %s: %w", wt.Path, err)
	}
	var record func(engine.Event) error
	if rec != nil {
		record = rec.Record
	}
	return newControlWatch(paths, wt.Path, record, p), nil
}

// begin records the control files before an agent call (or the checks).
func (w *controlWatch) begin() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return w.broken
	}
	if w.roots != nil {
		release(w.paths, w.roots) // an end that never came
	}
	roots, err := acquire(w.paths)
	if err != nil {
		return fmt.Errorf("read git's control files before the call: %w", err)
	}
	w.roots = roots
	return nil
}

// sharedRoots are the records of control paths that the calls under way in
// this process share, by path: a batch's tasks run at once in one
// repository, and a call that begins while another's agent has changed a
// file they share (the repository's config) must not take that change for
// the state to keep. The first call to begin records a path; the others
// use that record until the last of them ends. (A change is then undone,
// and refuses the work, of whichever call ends first.)
var sharedRoots = struct {
	sync.Mutex
	m map[string]*sharedRoot
}{m: map[string]*sharedRoot{}}

// sharedRoot is the record of one control path and its calls under way.
type sharedRoot struct {
	mu    sync.Mutex // one undo at a time
	snap  *git.ControlSnapshot
	users int
}

// acquire gives the records of paths, taking those no call under way has.
func acquire(paths []string) ([]*sharedRoot, error) {
	sharedRoots.Lock()
	defer sharedRoots.Unlock()
	var roots []*sharedRoot
	for _, p := range paths {
		r := sharedRoots.m[p]
		if r == nil {
			snap, err := git.SnapshotControl([]string{p})
			if err != nil {
				releaseLocked(paths[:len(roots)], roots)
				return nil, err
			}
			r = &sharedRoot{snap: snap}
			sharedRoots.m[p] = r
		}
		r.users++
		roots = append(roots, r)
	}
	return roots, nil
}

// release gives back the records acquire gave for paths.
func release(paths []string, roots []*sharedRoot) {
	sharedRoots.Lock()
	defer sharedRoots.Unlock()
	releaseLocked(paths, roots)
}

func releaseLocked(paths []string, roots []*sharedRoot) {
	for i, r := range roots {
		if r.users--; r.users == 0 && sharedRoots.m[paths[i]] == r {
			delete(sharedRoots.m, paths[i])
		}
	}
}

// end compares the control files with what begin recorded and undoes every
// change; after says what ran ("agent", "checks"). It returns the changes;
// an error when they could not all be undone (the watch is then broken:
// no other call begins).
func (w *controlWatch) end(after string) ([]git.ControlChange, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.roots == nil {
		return nil, w.broken
	}
	var changes []git.ControlChange
	var errs []error
	for _, r := range w.roots {
		r.mu.Lock()
		c, err := r.snap.Undo()
		r.mu.Unlock()
		changes, errs = append(changes, c...), append(errs, err)
	}
	release(w.paths, w.roots)
	w.roots = nil
	err := errors.Join(errs...)
	if len(changes) == 0 && err == nil {
		return nil, nil
	}
	d := GitControlData{After: after, Changes: changes}
	if err != nil {
		w.broken = fmt.Errorf("git's control files were changed by %s and could not all be put back (%v): nothing else runs in %s until you check them: %s",
			whatRan(after), err, w.top, w.list(changes))
		d.Error = err.Error()
	}
	if w.record != nil {
		data, _ := json.Marshal(d)
		if rerr := w.record(engine.Event{Type: EventGitControl, Time: time.Now(), Data: data}); rerr != nil {
			w.warn("journal the changes to git's control files: %v", rerr)
		}
	}
	if w.broken != nil {
		w.warn("%v", w.broken)
		return changes, w.broken
	}
	w.warn("%s changed git's control files and jlgcli undid it: %s", whatRan(after), w.list(changes))
	w.last = append(w.last, changes...)
	return changes, nil
}

// take returns the changes undone since it was last called.
func (w *controlWatch) take() []git.ControlChange {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.last
	w.last = nil
	return c
}

func whatRan(after string) string {
	if after == "checks" {
		return "the checks"
	}
	return "the agent"
}

// rel is p as the messages name it: relative to the working tree's top
// when it is in it.
func (w *controlWatch) rel(p string) string {
	if r, err := filepath.Rel(w.top, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// list says changes in one line: "modified .git/config, created ...".
func (w *controlWatch) list(changes []git.ControlChange) string {
	var s []string
	for _, c := range changes {
		s = append(s, c.Change+" "+w.rel(c.Path))
	}
	return strings.Join(s, ", ")
}

// why is what a refusal tells the agent.
func (w *controlWatch) why(changes []git.ControlChange) string {
	return fmt.Sprintf("you changed files that decide what git runs (%s); jlgcli undid it. "+
		"An agent may not change the repository's git configuration, its hooks, hook managers' files or a .git file or directory: "+
		"do the task without touching them.", w.list(changes))
}

// confine is box (nil: none) keeping the control files read-only to the
// calls it confines, so that what the check after a call would undo
// cannot even be written.
func (w *controlWatch) confine(box *sandbox.Box) *sandbox.Box {
	if w != nil && box != nil {
		return box.WithControl(w.paths)
	}
	return box
}

// agent wraps a so that every call of it is checked.
func (w *controlWatch) agent(a agent.Agent) agent.Agent {
	if w == nil || a == nil {
		return a
	}
	return watchedAgent{Agent: a, w: w}
}

// tier is t with its agent checked.
func (w *controlWatch) tier(t taskengine.Tier) taskengine.Tier {
	t.Agent = w.agent(t.Agent)
	return t
}

// planner is the planner tier t (nil: none) with its agent checked.
func (w *controlWatch) planner(t *taskengine.Tier) *taskengine.Tier {
	if t == nil {
		return nil
	}
	c := w.tier(*t)
	return &c
}

// watchedAgent is an agent whose every call is checked: the control files
// are recorded before it and put back after it, before anything of
// jlgcli's runs git.
type watchedAgent struct {
	agent.Agent
	w *controlWatch
}

func (a watchedAgent) Run(ctx context.Context, req agent.Request) (agent.Response, error) {
	if err := a.w.begin(); err != nil {
		return agent.Response{}, err
	}
	a.w.take() // what an earlier call did was told already
	req.Box = a.w.confine(req.Box)
	resp, err := a.Agent.Run(ctx, req)
	if _, uerr := a.w.end("agent"); uerr != nil {
		return resp, uerr
	}
	return resp, err
}

// controlGuard refuses, in a loop, an iteration whose call changed git's
// control files (engine.CallGuard): whatever its reply claims, and done
// above all.
type controlGuard struct{ w *controlWatch }

func (g controlGuard) CheckCall(context.Context) *engine.Refusal {
	changes := g.w.take()
	if len(changes) == 0 {
		return nil
	}
	return g.w.refusal(changes)
}

func (w *controlWatch) refusal(changes []git.ControlChange) *engine.Refusal {
	return &engine.Refusal{Guard: controlGuardName, Details: "jlgcli undid changes to git's control files: " + w.list(changes), Prompt: w.why(changes)}
}

// controlledGuard is a guard that runs commands (the checks), checked as
// an agent's call is: what they change in git's control files is undone
// and refuses done. Its checks run with those files read-only (guards
// gives them their box so).
type controlledGuard struct {
	engine.Guard
	w *controlWatch
}

func (g controlledGuard) Check(ctx context.Context, reply string) *engine.Refusal {
	if err := g.w.begin(); err != nil {
		return &engine.Refusal{Guard: controlGuardName, Details: err.Error(), Prompt: err.Error()}
	}
	ref := g.Guard.Check(ctx, reply)
	changes, err := g.w.end("checks")
	g.w.take()
	switch {
	case err != nil:
		return &engine.Refusal{Guard: controlGuardName, Details: err.Error(), Prompt: err.Error()}
	case len(changes) > 0:
		return g.w.refusal(changes)
	}
	return ref
}

// Note is the note of the guard it wraps (engine.Noter).
func (g controlledGuard) Note() string {
	if n, ok := g.Guard.(engine.Noter); ok {
		return n.Note()
	}
	return ""
}

// guards are a loop's guards checked by w: its checks guard wrapped, and
// the call guard that refuses a call's changes (none when w is nil).
func (w *controlWatch) guards(guards []engine.Guard) ([]engine.Guard, []engine.CallGuard) {
	if w == nil {
		return guards, nil
	}
	var out []engine.Guard
	for _, g := range guards {
		if c, ok := g.(*guard.Checks); ok { // they run commands
			c.Box = w.confine(c.Box)
			g = controlledGuard{Guard: g, w: w}
		}
		out = append(out, g)
	}
	return out, []engine.CallGuard{controlGuard{w}}
}

// findings are a task's gate findings of changes undone (gate.RuleGitControl).
func (w *controlWatch) findings(changes []git.ControlChange) []gate.GamingFinding {
	if len(changes) == 0 {
		return nil
	}
	var out []gate.GamingFinding
	for _, c := range changes {
		out = append(out, gate.GamingFinding{Rule: gate.RuleGitControl, File: w.rel(c.Path),
			Message: fmt.Sprintf("%s %s, a file that decides what git runs: jlgcli undid it. An agent may not change the repository's git "+
				"configuration, its hooks, hook managers' files or a .git file or directory: do the task without touching them", c.Change, w.rel(c.Path))})
	}
	return out
}

// test is the gate of a task's attempt checked by w: an attempt whose call
// changed git's control files fails with their findings, its checks not
// run; what the checks change is undone and fails it too.
func (w *controlWatch) test(checks []gate.Check, run func() gate.Report) gate.Report {
	if w == nil {
		return run()
	}
	if changes := w.take(); len(changes) > 0 {
		rep := gate.Report{Confidence: 1}
		for _, c := range checks {
			rep.NotRun = append(rep.NotRun, c.Name)
		}
		return rep.Refuse(w.findings(changes)...)
	}
	if err := w.begin(); err != nil {
		return gate.Report{Confidence: 1}.Refuse(gate.GamingFinding{Rule: gate.RuleGitControl, Message: err.Error()})
	}
	rep := run()
	changes, err := w.end("checks")
	w.take()
	if err != nil {
		return rep.Refuse(gate.GamingFinding{Rule: gate.RuleGitControl, Message: err.Error()})
	}
	return rep.Refuse(w.findings(changes)...)
}
