package runner

import (
	"encoding/json"
	"strings"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/store"
)

// WithBatchMerge is res, the result of task run run, with what the batch
// that started it (run.Meta.Parent) did with its branch: a batch runs its
// tasks with --merge none and merges each itself, so the task's own result
// says "skipped" for a branch the batch merged. When the batch merged it,
// Git.Merge says so (merged into the batch's base branch, the commit, by
// which batch) and gives no command to merge it again. When the batch
// merged a second run of the task instead, it says that. Otherwise, or
// when the batch's journal cannot be read, res is returned as it is.
func WithBatchMerge(run *store.Run, res engine.TaskResult) engine.TaskResult {
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
		if t.Merge == nil || t.Merge.Status != batch.MergeMerged {
			continue
		}
		// A second run (from the base as it had become) landed instead of
		// the first: the batch's details name it.
		second := strings.Contains(t.Merge.Details, "("+run.ID+")")
		if t.RunID != run.ID && !second {
			continue
		}
		g := *res.Git
		m := *g.Merge
		switch {
		case t.RunID == run.ID && strings.Contains(t.Merge.Details, "merged from a second run"):
			m.Command = ""
			m.Reason = "batch " + b.ID + " merged a second run of the task instead: " + t.Merge.Details
		default:
			m.Status, m.Commit, m.Command = git.MergeMerged, t.Merge.Commit, ""
			m.Into = spec.BaseBranch
			m.Reason = "by batch " + b.ID
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
