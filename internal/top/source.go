package top

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// Item is one line of the list: a run, or a task of a batch (with or
// without a run of its own). Its text fields are as the records hold them:
// the view makes them safe.
type Item struct {
	// Key names the line across snapshots: the run's id, or for a batch's
	// task that has no run, the batch's id, "#" and the task's.
	Key string
	// RunID is the run ("" for a batch's task never run); Batch, for a
	// task of a batch, the batch's run (its stop and resume go through it).
	RunID, Batch string
	Title        string
	// Kind is the run's command: run, loop, task, batch or pr.
	Kind string
	// Status is the run's (or the batch task's) as recorded; Word what the
	// list shows of it: the status, or "killed" for a run whose status is
	// running that no process runs, "waiting" for a run that waits for a
	// subscription window.
	Status, Word string
	// Tier and Attempt are where a task stands (the tier of its attempt
	// under way or last made, that attempt from 1); Attempt is a loop's
	// iteration. 0: not known.
	Tier    string
	Attempt int
	// CostUSD and CostKnown are what it spent so far.
	CostUSD   float64
	CostKnown bool
	// Duration is how long it ran (so far, while it runs).
	Duration time.Duration
	Live     bool
	// Needs: it needs someone (runs.NeedsYou); Why says why, or what it does,
	// when the records say.
	Needs bool
	Why   string
	// Children are a batch's tasks in the batch's order, or the runs that
	// another run started (a pull-request run's rounds).
	Children []Item
}

// Snapshot is what the view shows of the runs kept under a state root.
type Snapshot struct {
	// Items are the runs that no other run started: those that need
	// someone first, then the others, newest first in each.
	Items []Item
	At    time.Time
}

// Output is what a run's newest agent call shows it doing (runs.Now): its
// number, its last tool calls and its last lines of text, the agent's own
// words, made safe where they are shown.
type Output = runs.Activity

// Detail is what the diff and details tabs show of a run.
type Detail struct {
	// Text is the run as `jlgcli show` prints it (safe already, laid out
	// for the width asked).
	Text string
	// Attempt is the newest ended attempt of a task (0: none); Files and
	// Diff its change against the task's base (Diff raw, as git wrote it;
	// its attempt's own change when the whole one was not kept); Truncated
	// when the record cut it. NoDiff says why there is none.
	Attempt   int
	Files     []git.FileChange
	Diff      string
	Truncated bool
	NoDiff    string
	// Live: Attempt is under way and the change is the task's worktree
	// as it is now.
	Live bool
}

// Source is what the view reads and does. Its one implementation is
// Store; tests give the model plain values instead.
type Source interface {
	Snapshot(ctx context.Context) (Snapshot, error)
	// Output is the tail (at most lines lines) of run id's newest agent
	// call's output.
	Output(id string, lines int) (Output, error)
	// Detail is run id's diff and details, laid out for width cells.
	Detail(ctx context.Context, id string, width int) (Detail, error)
	// Stop stops run id as `jlgcli stop` does; Resume starts `jlgcli
	// resume` of it in a process of its own; Board says where the web
	// board of run id is. Each returns what happened, in a sentence.
	Stop(ctx context.Context, id string) (string, error)
	Resume(id string) (string, error)
	Board(ctx context.Context, id string) string
}

// Store is the Source of the runs kept under a state root: the same
// reading and acting as the command line's (package runs, package plain).
type Store struct {
	Root string
	// Connect reaches the server of a run on Temporal (nil: as the run's
	// record says).
	Connect runs.Connect
	// Exe is the jlgcli that resumes a run ("": this one); Env its
	// environment (nil: this process's).
	Exe string
	Env []string
	// BoardAddr is where `jlgcli serve` is looked for (HOST:PORT).
	BoardAddr string

	mu    sync.Mutex
	ended map[string]batchEnded // the tasks of batches that ended, by batch id
	live  runs.LiveDiffs        // the changes of worktrees under way
}

// batchEnded is the tasks of a batch that has ended, as read when its row
// was last written.
type batchEnded struct {
	updated time.Time
	tasks   []batch.TaskSummary
}

func (s *Store) Output(id string, lines int) (Output, error) {
	return runs.Now(s.Root, id, lines)
}

