package conformance

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	ms "github.com/jlgcli/jlgcli/internal/modelserver"
)

// TestTaskClaudeReview runs `jlgcli task --review` with the real Claude Code
// as developer and as reviewer (another model): the first change passes the
// checks but the reviewer asks for a change (and writes a file of its own,
// which is put back); the second is approved and lands.
func TestTaskClaudeReview(t *testing.T) {
	if testing.Short() && os.Getenv(ms.RequireAgentsEnv) != "1" {
		t.Skip("the conformance tests run the real agent CLIs; skipped with -short")
	}
	b := backendNamed(t, "claude")
	ms.RequireAgent(t, b.name)
	t.Parallel()

	const changes = `Nearly. {"verdict": "changes", "summary": "needs a note", "comments": [{"file": "NOTES.md", "line": 1, "text": "Write the word checked into NOTES.md."}]}`
	var script ms.Script
	script = append(script, attemptTurns("42", "Set the answer to 42.")...)
	script = append(script, ms.WriteFile("REVIEWER.txt", "mine\n").WithUsage(ms.U(100, 10)), ms.Text(changes, ms.U(300, 30)))
	script = append(script, ms.WriteFile("NOTES.md", "checked\n").WithUsage(ms.U(150, 15)), ms.Text("Wrote the note.", ms.U(200, 20)))
	script = append(script, ms.Text(`{"verdict": "approve", "summary": "good"}`, ms.U(300, 30)))

	o := jlgcli(t, b, call{
		guard: taskGuard,
		setup: func(t *testing.T, work string) {
			cfg := "[[tiers]]\nname = \"dev\"\nbackend = \"claude\"\nmodel = \"" + fastModel + "\"\n\n[[checks]]\nname = \"answer\"\nrun = [\"sh\", \"check.sh\"]\n"
			initialRepo(t, work, map[string]string{"jlgcli.toml": cfg, "check.sh": checkScript, "answer.txt": "base\n"})
		},
		script: func(string) ms.Script { return script },
		args: func(string) []string {
			return []string{"task", "--json", "--review", "claude:" + smartModel, "--timeout", taskTimeout, "--stall-timeout", "60s", taskPrompt}
		},
	})
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	var r struct {
		Attempts []struct {
			Action string `json:"action"`
			Commit string `json:"commit"`
			Prompt string `json:"prompt"`
			Review *struct {
				Verdict   string   `json:"verdict"`
				Model     string   `json:"model"`
				Discarded []string `json:"discarded"`
				CostUSD   float64  `json:"costUsd"`
				CostKnown bool     `json:"costKnown"`
				Comments  []struct {
					File string `json:"file"`
					Text string `json:"text"`
				} `json:"comments"`
			} `json:"review"`
		} `json:"attempts"`
		Review *struct {
			Attempts int     `json:"attempts"`
			Passed   int     `json:"passed"`
			CostUSD  float64 `json:"costUsd"`
		} `json:"review"`
		CostUSD float64 `json:"costUsd"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("stdout is not one task result object: %v", err)
	}
	if o.srv.Remaining() != 0 {
		t.Errorf("%d scripted turns left", o.srv.Remaining())
	}
	// The reviewer's requests are made with its own model.
	turns := o.srv.TurnRequests()
	for i, q := range turns {
		want := fastModel
		if i == 3 || i == 4 || i == 7 {
			want = smartModel
		}
		if got, _ := q.JSON["model"].(string); got != want {
			t.Errorf("model request %d: model %q, want %q", i, got, want)
		}
	}
	if len(turns) > 3 && !strings.Contains(turns[3].LastUserText(), "You are the reviewer") {
		t.Errorf("the reviewer's first request does not hold the review prompt:\n%s", clip(turns[3].LastUserText(), 2000))
	}
	if len(r.Attempts) != 2 {
		t.Fatalf("%d attempts, want 2", len(r.Attempts))
	}
	a1, a2 := r.Attempts[0], r.Attempts[1]
	if a1.Review == nil || a1.Review.Verdict != "changes" || a1.Action != "retry" || a1.Commit != "" || a1.Review.Model != smartModel {
		t.Fatalf("attempt 1: action %q commit %q review %+v; want retry, no commit, changes by %s", a1.Action, a1.Commit, a1.Review, smartModel)
	}
	if len(a1.Review.Comments) != 1 || a1.Review.Comments[0].File != "NOTES.md" || strings.Join(a1.Review.Discarded, ",") != "REVIEWER.txt" {
		t.Errorf("attempt 1's review: comments %+v discarded %v", a1.Review.Comments, a1.Review.Discarded)
	}
	if !a1.Review.CostKnown || a1.Review.CostUSD <= 0 {
		t.Errorf("attempt 1's review cost %v known %v: want the cost claude reported", a1.Review.CostUSD, a1.Review.CostKnown)
	}
	if !strings.Contains(a2.Prompt, "NOTES.md:1: Write the word checked into NOTES.md.") {
		t.Errorf("attempt 2's prompt does not hold the review:\n%s", clip(a2.Prompt, 3000))
	}
	if a2.Review == nil || a2.Review.Verdict != "approve" || a2.Action != "pass" || a2.Commit == "" {
		t.Errorf("attempt 2: action %q commit %q review %+v", a2.Action, a2.Commit, a2.Review)
	}
	if r.Review == nil || r.Review.Attempts != 2 || r.Review.Passed != 1 || r.CostUSD <= r.Review.CostUSD {
		t.Errorf("review summary %+v, task cost %v", r.Review, r.CostUSD)
	}
	if got := gitOut(t, o.work, "show", "main:NOTES.md"); got != "checked\n" {
		t.Errorf("main's NOTES.md is %q", got)
	}
	if _, err := os.Stat(o.work + "/REVIEWER.txt"); err == nil {
		t.Errorf("the reviewer's file landed")
	}
	if got := gitOut(t, o.work, "ls-tree", "-r", "--name-only", "main"); strings.Contains(got, "REVIEWER") {
		t.Errorf("main holds the reviewer's file:\n%s", got)
	}
}
