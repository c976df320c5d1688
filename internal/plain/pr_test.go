package plain

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// A pull-request run in a few lines: its end and why, each round, the
// checks at its head; what the forge wrote (a check's name, the reason
// quoting a reviewer) cannot move the cursor or colour the terminal, and
// a cost no agent reported is unknown, not $0.
func TestPRSummary(t *testing.T) {
	res := local.PRResult{RunID: "r1", Number: 7, URL: "http://forge/pulls/7", Target: pull.Merged, Status: engine.StatusNeedsYou,
		Reason: "review thread by \x1b[2J\x1b[31mevil\x1b[0m", Head: "0123456789abcdef", Looks: 3,
		Rounds: []local.PRRound{{PRRoundEndData: local.PRRoundEndData{Round: 1, RunID: "t1", Status: "done", Pushed: "abcdef0123456789", Replied: 1}}},
		Checks: []forge.Check{{Name: "ci/\x1b]8;;http://x\x07test", State: forge.Failed}}}
	var out bytes.Buffer
	PRSummary(&out, res)
	s := out.String()
	if strings.ContainsRune(s, '\x1b') || strings.ContainsRune(s, '\x07') {
		t.Errorf("forge text reached the terminal raw:\n%q", s)
	}
	for _, want := range []string{"pull request #7", "until merged: needs-you", "round 1 (task t1): done, pushed abcdef0123, 1 thread answered", "cost unknown", "1 round"} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary lacks %q:\n%s", want, s)
		}
	}
}

// task --json --pr --until is one JSON document: the task's result and the
// pull request's, where a reader of stdout would find two.
func TestTaskPRResultIsOneJSONObject(t *testing.T) {
	var out bytes.Buffer
	task := taskengine.Result{RunID: "t1", Status: engine.StatusDone}
	pr := local.PRResult{RunID: "p1", Number: 7, Status: engine.StatusNeedsYou, ExitCode: 8, Reason: "no check"}
	if err := TaskPRResult(&out, nopSay{}, true, task, pr); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Task struct {
			RunID string `json:"runId"`
		} `json:"task"`
		PullRequest struct {
			Number   int    `json:"number"`
			Status   string `json:"status"`
			ExitCode int    `json:"exitCode"`
		} `json:"pullRequest"`
	}
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Errorf("more than one JSON document on stdout")
	}
	if got.Task.RunID != "t1" || got.PullRequest.Number != 7 || got.PullRequest.Status != "needs-you" || got.PullRequest.ExitCode != 8 {
		t.Errorf("decoded %+v", got)
	}
}

type nopSay struct{}

func (nopSay) Progress(string) {}
func (nopSay) Notice(string)   {}
func (nopSay) Hint(string)     {}
