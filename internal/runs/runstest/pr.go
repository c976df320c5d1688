// Package runstest writes runs into a state root as their runners write
// them (store.Create, the journal's events, the checkpoint), for the tests
// of what reads them: the list, show, report, stats, the board.
package runstest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// The runs of PR.
const (
	TaskID   = "20261125T100000Z-7a5c0001"
	PRID     = "20261125T100500Z-9e000042"
	Round1ID = "20261125T100600Z-40c00001"
	Round2ID = "20261125T101000Z-40c00002"
	// PRNumber is the pull request's number; PRURL its address.
	PRNumber = 42
	PRURL    = "https://forge.example/me/app/pulls/42"
	// The costs of the task that opened the pull request and of its two
	// rounds.
	TaskCost, Round1Cost, Round2Cost = 0.30, 0.25, 0.15
	// Head1 is the head the pull request was opened with, Head2 the one
	// round 1 pushed.
	Head1 = "1111111111111111111111111111111111111111"
	Head2 = "2222222222222222222222222222222222222222"
)

// PRWorld is a pull request worked until merged: the task run that
// opened it (TaskID), the pull-request run (PRID), its round 1 (done: it
// pushed Head2 and answered a thread) and its round 2, which ends
// max-iterations, after which the run gives up (needs-you) and comments.
// Text is written wherever the forge's words go (the title, a check's
// name, a blocker, the reason).
type PRWorld struct {
	t    testing.TB
	Root string
	Text string
	run  *store.Run
	at   time.Time
}

