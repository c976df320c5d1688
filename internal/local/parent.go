package local

import (
	"encoding/json"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// WithBatchMerge is res, the result of task run run, with what the batch
// that started it (run.Meta.Parent) did with its branch: a batch runs its
// tasks with --merge none and merges each itself, so the task's own result
// says "skipped" for a branch the batch merged. When the batch merged it,
// Git.Merge says so (merged into the batch's base branch, the commit, by
// which batch) and gives no command to merge it again. When the batch ran
// the task again because this run's change could not land, it says so:
// "re-run as Z after a conflict with p, which landed". Otherwise, or when
// the batch's journal cannot be read, res is returned as it is.
func WithBatchMerge(run *store.Run, res taskengine.Result) taskengine.Result {
	if run.Meta.Parent == "" || res.Git == nil || res.Git.Merge == nil || res.Git.Merge.Status != git.MergeSkipped {
		return res
	}
	b, err := store.Open(run.Root(), run.Meta.Parent)
	if err != nil {
		return res
	}
	defer b.Close()
	events, _, err := Events(b)
	if err != nil {
		return res
	}
	var spec BatchSpec
	_ = json.Unmarshal(b.Meta.Options, &spec)
	for _, t := range replayBatch(events) {
		rr := t.Rerun
		first := t.RunID == run.ID
		second := rr != nil && rr.RunID == run.ID
		if !first && !second {
			continue
		}
		g := *res.Git
		m := *g.Merge
		landed := t.Merge != nil && t.Merge.Status == batch.MergeMerged
		switch {
		case first && rr != nil:
			// The batch made a second run of the task: this run's branch
			// is kept, and merging it now would undo nothing but repeat.
			m.Reason = "batch " + b.ID + ": " + rr.As()
			if rr.Landed {
				m.Command = ""
			}
			res.RerunAs = &taskengine.RerunAs{RunID: rr.RunID, Landed: rr.Landed, Said: rr.As()}
		case landed && (second || rr == nil):
			m.Status, m.Commit, m.Command = git.MergeMerged, t.Merge.Commit, ""
			m.Into = spec.BaseBranch
			m.Reason = "by batch " + b.ID
			if second {
				m.Reason += ", as the " + rr.Of(t.RunID)
			}
		case second:
			m.Reason = "batch " + b.ID + ": the " + rr.Of(t.RunID) + "; not merged"
		default:
			return res
		}
		g.Merge = &m
		res.Git = &g
		return res
	}
	return res
}

// BatchTasks is every task's last state in a batch's journal, with the run
// of each task that started one (journaled as soon as it exists, before
// the scheduler hears of it).
func BatchTasks(events []engine.Event) map[string]batch.TaskResult { return replayBatch(events) }
