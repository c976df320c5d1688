package conformance

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ms "github.com/jlgcli/jlgcli/internal/modelserver"
)

// The task scenario with the real Claude Code: `jlgcli task` on a git
// repository whose check passes only when answer.txt holds 42, with two
// claude tiers of different models:
//
//   - tier fast (claude-haiku-4-5, 2 attempts) writes 41 with Claude's own
//     Read and Write tools, twice: the same diff twice is a loop found at
//     its 2nd attempt, and its attempts are spent: escalate;
//   - tier smart (claude-sonnet-4-5) starts from the base again, with fast's
//     failure in its prompt, and writes 42: pass, commit on the task branch,
//     squash-merge into main.
//
// Claude's Write refuses to overwrite a file it has not read in the session
// ("File has not been read yet"), so each attempt is three model requests:
// Read, Write, then the final text. With
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 Claude Code sends no side
// request that offers tools (only HEAD / at start-up), so the script is a
// plain sequence of 3×3 turns; the model of each request is asserted to be
// the one of the tier whose turn it is.

const (
	taskPrompt = "Make the answer 42"
	fastModel  = "claude-haiku-4-5"
	smartModel = "claude-sonnet-4-5"
	failText   = "FAIL: the answer is 41, want 42"
	// taskTimeout bounds the whole task (--timeout); taskGuard the jlgcli
	// call (the hang guard). The task takes a few seconds.
	taskTimeout = "90s"
	taskGuard   = 2 * time.Minute
)

const taskConfig = `[[tiers]]
name = "fast"
backend = "claude"
model = "` + fastModel + `"
attempts = 2

[[tiers]]
name = "smart"
backend = "claude"
model = "` + smartModel + `"

[[checks]]
name = "answer"
run = ["sh", "check.sh"]
`

const checkScript = `v=$(cat answer.txt)
[ "$v" = 42 ] && exit 0
echo "FAIL: the answer is $v, want 42"
exit 1
`

// attemptTurns is what the model does in one attempt: read answer.txt,
// write value into it, then say so (editTurns).
func attemptTurns(value, reply string) []ms.Turn { return editTurns("answer.txt", value+"\n", reply) }

// editTurns is one attempt that reads file, writes content into it (both
// relative to the CLI's working directory, the task's worktree, whose path
// is only known once the task started), then says reply. Each attempt
// reports the same usage: 450 tokens in, 45 out.
func editTurns(file, content, reply string) []ms.Turn {
	return []ms.Turn{
		ms.Call("Read", map[string]any{"file_path": file}).WithUsage(ms.U(100, 10)),
		ms.WriteFile(file, content).WithUsage(ms.U(150, 15)),
		ms.Text(reply, ms.U(200, 20)),
	}
}

// initialRepo writes files into work and commits them as the first commit
// of branch main: the user's repository a task starts from.
func initialRepo(t *testing.T, work string, files map[string]string) {
	writeFiles(t, work, files)
	gitRun(t, work, "init", "-q", "-b", "main")
	gitRun(t, work, "add", "-A")
	gitRun(t, work, "commit", "-q", "-m", "initial")
}

const turnsPerAttempt = 3