// PR writes the world under root up to round 2 begun (journaled before
// its task run exists, as the runner does); with live the pull-request run and round 2's task run
// stay locked (Live) until End, else End is called at once.
func PR(t testing.TB, root, text string, live bool) *PRWorld {
	t.Helper()
	w := &PRWorld{t: t, Root: root, Text: text, at: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	task(t, root, TaskID, store.Meta{Command: "task", Prompt: "Add rate limiting", StartedAt: w.at}, TaskCost, engine.StatusDone, "")
	spec := local.PRSpec{Number: PRNumber, Remote: "origin", Policy: pull.Policy{Target: pull.Merged}, From: TaskID}
	opts, _ := json.Marshal(spec)
	run, err := store.Create(root, PRID, store.Meta{Command: "pr", Backend: "fake", Prompt: "Add rate limiting", Options: opts, Parent: TaskID,
		StartedAt: w.at.Add(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	w.run = run
	fail := forge.Check{Name: "ci " + text, State: forge.Failed, URL: "https://ci.example/build/7", Source: forge.SourceStatus}
	w.append(5*time.Minute, local.EventPRStart, local.PRStartData{Number: PRNumber, URL: PRURL, Title: "Rate limits " + text, Branch: "jlgcli/rate-limits",
		Base: "main", Forge: forge.Gitea, Repo: "me/app", Self: "jlgcli-bot", Target: pull.Merged})
	w.append(6*time.Minute, local.EventPRLook, local.PRLookData{Action: pull.Action{Do: pull.Attempt, Head: Head1}, Memory: pull.Memory{Head: Head1, Rounds: 1},
		Checks: []forge.Check{fail}})
	w.append(6*time.Minute, local.EventPRRound, local.PRRoundData{Round: 1, RunID: Round1ID, Head: Head1, Blockers: []string{"check " + fail.Name + " failed"}})
	task(t, root, Round1ID, store.Meta{Command: "task", Prompt: "Add rate limiting", Parent: PRID, StartedAt: w.at.Add(6 * time.Minute)},
		Round1Cost, engine.StatusDone, "")
	w.append(9*time.Minute, local.EventPRRoundEnd, local.PRRoundEndData{Round: 1, RunID: Round1ID, Status: "done", Pushed: Head2, Replied: 1, CostUSD: Round1Cost})
	pending := fail
	pending.State = forge.Pending
	w.append(10*time.Minute, local.EventPRLook, local.PRLookData{Action: pull.Action{Do: pull.Attempt, Head: Head2}, Memory: pull.Memory{Head: Head2, Rounds: 2},
		Checks: []forge.Check{fail, {Name: "lint", State: forge.Success}}})
	w.append(10*time.Minute, local.EventPRRound, local.PRRoundData{Round: 2, RunID: Round2ID, Head: Head2,
		Blockers: []string{"thread on api.go:12 by reviewer: " + text}})
	w.progress(store.Running, Round1Cost)
	if !live {
		w.End()
	}
	return w
}

// End ends round 2 (max-iterations, its task run written whole) and the
// run: it gives up, needs-you, and comments on the pull request.
func (w *PRWorld) End() {
	w.t.Helper()
	task(w.t, w.Root, Round2ID, store.Meta{Command: "task", Prompt: "Add rate limiting", Parent: PRID, StartedAt: w.at.Add(10 * time.Minute)},
		Round2Cost, engine.StatusMaxIterations, "the checks failed after 1 attempt")
	w.append(12*time.Minute, local.EventPRRoundEnd, local.PRRoundEndData{Round: 2, RunID: Round2ID, Status: string(engine.StatusMaxIterations),
		CostUSD: Round2Cost, Details: "the checks failed after 1 attempt"})
	w.append(12*time.Minute, local.EventPREnd, local.PREndData{Status: engine.StatusNeedsYou, ExitCode: engine.StatusNeedsYou.ExitCode(),
		Reason: "round 2 (task " + Round2ID + ") ended max-iterations: " + w.Text, Comment: PRURL + "#issuecomment-9"})
	w.progress(string(engine.StatusNeedsYou), Round1Cost+Round2Cost)
	w.run.Close()
}

func (w *PRWorld) append(after time.Duration, typ string, data any) {
	w.t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.run.Append(engine.Event{Type: typ, Time: w.at.Add(after), Data: b}); err != nil {
		w.t.Fatal(err)
	}
}

// progress writes the pull-request run's checkpoint as its runner does.
func (w *PRWorld) progress(status string, spent float64) {
	w.t.Helper()
	if err := w.run.WriteCheckpoint(store.Progress{Status: status, CostUSD: spent, CostKnown: spent > 0, Heartbeat: time.Now().UTC(),
		DurationMs: 7 * 60000}); err != nil {
		w.t.Fatal(err)
	}
}

// task writes task run id, one attempt that cost usd, ended with status
// (details: why).
func task(t testing.TB, root, id string, meta store.Meta, usd float64, status engine.Status, details string) {
	t.Helper()
	run, err := store.Create(root, id, meta)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	at := meta.StartedAt
	tiers := []taskengine.Tier{{Name: "fast", Backend: "fake", Attempts: 1}}
	a := taskengine.Attempt{Number: 1, Tier: "fast", Backend: "fake", Prompt: meta.Prompt, Response: "done", CostUSD: usd, CostKnown: true,
		StartedAt: at, DurationMs: 60000}
	a.Gate.Status = "pass"
	if status != engine.StatusDone {
		a.Gate.Status = "fail"
	}
	st := taskengine.State{Attempts: 1}
	for _, ev := range []struct {
		typ  string
		data any
	}{
		{engine.EventStart, taskengine.TaskStart{Task: meta.Prompt, Tiers: tiers}},
		{taskengine.EventAttempt, taskengine.AttemptData{Attempt: a, State: st}},
		{engine.EventStop, engine.StopData{Status: status, ExitCode: status.ExitCode(), Details: details, DurationMs: 60000}},
	} {
		b, _ := json.Marshal(ev.data)
		if err := run.Append(engine.Event{Type: ev.typ, Time: at, Data: b}); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Minute)
	}
	if err := run.WriteCheckpoint(store.Progress{Status: string(status), Iterations: 1, CostUSD: usd, CostKnown: true, DurationMs: 60000, Backend: "fake",
		Tiers: []store.TierStat{{Name: "fast", Attempts: 1, CostUSD: usd, CostKnown: true, Passed: map[bool]int{true: 1}[status == engine.StatusDone]}}}); err != nil {
		t.Fatal(err)
	}
}