func (s *Store) Snapshot(ctx context.Context) (Snapshot, error) {
	list, err := runs.List(s.Root, store.Filter{})
	if err != nil {
		return Snapshot{}, err
	}
	now := time.Now()
	byID := make(map[string]runs.Listed, len(list))
	for _, r := range list {
		byID[r.ID] = r
	}
	shown := map[string]bool{} // runs that are a line of a batch's task
	var top []Item
	for _, r := range list {
		if _, ok := byID[r.Parent]; ok {
			continue
		}
		it := itemOf(r, now)
		if r.Command == "batch" {
			it.Children = s.batchTasks(ctx, r, byID, shown, now)
		}
		top = append(top, it)
	}
	// The runs that a run started and that are no batch task's line (a
	// pull-request run's rounds, a task's second run), under it.
	for i := range top {
		for _, r := range list {
			if r.Parent == top[i].RunID && !shown[r.ID] {
				top[i].Children = append(top[i].Children, itemOf(r, now))
			}
		}
		for _, c := range top[i].Children {
			top[i].Needs = top[i].Needs || c.Needs
		}
	}
	slices.SortStableFunc(top, func(a, b Item) int {
		switch {
		case a.Needs == b.Needs:
			return 0
		case a.Needs:
			return -1
		}
		return 1
	})
	return Snapshot{Items: top, At: now}, nil
}

// itemOf is the line of listed run r.
func itemOf(r runs.Listed, now time.Time) Item {
	it := Item{Key: r.ID, RunID: r.ID, Title: r.Title, Kind: r.Command, Status: r.Status, Word: r.Status,
		CostUSD: r.SpentUSD, CostKnown: r.SpentKnown, Duration: r.DurationMs.Duration(), Live: r.Live}
	switch {
	case r.PR != nil:
		it.Title = fmt.Sprintf("#%d until %s: %s", r.PR.Number, r.PR.Target, cmp.Or(r.PR.Title, r.Title))
		it.Why = r.PR.Reason
	case r.Round > 0:
		it.Title = fmt.Sprintf("round %d: %s", r.Round, r.Title)
	}
	if n := len(r.Tiers); n > 0 {
		it.Tier = r.Tiers[n-1].Name
	}
	if r.Command == "task" || r.Command == "loop" || r.Command == "run" {
		it.Attempt = r.Iterations
	}
	if r.Status == store.Running {
		switch {
		case !r.Live:
		case r.DurationMs > 0 && !r.UpdatedAt.IsZero():
			// As long as it had run when its row was written, and since:
			// a resumed run's stopped time is not counted.
			it.Duration = max(it.Duration, r.DurationMs.Duration()+now.Sub(r.UpdatedAt))
		case !r.StartedAt.IsZero():
			it.Duration = max(it.Duration, now.Sub(r.StartedAt))
		}
		if c := r.Current; c != nil {
			it.Tier = cmp.Or(c.Tier, it.Tier)
			it.Attempt = max(c.Attempt, c.Iteration)
		}
		switch w, ok := fullWindow(r, now); {
		case ok:
			it.Word = "waiting"
			it.Why = fmt.Sprintf("waits for %s's %s window, until %s", w.Backend, w.Kind, w.ResetsAt.Local().Format("15:04"))
		case !r.Live:
			it.Word = "killed"
			it.Why = "no process runs it: it was killed; r resumes it from where it was cut"
		}
	}
	it.Needs = runs.NeedsYou(it.Word, it.Kind)
	return it
}

// fullWindow is a subscription window of r that is spent and resets after
// now: the run waits for it.
func fullWindow(r runs.Listed, now time.Time) (store.Window, bool) {
	for _, w := range r.Windows {
		if w.Used >= 1 && w.ResetsAt.After(now) {
			return w, true
		}
	}
	return store.Window{}, false
}

// batchTasks are the lines of the tasks of batch b, each with its run's
// where it has one (marked in shown).
func (s *Store) batchTasks(ctx context.Context, b runs.Listed, byID map[string]runs.Listed, shown map[string]bool, now time.Time) []Item {
	tasks, ok := s.endedTasks(b)
	if !ok {
		st, err := runs.Show(ctx, s.Root, b.ID, local.Parts{}, s.Connect)
		if err != nil || st.Batch == nil {
			return nil
		}
		tasks = withTitles(st.Batch.Tasks, st.Meta.Options)
		if b.Status != store.Running && !b.Live {
			s.mu.Lock()
			if s.ended == nil {
				s.ended = map[string]batchEnded{}
			}
			s.ended[b.ID] = batchEnded{updated: b.UpdatedAt, tasks: tasks}
			s.mu.Unlock()
		}
	}
	out := make([]Item, 0, len(tasks))
	for _, t := range tasks {
		it := Item{Key: b.ID + "#" + t.ID, Batch: b.ID, Title: cmp.Or(t.Title, t.ID), Kind: "task", Status: t.Status, Word: t.Status,
			Attempt: t.Attempts, CostUSD: t.CostUSD, CostKnown: t.CostKnown, Duration: t.DurationMs.Duration(), Why: t.Details}
		if t.RunID != nil {
			if r, ok := byID[*t.RunID]; ok {
				run := itemOf(r, now)
				it.Key, it.RunID, it.Live, it.Tier = r.ID, r.ID, r.Live, run.Tier
				if it.Duration == 0 {
					it.Duration = run.Duration
				}
				if t.Status == string(batch.StatusRunning) {
					it.Attempt, it.CostUSD, it.CostKnown, it.Duration = run.Attempt, run.CostUSD, run.CostKnown, run.Duration
					it.Word, it.Why = run.Word, cmp.Or(run.Why, it.Why)
				}
				shown[r.ID] = true
			} else {
				it.RunID = *t.RunID
			}
		}
		it.Needs = runs.TaskNeedsYou(t.Status) || (it.Word != it.Status && runs.NeedsYou(it.Word, it.Kind))
		out = append(out, it)
	}
	return out
}