// taskResult is the part of `jlgcli task --json`'s object the test reads.
type taskResult struct {
	Status     string  `json:"status"`
	ExitCode   int     `json:"exitCode"`
	RunID      string  `json:"runId"`
	Iterations int     `json:"iterations"`
	CostUSD    float64 `json:"costUsd"`
	CostKnown  bool    `json:"costKnown"`
	Attempts   []struct {
		Number        int     `json:"number"`
		Tier          string  `json:"tier"`
		InTier        int     `json:"inTier"`
		Model         string  `json:"model"`
		Action        string  `json:"action"`
		Prompt        string  `json:"prompt"`
		Response      string  `json:"response"`
		SessionID     string  `json:"sessionId"`
		InputTokens   int64   `json:"inputTokens"`
		OutputTokens  int64   `json:"outputTokens"`
		CostUSD       float64 `json:"costUsd"`
		CostEstimated bool    `json:"costEstimated"`
		CostKnown     bool    `json:"costKnown"`
		Commit        string  `json:"commit"`
		Gate          struct {
			Status string `json:"status"`
		} `json:"gate"`
		Detection *struct {
			Rule     string `json:"rule"`
			Attempts []int  `json:"attempts"`
		} `json:"detection"`
	} `json:"attempts"`
	Tiers []struct {
		Name     string `json:"name"`
		Model    string `json:"model"`
		Attempts int    `json:"attempts"`
		Outcome  string `json:"outcome"`
	} `json:"tiers"`
	Detections []struct {
		Rule   string `json:"rule"`
		Tier   string `json:"tier"`
		Action string `json:"action"`
	} `json:"detections"`
	Git *struct {
		Branch  string `json:"branch"`
		Removed bool   `json:"removed"`
		Refs    string `json:"refs"`
		Merge   *struct {
			Status string `json:"status"`
			Into   string `json:"into"`
			Commit string `json:"commit"`
		} `json:"merge"`
	} `json:"git"`
}

