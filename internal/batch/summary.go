package batch

import (
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
)

// Summary is what became of a batch run, as `jlgcli batch --json` prints it
// and its report.json keeps it.
type Summary struct {
	RunID      string          `json:"runId"`
	Status     string          `json:"status"`
	ExitCode   int             `json:"exitCode"`
	Details    string          `json:"details,omitempty"`
	StartedAt  time.Time       `json:"startedAt"`
	DurationMs millis.Duration `json:"durationMs"`
	CostUSD    float64         `json:"costUsd"`
	CostKnown  bool            `json:"costKnown"`
	BaseBranch string          `json:"baseBranch"`
	Jobs       int             `json:"jobs"`
	Tasks      []TaskSummary   `json:"tasks"`
}

// TaskSummary is what became of one sheet of a batch run.
type TaskSummary struct {
	ID        string   `json:"id"`
	File      string   `json:"file"`
	Title     string   `json:"title"`
	Status    string   `json:"status"`
	ExitCode  int      `json:"exitCode"`
	RunID     *string  `json:"runId"`
	DependsOn []string `json:"dependsOn"`
	Level     int      `json:"level"`
	Attempts  int      `json:"attempts"`
	// Tiers say how each tier that made an attempt ended ("fast:spent").
	Tiers      []string        `json:"tiers,omitempty"`
	CostUSD    float64         `json:"costUsd"`
	CostKnown  bool            `json:"costKnown"`
	StartedAt  *time.Time      `json:"startedAt"`
	DurationMs millis.Duration `json:"durationMs"`
	// Commit is the merge commit on the base branch; Branch the task's
	// (its second run's when that one landed).
	Commit  *string `json:"commit"`
	Branch  string  `json:"branch"`
	Details string  `json:"details"`
	// Rerun is the task's second run, when its first run's change could
	// not land (RunID is the first run); Attempts, CostUSD and DurationMs
	// above count both runs.
	Rerun *Rerun `json:"rerun,omitempty"`
}
