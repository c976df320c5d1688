package runs

import (
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/store"
)

// NeedsYou reports whether a run with status word (its status, or what a
// front end reads it as: "killed", "waiting" for a subscription window)
// of kind (its command) needs someone: any end but done or a stop asked
// for (interrupted), a run killed or waiting; not a run that goes on or
// waits for its turn. A batch that ended incomplete does not: its tasks
// that need someone do (TaskNeedsYou). The board and jlgcli top both ask
// this.
func NeedsYou(word, kind string) bool {
	switch word {
	case store.Running, "done", "interrupted", "pending", "unmerged", "":
		return false
	case "incomplete":
		return kind != "batch"
	}
	return true
}

// TaskNeedsYou reports whether a batch's task with status needs someone: it
// failed, or it is blocked by a task that failed.
func TaskNeedsYou(status string) bool {
	s := batch.Status(status)
	return s.Failed() || s == batch.StatusBlocked
}