// TestTaskClaudeEscalate runs `jlgcli task` through two claude tiers: a loop
// in the first, escalation, success in the second, squash-merge.
func TestTaskClaudeEscalate(t *testing.T) {
	if testing.Short() && os.Getenv(ms.RequireAgentsEnv) != "1" {
		t.Skip("the conformance tests run the real agent CLIs; skipped with -short")
	}
	b := backendNamed(t, "claude")
	ms.RequireAgent(t, b.name)
	t.Parallel()

	var script ms.Script
	script = append(script, attemptTurns("41", "I set the answer to 41.")...)
	script = append(script, attemptTurns("41", "Set it to 41 again.")...)
	script = append(script, attemptTurns("42", "Fixed: the answer is 42.")...)

	o := jlgcli(t, b, call{
		guard: taskGuard,
		setup: func(t *testing.T, work string) {
			initialRepo(t, work, map[string]string{"jlgcli.toml": taskConfig, "check.sh": checkScript, "answer.txt": "base\n"})
		},
		script: func(string) ms.Script { return script },
		args: func(string) []string {
			return []string{"task", "--json", "--timeout", taskTimeout, "--stall-timeout", "60s", taskPrompt}
		},
	})
	var r taskResult
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("stdout is not one task result object: %v", err)
	}
	o.wantExit(t, 0)
	o.wantStatus(t, "done")

	// The model requests: three per attempt, each attempt's with its tier's
	// model, every scripted turn played, none refused.
	turns := o.srv.TurnRequests()
	if len(turns) != 3*turnsPerAttempt || o.srv.Remaining() != 0 {
		t.Errorf("%d model requests, %d turns left; want %d and 0", len(turns), o.srv.Remaining(), 3*turnsPerAttempt)
	}
	for i, q := range turns {
		want := fastModel
		if i >= 2*turnsPerAttempt {
			want = smartModel
		}
		if got, _ := q.JSON["model"].(string); got != want {
			t.Errorf("model request %d (attempt %d): model %q, want %q", i, i/turnsPerAttempt+1, got, want)
		}
		if q.Error != "" {
			t.Errorf("model request %d: %s", i, q.Error)
		}
	}
	for _, q := range o.srv.Requests() {
		if q.Aux && q.Protocol != ms.NoProtocol {
			t.Logf("auxiliary %s request (model %v): not a turn", q.Protocol, q.JSON["model"])
		}
	}
	// The tool results went back: each Write succeeded.
	for i := 2; i < len(turns); i += turnsPerAttempt {
		if res := lastToolResult(turns[i]); !strings.Contains(res, "updated successfully") && !strings.Contains(res, "created successfully") {
			t.Errorf("attempt %d: the Write's tool_result is %q, want a success", i/turnsPerAttempt+1, clip(res, 300))
		}
	}
	// Tier smart's first request holds tier fast's failure (the check's
	// output) and the hand-over.
	if len(turns) > 2*turnsPerAttempt {
		got := turns[2*turnsPerAttempt].LastUserText()
		for _, want := range []string{taskPrompt, failText, "You take over from tier fast"} {
			if !strings.Contains(got, want) {
				t.Errorf("tier smart's first model request does not hold %q; its prompt:\n%s", want, clip(got, 3000))
			}
		}
	}

	// The result object.
	if r.Status != "done" || r.ExitCode != 0 || r.Iterations != 3 || len(r.Attempts) != 3 {
		t.Fatalf("status %q exitCode %d iterations %d, %d attempts; want done 0 3 3", r.Status, r.ExitCode, r.Iterations, len(r.Attempts))
	}
	a1, a2, a3 := r.Attempts[0], r.Attempts[1], r.Attempts[2]
	if a1.Tier != "fast" || a1.Model != fastModel || a1.Action != "retry" || a1.Gate.Status != "fail" || a1.Detection != nil {
		t.Errorf("attempt 1: tier %q model %q action %q gate %q detection %v; want fast %s retry fail none", a1.Tier, a1.Model, a1.Action, a1.Gate.Status, a1.Detection, fastModel)
	}
	if !strings.Contains(a2.Prompt, failText) {
		t.Errorf("attempt 2's prompt does not hold attempt 1's failure %q", failText)
	}
	switch d := a2.Detection; {
	case d == nil:
		t.Errorf("attempt 2: no detection, want same-diff")
	case d.Rule != "same-diff" || len(d.Attempts) != 2 || d.Attempts[0] != 1 || d.Attempts[1] != 2:
		t.Errorf("attempt 2: detection %s %v, want same-diff [1 2]", d.Rule, d.Attempts)
	}
	if a2.Tier != "fast" || a2.InTier != 2 || a2.Action != "escalate" || a2.Gate.Status != "fail" {
		t.Errorf("attempt 2: tier %q inTier %d action %q gate %q; want fast 2 escalate fail", a2.Tier, a2.InTier, a2.Action, a2.Gate.Status)
	}
	if a3.Tier != "smart" || a3.InTier != 1 || a3.Model != smartModel || a3.Action != "pass" || a3.Gate.Status != "pass" || a3.Commit == "" {
		t.Errorf("attempt 3: tier %q inTier %d model %q action %q gate %q commit %q; want smart 1 %s pass pass, a commit", a3.Tier, a3.InTier, a3.Model, a3.Action, a3.Gate.Status, a3.Commit, smartModel)
	}
	if len(r.Detections) != 1 || r.Detections[0].Rule != "same-diff" || r.Detections[0].Tier != "fast" || r.Detections[0].Action != "escalate" {
		t.Errorf("detections %+v, want one same-diff of tier fast, escalate", r.Detections)
	}
	if len(r.Tiers) != 2 || r.Tiers[0].Outcome != "loop" || r.Tiers[0].Attempts != 2 || r.Tiers[1].Outcome != "passed" || r.Tiers[1].Attempts != 1 {
		t.Errorf("tiers %+v, want fast: 2 attempts, loop; smart: 1, passed", r.Tiers)
	}
	// Each attempt is one claude session with its own cost, priced by
	// Claude Code from the scripted usage: known, not estimated.
	for _, a := range r.Attempts {
		if !uuidRE.MatchString(a.SessionID) {
			t.Errorf("attempt %d: sessionId %q, want a claude session id", a.Number, a.SessionID)
		}
		if a.InputTokens != 450 || a.OutputTokens != 45 {
			t.Errorf("attempt %d: tokens in/out %d/%d, want 450/45 (the sum of its 3 turns)", a.Number, a.InputTokens, a.OutputTokens)
		}
		if !a.CostKnown || a.CostEstimated || a.CostUSD <= 0 {
			t.Errorf("attempt %d: costUsd %v costKnown %v costEstimated %v; want a positive cost claude reported", a.Number, a.CostUSD, a.CostKnown, a.CostEstimated)
		}
	}
	// Same usage, dearer model: claude priced the attempts by the model
	// jlgcli gave it.
	if a3.CostUSD <= a1.CostUSD {
		t.Errorf("tier smart's attempt cost $%v, tier fast's $%v for the same tokens: want %s dearer than %s", a3.CostUSD, a1.CostUSD, smartModel, fastModel)
	}
	if !r.CostKnown || r.CostUSD <= 0 {
		t.Errorf("task costUsd %v costKnown %v, want a known positive cost", r.CostUSD, r.CostKnown)
	}

	// git: main has one squash commit; the branch keeps the attempt's
	// commit; the user's tree holds 42 and is clean; the worktree is gone.
	g := r.Git
	if g == nil || g.Merge == nil {
		t.Fatalf("git %+v: want the merge's report", g)
	}
	if g.Merge.Status != "merged" || g.Merge.Into != "main" || !g.Removed {
		t.Errorf("git.merge %+v, removed %v; want merged into main, the worktree removed", *g.Merge, g.Removed)
	}
	work := o.work
	if got, want := gitOut(t, work, "log", "--format=%s", "main"), "feat: "+taskPrompt+"\ninitial\n"; got != want {
		t.Errorf("git log main:\n%s\nwant:\n%s", got, want)
	}
	if got := gitOut(t, work, "rev-parse", "main"); strings.TrimSpace(got) != g.Merge.Commit {
		t.Errorf("main is at %s, the merge reported %s", strings.TrimSpace(got), g.Merge.Commit)
	}
	// The attempt's number is the task's (its refs, show and the report say 3), not its rank in the tier.
	if got, want := gitOut(t, work, "log", "-1", "--format=%s", g.Branch), "feat: "+taskPrompt+" (tier smart, attempt 3)\n"; got != want {
		t.Errorf("the branch %s's last commit is %q, want %q", g.Branch, got, want)
	}
	if got := strings.TrimSpace(gitOut(t, work, "rev-parse", g.Branch)); got != a3.Commit {
		t.Errorf("the branch is at %s, attempt 3's commit is %s", got, a3.Commit)
	}
	// The snapshots: fast's 41 kept, smart started from the base.
	for ref, want := range map[string]string{"2-result": "41\n", "3": "base\n", "3-result": "42\n"} {
		if got := gitOut(t, work, "show", g.Refs+ref+":answer.txt"); got != want {
			t.Errorf("%s%s:answer.txt = %q, want %q", g.Refs, ref, got, want)
		}
	}
	if got, err := os.ReadFile(filepath.Join(work, "answer.txt")); err != nil || string(got) != "42\n" {
		t.Errorf("answer.txt in the user's tree = %q, %v; want \"42\\n\"", got, err)
	}
	if got := gitOut(t, work, "status", "--porcelain"); got != "" {
		t.Errorf("the user's tree is not clean:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(work, ".jlgcli", "worktrees", r.RunID)); !os.IsNotExist(err) {
		t.Errorf("the task's worktree is still there (%v)", err)
	}
}