// withTitles are tasks with the titles of their sheets where they have
// none (a batch that has not ended has them only in its spec, options).
func withTitles(tasks []batch.TaskSummary, options []byte) []batch.TaskSummary {
	var spec local.BatchSpec
	if json.Unmarshal(options, &spec) != nil {
		return tasks
	}
	title := map[string]string{}
	for _, t := range spec.Tasks {
		title[t.ID] = t.Title
	}
	out := slices.Clone(tasks)
	for i := range out {
		out[i].Title = cmp.Or(out[i].Title, title[out[i].ID])
	}
	return out
}

// endedTasks are the tasks of batch b, read before, when it has ended and
// its row has not changed since.
func (s *Store) endedTasks(b runs.Listed) ([]batch.TaskSummary, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.ended[b.ID]
	return e.tasks, ok && e.updated.Equal(b.UpdatedAt) && b.Status != store.Running
}

func (s *Store) Detail(ctx context.Context, id string, width int) (Detail, error) {
	st, err := runs.Show(ctx, s.Root, id, local.Parts{}, s.Connect)
	if err != nil {
		return Detail{}, err
	}
	var b strings.Builder
	if err := plain.State(&b, st, false, false, tty.Terminal{Width: width}); err != nil {
		return Detail{}, err
	}
	d := Detail{Text: b.String()}
	if st.Task != nil && st.Live && st.Worktree.Path != "" {
		// Its attempt under way: the worktree as it is now.
		if ch, err := s.live.Of(ctx, st.Worktree); err == nil {
			d.Live, d.Attempt, d.Files, d.Diff, d.Truncated = true, len(st.Task.Attempts)+1, ch.Files, ch.Text, ch.Truncated
			if ch.Empty {
				d.NoDiff = "the worktree holds no change yet"
			}
			return d, nil
		}
	}
	switch {
	case st.Task != nil && len(st.Task.Attempts) > 0:
		a := st.Task.Attempts[len(st.Task.Attempts)-1]
		d.Attempt, d.Files, d.Diff, d.Truncated = a.Number, a.Change.Files, cmp.Or(a.Change.Diff, a.AttemptDiff), a.Change.Truncated
		if d.Diff == "" && len(d.Files) == 0 {
			d.NoDiff = fmt.Sprintf("attempt %d changed nothing", a.Number)
		}
	case st.Task != nil:
		d.NoDiff = "no attempt has ended yet: its change shows once one has"
	case st.Batch != nil:
		d.NoDiff = "a batch's changes are its tasks': select a task"
	case st.PR != nil:
		d.NoDiff = "a pull-request run's changes are its rounds': select a round"
	default:
		d.NoDiff = "a loop keeps no diff: its agent works in your checkout (git diff there)"
	}
	return d, nil
}

func (s *Store) Stop(ctx context.Context, id string) (string, error) {
	r, err := runs.Stop(ctx, s.Root, id, s.Connect)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("run %s stopped: %s; r resumes it", r.ID, r.Status), nil
}

func (s *Store) Resume(id string) (string, error) {
	d, err := runs.ResumeDetached(s.Root, id, s.Exe, s.Env)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("started jlgcli resume %s (process %d); its output goes to %s", d.ID, d.PID, d.Log), nil
}

// boardTimeout bounds the look for a board.
const boardTimeout = 700 * time.Millisecond

// Board says where run id is on the web board: at BoardAddr when a board
// there knows the run (GET /api/runs/ID answers), else the command that
// serves one.
func (s *Store) Board(ctx context.Context, id string) string {
	url := "http://" + s.BoardAddr + "/runs/" + id
	ctx, cancel := context.WithTimeout(ctx, boardTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.BoardAddr+"/api/runs/"+id, nil)
	if err == nil {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				return "the board shows it at " + url
			case http.StatusUnauthorized:
				return "the board at " + s.BoardAddr + " asks for its token: " + url
			}
		}
	}
	return fmt.Sprintf("no board at %s shows it: run jlgcli serve --state-dir %s, then open %s", s.BoardAddr, shellWord(s.Root), url)
}

// shellWord is s quoted for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
