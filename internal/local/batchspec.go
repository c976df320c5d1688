package local

import "github.com/jlgcli/jlgcli/internal/batch"

// BatchSpec is what a batch runs with, kept in its run's meta.json so that
// resume runs it again the same way.
type BatchSpec struct {
	// Repo is the repository; BaseBranch the branch every task starts from
	// (as it is once its dependencies have merged) and merges into.
	Repo       string `json:"repo"`
	BaseBranch string `json:"baseBranch"`
	// Jobs is how many tasks run at once.
	Jobs int `json:"jobs"`
	// FailFast stops starting tasks after the first failure.
	FailFast bool `json:"failFast,omitempty"`
	// BudgetUSD bounds the cost of the whole batch; 0: none.
	BudgetUSD float64 `json:"budgetUsd,omitempty"`
	// Tasks are the sheets, in the order they were read.
	Tasks []BatchTask `json:"tasks"`
	// Issues, for a batch of a forge's issues (batch --issues), is where
	// they came from: each task claims its issue and tells it how it goes.
	Issues *IssueSource `json:"issues,omitempty"`
	// PR, for a batch whose tasks land through pull requests (batch --pr
	// --until), says how; nil: each task merges into BaseBranch here.
	PR *BatchPR `json:"pr,omitempty"`
}

// Budget is the batch's budget as its scheduler keeps it: the whole
// batch's and each task's own.
func (s BatchSpec) Budget() batch.Budget {
	b := batch.Budget{BudgetUSD: s.BudgetUSD, Tasks: map[string]float64{}}
	for _, t := range s.Tasks {
		b.Tasks[t.ID] = t.Spec.BudgetUSD
	}
	return b
}

// BatchTask is one sheet of a batch, resolved: its task and the settings it
// runs with (the batch's, overridden by its front matter).
type BatchTask struct {
	ID      string   `json:"id"`
	File    string   `json:"file"`
	Title   string   `json:"title"`
	Depends []string `json:"dependsOn"`
	// DependsFrom says where Depends came from: the front matter or the
	// sheet's dependency lines.
	DependsFrom string `json:"dependsFrom,omitempty"`
	// Prompt is the sheet's text without its front matter: the task.
	Prompt string `json:"prompt"`
	// Spec is what the task runs with; its worktree is made when it starts.
	Spec TaskSpec `json:"spec"`
	// Issue is the issue the task came from (batch --issues); nil for a
	// sheet's.
	Issue *TaskIssue `json:"issue,omitempty"`
}