// backendNamed is the backend of the conformance table named name.
func backendNamed(t *testing.T, name string) backend {
	t.Helper()
	for _, b := range backends {
		if b.name == name {
			return b
		}
	}
	t.Fatalf("no backend %q in the conformance table", name)
	return backend{}
}

// lastToolResult is the text of the last tool_result block of an Anthropic
// request.
func lastToolResult(q ms.Request) string {
	msgs, _ := q.JSON["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		parts, _ := m["content"].([]any)
		for j := len(parts) - 1; j >= 0; j-- {
			p, _ := parts[j].(map[string]any)
			if p["type"] != "tool_result" {
				continue
			}
			switch c := p["content"].(type) {
			case string:
				return c
			case []any:
				var s []string
				for _, x := range c {
					xm, _ := x.(map[string]any)
					if txt, _ := xm["text"].(string); txt != "" {
						s = append(s, txt)
					}
				}
				return strings.Join(s, "\n")
			}
		}
	}
	return ""
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitCmd is a git command of the test itself: without the user's or the
// system's configuration, with a fixed identity.
func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	return cmd
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := gitCmd(dir, args...).CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitCmd(dir, args...).Output()
	if err != nil {
		t.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestTaskClaudeWindowLimit runs `jlgcli task --window-limit 80` with Claude
// Code logged in as a subscriber: the model's answers in the first attempt
// say the 5-hour window is at 92% and resets in a few seconds; the second
// attempt waits for that reset before it starts, and passes. The wait is in
// the task's journal with its window.
func TestTaskClaudeWindowLimit(t *testing.T) {
	if testing.Short() && os.Getenv(ms.RequireAgentsEnv) != "1" {
		t.Skip("the conformance tests run the real agent CLIs; skipped with -short")
	}
	b := backendNamed(t, "claude")
	ms.RequireAgent(t, b.name)
	t.Parallel()

	config := "[[tiers]]\nname = \"only\"\nbackend = \"claude\"\nattempts = 2\n\n[[checks]]\nname = \"answer\"\nrun = [\"sh\", \"check.sh\"]\n"
	o := jlgcli(t, b, call{
		auth:  ms.AuthSubscription,
		guard: taskGuard,
		setup: func(t *testing.T, work string) {
			initialRepo(t, work, map[string]string{"jlgcli.toml": config, "check.sh": checkScript, "answer.txt": "base\n"})
		},
		script: func(string) ms.Script {
			now := time.Now()
			first := attemptTurns("41", "I set the answer to 41.")
			for i := range first {
				first[i] = first[i].WithWindows(ms.Window{Claim: "5h", Utilization: 0.92, ResetAt: now.Add(10 * time.Second), SurpassedThreshold: 0.75})
			}
			second := attemptTurns("42", "Fixed: the answer is 42.")
			for i := range second {
				second[i] = second[i].WithWindows(ms.Window{Claim: "5h", Utilization: 0.1, ResetAt: now.Add(5 * time.Hour), SurpassedThreshold: 0.75})
			}
			return append(ms.Script(first), second...)
		},
		args: func(string) []string {
			return []string{"task", "--json", "--timeout", taskTimeout, "--window-limit", "80", "--max-wait", "2m", taskPrompt}
		},
	})
	var r struct {
		taskResult
		Windows []window `json:"windows"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("stdout is not one task result object: %v", err)
	}
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	if len(r.Attempts) != 2 || r.Attempts[1].Action != "pass" {
		t.Fatalf("%d attempts; want 2, the second passing", len(r.Attempts))
	}
	if len(r.Windows) != 1 || r.Windows[0].Backend != "claude" || r.Windows[0].Kind != "5h" || r.Windows[0].Used != 0.1 {
		t.Errorf("windows %+v: want claude 5h at 10%%", r.Windows)
	}
	events, err := os.ReadFile(filepath.Join(o.work, ".jlgcli", "runs", r.RunID, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wait := strings.Index(string(events), `"type":"rate-limit-wait"`)
	second := strings.LastIndex(string(events), `"type":"attempt"`)
	switch {
	case wait < 0:
		t.Errorf("the journal holds no rate-limit-wait")
	case !strings.Contains(string(events[wait:]), `"window":{"backend":"claude","kind":"5h","used":0.92`):
		t.Errorf("the wait is not for the 5h window:\n%s", events[wait:])
	case wait > second:
		t.Errorf("the wait comes after the second attempt")
	}
}
