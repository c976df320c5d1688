package runs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Listed is one run as a board lists it: its row in the index (the JSON of
// `jlgcli runs --json`, unchanged) and what a board adds, read from the
// run's files.
type Listed struct {
	store.RunRow
	// Sheet is, for a task run that a batch started, the id of its task in
	// the batch (its sheet's); "" otherwise, or when the batch's journal
	// does not name the run (a second run made to land the task).
	Sheet string `json:"sheet,omitempty"`
	// Temporal is the server a run was submitted to; nil for a run made
	// here. Its status is that of its local record, as fresh as the last
	// show or resume made it.
	Temporal *store.Temporal `json:"temporal,omitempty"`
	// RerunAs is, for a task run whose batch ran the task again because
	// this run's change could not land, that second run (RerunOf, in the
	// row, links the second run to this one), and RerunLanded whether it
	// landed. Landed says, for either of the two, whether its own change
	// is the one that landed; nil for a run that was not run again.
	RerunAs     string `json:"rerunAs,omitempty"`
	RerunLanded bool   `json:"rerunLanded,omitempty"`
	Landed      *bool  `json:"landed,omitempty"`
	// SpentUSD is what the run has cost so far, and SpentKnown whether any
	// cost is known: CostUSD, plus for a batch that has not stopped what
	// its running tasks have spent in their own runs.
	SpentUSD   float64 `json:"spentUsd"`
	SpentKnown bool    `json:"spentKnown"`
	// Current is where a run whose status is running stands (nil for the
	// others). A running run that is not Live was killed: Current is where
	// it was cut, and `jlgcli resume` goes on from there. (A run on
	// Temporal is Live while its record says running.)
	Current *Current `json:"current,omitempty"`
	// PR is, for a pull-request run (jlgcli pr, task --until), its pull
	// request and how far its work went; nil for the other runs.
	PR *PRRef `json:"pr,omitempty"`
	// Round is, for a task run that a pull-request run made (its Parent),
	// the round it is, from 1; 0 otherwise.
	Round int `json:"round,omitempty"`
}

// PRRef is the pull request of a pull-request run, as a board lists it.
// Its title and its reason come from the forge and the loop's words on
// what the forge holds: anyone who can write there wrote them.
type PRRef struct {
	Number int         `json:"number"`
	URL    string      `json:"url,omitempty"`
	Title  string      `json:"title,omitempty"`
	Target pull.Target `json:"target,omitempty"`
	// Rounds counts the rounds ended; Reason says why the run ended as it
	// did ("" while it runs).
	Rounds int    `json:"rounds"`
	Reason string `json:"reason,omitempty"`
}

// Current is where a running run stands, from its checkpoint.
type Current struct {
	// Iteration is a loop's iteration under way (or next), from 1.
	Iteration int `json:"iteration,omitempty"`
	// Attempt is a task's attempt under way (or next), from 1; Tier the
	// tier that makes it; Step the step of the plan it works on, from 1
	// (0: no plan).
	Attempt int    `json:"attempt,omitempty"`
	Tier    string `json:"tier,omitempty"`
	Step    int    `json:"step,omitempty"`
	// Tasks are a batch's running tasks, in the batch's order.
	Tasks []RunningTask `json:"tasks,omitempty"`
	// Round is a pull-request run's round under way, from 1, and RoundRun
	// its task run; Waiting what the run waits for, when it waits.
	Round    int      `json:"round,omitempty"`
	RoundRun string   `json:"roundRun,omitempty"`
	Waiting  []string `json:"waiting,omitempty"`
}

// RunningTask is a running task of a batch.
type RunningTask struct {
	// ID is the task's id in the batch (its sheet's); RunID its run, ""
	// before the run exists.
	ID    string `json:"id"`
	RunID string `json:"runId,omitempty"`
	// Attempt and Tier are where its run stands; CostUSD what it has
	// spent so far.
	Attempt   int     `json:"attempt,omitempty"`
	Tier      string  `json:"tier,omitempty"`
	CostUSD   float64 `json:"costUsd"`
	CostKnown bool    `json:"costKnown"`
}

// Statuses are the statuses a run can have: running, and every status a run
// ends with (the exit-code contract's, error and a batch's incomplete
// included). A Filter's Status must be one of them.
func Statuses() []string {
	out := []string{store.Running}
	for _, row := range exit.Table {
		for _, s := range row.Statuses {
			out = append(out, string(s))
		}
	}
	return append(out, string(engine.StatusError))
}

// ValidStatus tells whether s is a status a run can have ("" selects every
// run).
func ValidStatus(s string) bool { return s == "" || slices.Contains(Statuses(), s) }

// List returns the runs kept under the state root that f selects, newest
// first, each with where it stands when it runs. It reads the index
// (store.Index.List, which brings it in line with the run directories)
// and, for running runs and the tasks of batches, their checkpoints and
// their batch's journal; it writes nothing but the index. A status that no
// run can have is a exit.UsageError.
func List(root string, f store.Filter) ([]Listed, error) {
	if !ValidStatus(f.Status) {
		return nil, &exit.UsageError{Err: fmt.Errorf("invalid status %q: want one of %s", f.Status, strings.Join(Statuses(), ", "))}
	}
	idx, err := store.OpenIndex(root)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	rows, err := idx.List(f)
	if err != nil {
		return nil, err
	}
	l := newLister(root)
	out := make([]Listed, 0, len(rows))
	for _, row := range rows {
		if r := l.run(row); f.Status == "" || r.Status == f.Status { // a live run is running, whatever its row says
			out = append(out, r)
		}
	}
	return out, nil
}

// newLister is the lister of the runs under root.
func newLister(root string) *lister {
	return &lister{root: root, batches: map[string]batchRuns{}, prs: map[string]*local.PRResult{}, kinds: map[string]string{}}
}

// lister fills the runs of one List.
type lister struct {
	root string
	// batches are the runs of the batches read so far, by batch id; prs
	// the pull-request runs read so far (nil: not readable), by run id;
	// kinds the command of each parent run opened, by run id.
	batches map[string]batchRuns
	prs     map[string]*local.PRResult
	kinds   map[string]string
}

// run is row with what the run's files add. A file that cannot be read
// leaves its part out: the row is what the index knows.
func (l *lister) run(row store.RunRow) Listed {
	r := Listed{RunRow: row, SpentUSD: row.CostUSD, SpentKnown: row.CostKnown}
	run, err := store.Open(l.root, row.ID)
	if err != nil {
		return r
	}
	defer run.Close()
	r.Temporal = run.Meta.Temporal
	if row.Live && r.Temporal == nil {
		// A process runs it here: it runs, whatever its row last said (a
		// resume writes its row running at once, but until then, or by a
		// jlgcli from before that, the row says how it stopped). The lock
		// of a run on Temporal only says that a jlgcli here holds its
		// record (following it, or writing what the server said).
		r.Status = store.Running
	}
	if r.Temporal != nil {
		// Its workers run it as long as its record says so (show says
		// the same): nobody here need hold its lock (--detach, a Ctrl-C
		// that stopped following), and it was not killed for that.
		r.Live = r.Status == store.Running
	}
	if row.Command == "pr" {
		l.prAt(run, &r)
	}
	switch {
	case row.Parent == "":
	case l.kind(row.Parent) == "pr":
		if pr := l.pr(row.Parent, nil); pr != nil {
			r.Round = roundOf(*pr, row.ID)
		}
	case l.kind(row.Parent) == "batch":
		b := l.batch(row.Parent)
		r.Sheet = b.task[row.ID]
		r.RerunAs = b.rerunAs[row.ID]
		r.RerunLanded = r.RerunAs != "" && b.landed[r.RerunAs]
		if landed, ok := b.landed[row.ID]; ok {
			r.Landed = &landed
		}
	}
	if r.Status != store.Running {
		return r
	}
	switch row.Command {
	case "task":
		r.Current = &Current{}
		r.Current.Attempt, r.Current.Tier, r.Current.Step = taskAt(run)
	case "batch":
		l.batchAt(run, &r)
	case "pr":
		r.Current = &Current{}
		if pr := l.pr(run.ID, run); pr != nil {
			if c := pr.Current; c != nil {
				r.Current.Round, r.Current.RoundRun = c.Round, c.RunID
			} else if a := pr.Last; a != nil && a.Do == pull.Wait {
				r.Current.Waiting = a.Waiting
			}
		}
	default:
		var cp engine.Checkpoint
		_ = run.ReadCheckpoint(&cp) // none yet: its first iteration
		r.Current = &Current{Iteration: max(cp.State.Iterations, row.Iterations) + 1}
	}
	return r
}

// taskAt is where a running task run stands: its attempt under way, the
// tier that makes it and the plan's step (from 1; 0 without a plan).
func taskAt(run *store.Run) (attempt int, tier string, step int) {
	var cp taskengine.Checkpoint
	if err := run.ReadCheckpoint(&cp); err != nil {
		return 1, "", 0
	}
	if i := cp.State.Tier; i >= 0 && i < len(cp.Tiers) {
		tier = cp.Tiers[i].Name
	}
	if len(cp.Plan) > 0 {
		step = cp.State.Step + 1
	}
	return cp.State.Attempts + 1, tier, step
}

// batchAt fills r, a batch that has not stopped, with its running tasks
// and what they have spent in their own runs, as `jlgcli show` counts them.
func (l *lister) batchAt(run *store.Run, r *Listed) {
	var cp local.BatchCheckpoint
	if err := run.ReadCheckpoint(&cp); err != nil {
		return
	}
	last := l.batch(run.ID).last
	r.Current = &Current{}
	for _, t := range cp.Tasks {
		if rr := t.Rerun; rr != nil && rr.Status == "" {
			// A second run under way, in the merge: what it spent so far
			// (the checkpoint has what it had when it started).
			if tr, err := store.Open(l.root, rr.RunID); err == nil {
				if row, err := tr.Row(); err == nil {
					r.SpentUSD += row.CostUSD - rr.CostUSD
					r.SpentKnown = r.SpentKnown || row.CostKnown
				}
				tr.Close()
			}
		}
		if t.Status != batch.StatusRunning {
			continue
		}
		rt := RunningTask{ID: t.ID, RunID: cmp.Or(t.RunID, last[t.ID])}
		if rt.RunID != "" {
			if tr, err := store.Open(l.root, rt.RunID); err == nil {
				if row, err := tr.Row(); err == nil {
					rt.CostUSD, rt.CostKnown = row.CostUSD, row.CostKnown
					r.SpentUSD += row.CostUSD
					r.SpentKnown = r.SpentKnown || row.CostKnown
				}
				rt.Attempt, rt.Tier, _ = taskAt(tr)
				tr.Close()
			}
		}
		r.Current.Tasks = append(r.Current.Tasks, rt)
	}
}

// kind is the command of run id ("" when it cannot be read), opened once
// per List.
func (l *lister) kind(id string) string {
	k, ok := l.kinds[id]
	if !ok {
		if run, err := store.Open(l.root, id); err == nil {
			k = run.Meta.Command
			run.Close()
		}
		l.kinds[id] = k
	}
	return k
}

// pr is the result of pull-request run id, read from its journal once per
// List (run: the run opened, nil to open it); nil when it cannot be read.
func (l *lister) pr(id string, run *store.Run) *local.PRResult {
	if pr, ok := l.prs[id]; ok {
		return pr
	}
	l.prs[id] = nil
	if run == nil {
		var err error
		if run, err = store.Open(l.root, id); err != nil {
			return nil
		}
		defer run.Close()
	}
	if res, err := prResult(run); err == nil {
		l.prs[id] = &res
	}
	return l.prs[id]
}

// prAt fills r, a pull-request run, with its pull request.
func (l *lister) prAt(run *store.Run, r *Listed) {
	pr := l.pr(run.ID, run)
	if pr == nil {
		return
	}
	r.PR = &PRRef{Number: pr.Number, URL: pr.URL, Title: pr.Title, Target: pr.Target, Rounds: len(pr.Rounds)}
	if r.Status != store.Running {
		r.PR.Reason = pr.Reason
	}
}

// prResult is the result of pull-request run as its journal holds it,
// read without repairing it (a line being written is left out); from its
// record when it runs on Temporal.
func prResult(run *store.Run) (local.PRResult, error) {
	if run.Meta.Temporal != nil {
		return temporalPR(run)
	}
	lines, _, err := readLines(run.EventsPath(), 0)
	if err != nil {
		return local.PRResult{}, err
	}
	evs := make([]engine.Event, len(lines))
	for i, ln := range lines {
		evs[i] = ln.Event
	}
	return local.PRResultOf(run, evs)
}

// roundOf is the round of pull-request run pr that task run id is (ended
// or under way), 0 for none.
func roundOf(pr local.PRResult, id string) int {
	for _, r := range pr.Rounds {
		if r.RunID == id {
			return r.Round
		}
	}
	if c := pr.Current; c != nil && c.RunID == id {
		return c.Round
	}
	return 0
}

// batchRuns are the runs a batch started, from its journal.
type batchRuns struct {
	task map[string]string // the task of each run, by run id
	last map[string]string // the last run of each task, by task id
	// rerunAs is the second run of a task run run again, by the first
	// run's id; landed whether each of the two landed, by run id.
	rerunAs map[string]string
	landed  map[string]bool
}

// batch reads the journal of batch id once per List.
func (l *lister) batch(id string) batchRuns {
	if b, ok := l.batches[id]; ok {
		return b
	}
	b := batchRuns{task: map[string]string{}, last: map[string]string{}, rerunAs: map[string]string{}, landed: map[string]bool{}}
	l.batches[id] = b
	run, err := store.Open(l.root, id)
	if err != nil {
		return b
	}
	defer run.Close()
	lines, _, err := readLines(run.EventsPath(), 0)
	if err != nil {
		return b
	}
	for _, ln := range lines {
		if ln.Event.Type != local.EventBatchRun && ln.Event.Type != local.EventBatchTask {
			continue
		}
		for tid, t := range local.BatchTasks([]engine.Event{ln.Event}) {
			if t.RunID != "" {
				b.task[t.RunID], b.last[tid] = tid, t.RunID
			}
			if r := t.Rerun; r != nil && r.RunID != "" {
				b.task[r.RunID] = tid
				b.rerunAs[t.RunID] = r.RunID
				b.landed[t.RunID], b.landed[r.RunID] = false, r.Landed
			}
		}
	}
	return b
}
