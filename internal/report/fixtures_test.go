package report

import (
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// The results the golden files are made of, after the seed's example flow:
// a task that fails twice on the cheap tier, loops, and passes on the next.

var t0 = time.Date(2026, 11, 22, 4, 15, 0, 0, time.UTC)

const (
	base   = "4f1c2a9e7b3d5f6a8c0e1b2d3f4a5b6c7d8e9f00"
	wip    = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b"
	commit = "c0ffee1234567890abcdef1234567890abcdef12"
	merged = "feedface00112233445566778899aabbccddeeff"
)

func failing(recommend string, failures []gate.TestFailure, imports ...string) gate.Report {
	return gate.Report{Status: gate.StatusFail, TestFailures: failures, ImportErrors: imports, Confidence: 1,
		Recommendation: recommend, Counts: gate.Counts{Run: 12, Passed: 12 - len(failures), Failed: len(failures)}}
}

func attempt(n, tierIndex, inTier int, tier, backend, model string, cost float64, g gate.Report, action string) taskengine.Attempt {
	return taskengine.Attempt{Number: n, Tier: tier, TierIndex: tierIndex, InTier: inTier, Backend: backend, Model: model,
		StartedAt: t0.Add(time.Duration(n-1) * 40 * time.Second), DurationMs: 31000 + millis.Duration(n)*1000,
		Prompt: "p", Response: "r", InputTokens: 1000 * int64(n), OutputTokens: 200 * int64(n), CostUSD: cost, CostKnown: true,
		Start: base, Result: base, Gate: g, Action: action,
		Change: taskengine.Change{Hash: "h", Files: []git.FileChange{{Path: "cortex/api/endpoints.py", Status: "M", Added: 12 + n, Deleted: 2}}}}
}

var rateLimitFailure = gate.TestFailure{Test: "test_rate_limit_exceeded",
	Error: "AssertionError: expected 429, got 200 (took 0.12s)", File: "tests/test_api.py", Line: 42}

// successResult: done on tier 2 after a same-error loop on tier 1, with a
// flaky test, merged.
func successResult() taskengine.Result {
	a1 := attempt(1, 0, 1, "fast", "opencode", "deepseek-v3", 0.0011,
		failing(gate.RecommendFixRequired, nil, "ModuleNotFoundError: No module named 'ratelimit'"), taskengine.ActionRetry)
	a2 := attempt(2, 0, 2, "fast", "opencode", "deepseek-v3", 0.0012,
		failing(gate.RecommendFixRequired, []gate.TestFailure{rateLimitFailure}), taskengine.ActionRetry)
	same := rateLimitFailure
	same.Error = "AssertionError: expected 429, got 200 (took 0.31s)" // the same, once normalized
	a3 := attempt(3, 0, 3, "fast", "opencode", "deepseek-v3", 0.0013,
		failing(gate.RecommendFixRequired, []gate.TestFailure{same}), taskengine.ActionEscalate)
	// The rule's details as the engine makes them name the failed checks'
	// fingerprints: the report shows the words, never the hash.
	det := &detect.Detection{Rule: detect.RuleSameError, Attempts: []int{2, 3},
		Details: "attempts 2 and 3 failed the gate the same way: pytest_-q=v3:0b24c0ffee0b24c0ffee0b24c0ffee00"}
	a3.Detection = det
	a4 := attempt(4, 1, 1, "smart", "claude", "claude-sonnet-4-5", 0.0114, gate.Report{
		Status: gate.StatusWarning, Confidence: 0.8, Recommendation: gate.RecommendPassToCommit,
		Counts: gate.Counts{Run: 13, Passed: 13}, Flaky: []string{"tests/test_api.py::test_burst"},
		Warnings: []string{"tests/test_api.py::test_burst failed, then passed on a rerun"}}, taskengine.ActionPass)
	a4.Commit = commit
	a4.Change.Files = append(a4.Change.Files, git.FileChange{Path: "tests/test_api.py", Status: "M", Added: 20, Deleted: 0})
	a4.Change.Diff = "diff --git a/cortex/api/endpoints.py b/cortex/api/endpoints.py\n" +
		"--- a/cortex/api/endpoints.py\n+++ b/cortex/api/endpoints.py\n@@ -1,3 +1,5 @@\n" +
		"+from cortex.api.limits import rate_limit\n \n+@rate_limit(per_minute=60)\n def list_items():\n"
	g := a4.Gate
	return taskengine.Result{
		ExitCode: 0, Status: engine.StatusDone, Text: "done", Backend: "opencode", RunID: "20261122T041500Z-3fa91c07",
		Task: "Add rate limiting to API endpoints", Iterations: 4, DurationMs: 161000,
		CostUSD: 0.015, CostKnown: true, BudgetUSD: 1, InputTokens: 10000, OutputTokens: 2000,
		Tiers: []taskengine.TierSummary{
			{Name: "fast", Backend: "opencode", Model: "deepseek-v3", Attempts: 3, CostUSD: 0.0036, Outcome: "loop"},
			{Name: "smart", Backend: "claude", Model: "claude-sonnet-4-5", Attempts: 1, CostUSD: 0.0114, Passed: 1, Outcome: "passed"},
			{Name: "best", Backend: "claude", Model: "claude-opus-4", Outcome: "unused"},
		},
		Attempts:   []taskengine.Attempt{a1, a2, a3, a4},
		Detections: []taskengine.Detection{{Detection: *det, Tier: "fast", Action: taskengine.ActionEscalate}},
		Gate:       &g,
		Flaky:      []string{"tests/test_api.py::test_burst"},
		Commits:    []string{commit},
		Git: &taskengine.GitInfo{Mode: "branch", Repo: "/src/cortex", Worktree: "/src/cortex/.jlgcli/worktrees/20261122T041500Z-3fa91c07",
			Removed: true, Branch: "jlgcli/add-rate-limiting-to-api-endpoints", Base: base, BaseBranch: "main",
			Refs:  "refs/jlgcli/20261122T041500Z-3fa91c07/",
			Merge: &taskengine.MergeInfo{Status: "merged", Into: "main", Commit: merged}},
	}
}

// failedResult: no progress on the last tier, partial work kept in a WIP
// commit, the merge left to the user. Its diff holds a Markdown fence and
// its errors HTML.
func failedResult() taskengine.Result {
	broken := gate.Report{Status: gate.StatusFail, Confidence: 1, Recommendation: gate.RecommendEscalateTier,
		SyntaxErrors: []string{"cortex/render.py:10:5: invalid syntax <br>", "cortex/render.py:11:1: unexpected indent",
			"cortex/render.py:12:1: unexpected indent"}}
	a1 := attempt(1, 0, 1, "fast", "opencode", "deepseek-v3", 0.002, broken, taskengine.ActionEscalate)
	a1.Change.Files = nil
	a1.Change.Empty = true
	cycle := []gate.TestFailure{{Test: "test_render_table", Error: "AssertionError: '<td>' != '<th>'", File: "tests/test_render.py", Line: 7}}
	a2 := attempt(2, 1, 1, "smart", "claude", "claude-sonnet-4-5", 0.021, failing(gate.RecommendFixRequired, cycle), taskengine.ActionRetry)
	a3 := attempt(3, 1, 2, "smart", "claude", "claude-sonnet-4-5", 0.019, failing(gate.RecommendFixRequired, cycle), taskengine.ActionNudge)
	a3.Detection = &detect.Detection{Rule: detect.RuleSameDiff, Attempts: []int{2, 3}, Details: "attempts 2 and 3 made the same change"}
	a4 := attempt(4, 1, 3, "smart", "claude", "claude-sonnet-4-5", 0.0, gate.Report{}, taskengine.ActionStop)
	a4.Nudged = true
	a4.CostKnown = false
	a4.ExitCode = 1
	a4.Failure = &agent.Failure{Kind: agent.FailAPI, Message: "API Error: 529 overloaded"}
	a4.Change.Diff = "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,2 +1,6 @@\n" +
		" # cortex\n+\n+```python\n+render_table(rows)\n+```\n"
	a4.Change.Files = append(a4.Change.Files, git.FileChange{Path: "README.md", Status: "M", Added: 4}, git.FileChange{Path: "logo.png", Status: "A", Added: -1, Deleted: -1})
	for _, a := range []*taskengine.Attempt{&a1, &a2, &a3, &a4} {
		a.Step = 1
	}
	last := a3.Gate
	return taskengine.Result{
		ExitCode: 5, Status: engine.StatusNoProgress, Backend: "opencode", RunID: "20261123T090000Z-0badc0de",
		Task:       "Render the report table as <table> in HTML\nand keep the Markdown output unchanged.",
		Iterations: 4, DurationMs: 412500, Details: "a loop was detected on the last tier (same-diff) and nothing was left to try",
		CostUSD: 0.042, CostKnown: true, CostEstimated: true, BudgetUSD: 0.5, InputTokens: 52000, OutputTokens: 6100,
		Plan: []string{"Add a render_table helper", "Use it in the HTML output"},
		Tiers: []taskengine.TierSummary{
			{Name: "fast", Backend: "opencode", Model: "deepseek-v3", Attempts: 1, CostUSD: 0.002, Outcome: "spent"},
			{Name: "smart", Backend: "claude", Model: "claude-sonnet-4-5", Attempts: 3, CostUSD: 0.04, CostEstimated: true, Outcome: "loop"},
		},
		Attempts: []taskengine.Attempt{a1, a2, a3, a4},
		Detections: []taskengine.Detection{
			{Detection: *a3.Detection, Step: 1, Tier: "smart", Action: taskengine.ActionNudge},
		},
		Gate:    &last,
		Flaky:   []string{},
		Commits: []string{},
		Git: &taskengine.GitInfo{Mode: "branch", Repo: "/src/cortex", Worktree: "/src/cortex/.jlgcli/worktrees/20261123T090000Z-0badc0de",
			Branch: "jlgcli/render-the-report-table", Base: base, BaseBranch: "main", Refs: "refs/jlgcli/20261123T090000Z-0badc0de/",
			WIP: wip, DirtyLeftOut: true,
			Merge: &taskengine.MergeInfo{Status: "refused", Reason: "the task failed: its work is partial",
				Command: "git checkout main && git merge --squash jlgcli/render-the-report-table && git commit"},
			Warnings: []string{"push refused: no remote named origin"}},
	}
}

// noAttemptResult: stopped before the first attempt, the backend missing.
func noAttemptResult() taskengine.Result {
	return taskengine.Result{
		ExitCode: 2, Status: engine.StatusBackendMissing, Backend: "opencode", RunID: "20261124T100000Z-00000001",
		Task: "Add rate limiting to API endpoints", Details: "command not found: opencode (install it: npm install -g opencode-ai)",
		BudgetUSD: 1,
		Tiers: []taskengine.TierSummary{
			{Name: "fast", Backend: "opencode", Model: "deepseek-v3", Outcome: "unused"},
			{Name: "smart", Backend: "claude", Model: "claude-sonnet-4-5", Outcome: "unused"},
		},
		Failure: &agent.Failure{Kind: "missing", Message: "command not found: opencode"},
	}
}
