package local

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// EventHookFailed is the journal event of a hook that failed or did not
// answer in time (HookFailedData). Replays skip it, as they skip every
// type they do not know: a hook never changes a run.
const EventHookFailed = "hook-failed"

// HookFailedData is the payload of a hook-failed event.
type HookFailedData struct {
	Event string          `json:"event"`
	Hook  string          `json:"hook"`
	Error string          `json:"error"`
	Tries int             `json:"tries"`
	Ms    millis.Duration `json:"ms"`
}

// hookRun tells the hooks (Parts.Hooks) of one run's events: those its
// journal records (hookJournal), its end (ended), a batch's tasks'
// (taskEnded). Every event it sends carries the run's id and command.
type hookRun struct {
	d   *hooks.Dispatcher
	run *store.Run
}

// notify sends e, with the run's id, command, title and batch, to the
// hooks; the journal records each that failed. The channel is closed when
// every hook has answered, or given up at its time limit.
func (h hookRun) notify(e hooks.Event) <-chan struct{} {
	if h.d == nil || h.run == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	e.RunID, e.Command, e.Time = h.run.ID, h.run.Meta.Command, time.Now().UTC()
	if e.Title == "" {
		e.Title = title(h.run.Meta.Prompt)
	}
	if e.BatchID == "" {
		e.BatchID = h.run.Meta.Parent
	}
	run := h.run
	return h.d.Notify(e, func(a hooks.Answer) {
		data, _ := json.Marshal(HookFailedData{Event: a.Event, Hook: a.Name, Error: a.Error, Tries: a.Tries, Ms: a.Ms})
		_ = run.Append(engine.Event{Type: EventHookFailed, Time: time.Now(), Data: data}) // the run may be closed: the warning is said anyway
	})
}

// recorded tells the hooks of a journal event that is one of theirs: a
// run that starts or resumes, a wait for a rate limit, a task's attempt
// judged.
func (h hookRun) recorded(ev engine.Event) {
	if h.d == nil {
		return
	}
	kind := h.run.Meta.Command
	switch ev.Type {
	case engine.EventStart, engine.EventResume:
		verb := "started"
		if ev.Type == engine.EventResume {
			verb = "resumed"
		}
		h.notify(hooks.Event{Event: hooks.RunStarted, Status: store.Running,
			Text: fmt.Sprintf("%s %s %s: %s", kind, h.run.ID, verb, title(h.run.Meta.Prompt))})
	case engine.EventWait:
		var d engine.WaitData // a task's TaskWait has the same until and message
		if json.Unmarshal(ev.Data, &d) != nil {
			return
		}
		what := "a rate limit"
		if d.Window != nil {
			what = "a subscription window"
		}
		h.notify(hooks.Event{Event: hooks.RunWaiting, Status: store.Running, ResetAt: hooks.Time(d.Until.UTC()), Details: d.Message,
			Text: fmt.Sprintf("%s %s waits until %s for %s to reset: %s", kind, h.run.ID, d.Until.UTC().Format(time.RFC3339), what, oneLine(d.Message))})
	case EventPRRoundEnd:
		var d PRRoundEndData
		if json.Unmarshal(ev.Data, &d) != nil {
			return
		}
		text := fmt.Sprintf("pr %s: round %d (task %s) ended %s", h.run.ID, d.Round, d.RunID, d.Status)
		switch {
		case d.Pushed != "":
			text += ", pushed " + git.ShortSHA(d.Pushed)
		case d.Rejected:
			text += ", its push refused (the branch had moved)"
		}
		e := hooks.Event{Event: hooks.PRRound, Status: store.Running, Attempt: d.Round, Action: d.Status, Commit: d.Pushed, Details: d.Details, Text: text}
		if d.CostKnown {
			e.CostUSD = hooks.Float(d.CostUSD)
		}
		h.notify(e)
	case taskengine.EventAttempt:
		var d taskengine.AttemptData
		if json.Unmarshal(ev.Data, &d) != nil {
			return
		}
		a := d.Attempt
		e := hooks.Event{Event: hooks.TaskAttempt, Status: store.Running, Attempt: a.Number, Tier: a.Tier, Action: a.Action, Gate: a.Gate.Status,
			DurationMs: hooks.Millis(a.DurationMs),
			Text:       fmt.Sprintf("task %s: attempt %d (tier %s): gate %s, %s", h.run.ID, a.Number, a.Tier, orNone(a.Gate.Status), a.Action)}
		if a.CostKnown {
			e.CostUSD = hooks.Float(a.CostUSD)
		}
		h.notify(e)
		if a.Action == taskengine.ActionEscalate {
			e.Event = hooks.TaskEscalated
			e.Text = fmt.Sprintf("task %s: tier %s gave up after attempt %d; the next tier takes over", h.run.ID, a.Tier, a.Number)
			h.notify(e)
		}
	}
}

// ended tells the hooks that the run ended as e says (its status, exit
// code, cost, duration and details set), and that it needs a person when
// reason is not "". It waits until they have answered (each within its
// time limit), so that a process that ends with the run does not cut
// them; the run's result is made already.
func (h hookRun) ended(e hooks.Event, reason string) {
	if h.d == nil {
		return
	}
	e.Event = hooks.RunEnded
	e.Text = fmt.Sprintf("%s %s ended %s (exit %d): %s", h.run.Meta.Command, h.run.ID, e.Status, *e.ExitCode, title(h.run.Meta.Prompt))
	if d := oneLine(e.Details); d != "" {
		e.Text += " — " + d
	}
	done := []<-chan struct{}{h.notify(e)}
	if reason != "" {
		e.Event, e.Reason = hooks.RunNeedsAttention, reason
		e.Text = fmt.Sprintf("%s %s needs you: %s", h.run.Meta.Command, h.run.ID, reason)
		done = append(done, h.notify(e))
	}
	for _, c := range done {
		<-c
	}
}

// loopEnded tells the hooks of a loop's end.
func (h hookRun) loopEnded(res engine.Result) {
	e := hooks.Event{Status: string(res.Status), ExitCode: hooks.Int(res.ExitCode), Details: res.Details, DurationMs: hooks.Millis(res.DurationMs)}
	if res.CostKnown {
		e.CostUSD = hooks.Float(res.CostUSD)
	}
	h.ended(e, attention(res.Status, ""))
}

// taskEnded tells the hooks of a task's end, with its branch and the
// commit it landed as (or its work in progress).
func (h hookRun) taskEnded(res taskengine.Result) {
	e := hooks.Event{Status: string(res.Status), ExitCode: hooks.Int(res.ExitCode), Details: res.Details, DurationMs: hooks.Millis(res.DurationMs)}
	if res.CostKnown {
		e.CostUSD = hooks.Float(res.CostUSD)
	}
	refused := ""
	if g := res.Git; g != nil {
		e.Branch, e.Commit = g.Branch, g.WIP
		if m := g.Merge; m != nil {
			if m.Commit != "" {
				e.Commit = m.Commit
			}
			if m.Status == git.MergeRefused {
				refused = "its landing was refused: " + oneLine(m.Reason)
			}
		}
	}
	h.ended(e, attention(res.Status, refused))
}

// batchEnded tells the hooks of a batch's end.
func (h hookRun) batchEnded(s batch.Summary) {
	e := hooks.Event{Status: s.Status, ExitCode: hooks.Int(s.ExitCode), Details: s.Details, DurationMs: hooks.Millis(s.DurationMs)}
	if s.CostKnown {
		e.CostUSD = hooks.Float(s.CostUSD)
	}
	h.ended(e, attention(engine.Status(s.Status), ""))
}

// batchTask tells the hooks that a task of the batch ended: its run ended
// in a way that stops it, it was merged, its merge failed, or it is
// blocked. A task that needs a person is said so too.
func (h hookRun) batchTask(e batch.Event) {
	if h.d == nil {
		return
	}
	t := e.Task
	switch {
	case e.Kind == batch.EventMerged, e.Kind == batch.EventBlocked:
	case e.Kind == batch.EventFinished && t.Status != batch.StatusUnmerged && t.Status != batch.StatusRunning:
	default:
		return
	}
	ev := hooks.Event{Event: hooks.BatchTaskEnded, BatchID: h.run.ID, TaskID: t.ID, Status: string(t.Status), ExitCode: hooks.Int(t.ExitCode),
		Details: firstOf(t.Reason, t.Details), DurationMs: hooks.Millis(t.DurationMs)}
	if t.CostKnown {
		ev.CostUSD = hooks.Float(t.CostUSD)
	}
	ev.Text = fmt.Sprintf("batch %s: task %s %s", h.run.ID, t.ID, t.Status)
	if t.RunID != "" {
		ev.Text += " (run " + t.RunID + ")"
	}
	if d := oneLine(ev.Details); d != "" {
		ev.Text += " — " + d
	}
	h.notify(ev)
	reason := ""
	switch t.Status {
	case batch.StatusMergeConflict:
		reason = "task " + t.ID + " conflicts with work merged since: merge its branch by hand, or change its sheet and resume the batch"
	case batch.StatusMergeFailed:
		reason = "task " + t.ID + " passed its checks but was not merged: " + oneLine(firstOf(t.Reason, t.Details))
	default:
		if r := attention(engine.Status(t.Status), ""); r != "" {
			reason = "task " + t.ID + ": " + r
		}
	}
	if reason != "" {
		ev.Event, ev.Reason = hooks.RunNeedsAttention, reason
		ev.Text = fmt.Sprintf("batch %s needs you: %s", h.run.ID, reason)
		h.notify(ev)
	}
}

// attention says why a run that ended with status needs a person, ""
// when it does not; refused is why its landing was refused.
func attention(status engine.Status, refused string) string {
	switch {
	case status == engine.StatusBudgetExceeded:
		return "its budget is spent: raise it and resume"
	case status == engine.StatusBackendUnauthenticated:
		return "its agent CLI is not logged in or has no valid key"
	case status == engine.StatusBackendMissing:
		return "its agent CLI is not installed"
	case refused != "":
		return refused
	}
	return ""
}

// title is the first line of a prompt, cut to 80 characters.
func title(prompt string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if r := []rune(l); len(r) > 80 {
		l = string(r[:79]) + "…"
	}
	return l
}

// oneLine is s on one line, cut to 200 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// RunHooks tell the hooks of a run that another process runs: a run on
// Temporal, which the jlgcli that submitted it (or resumes it) follows.
// They get the events of a run made here from what the follower sees: its
// start, each attempt judged, each wait for a rate limit, its end.
type RunHooks struct{ h hookRun }

// Any reports whether there are hooks to tell.
func (r RunHooks) Any() bool { return r.h.d != nil && r.h.run != nil }

// Resumed says that the run was started again (a resume).
func (r RunHooks) Resumed() {
	if r.h.run != nil {
		r.h.recorded(engine.Event{Type: engine.EventResume})
	}
}

// Attempt says that the task's attempt a was judged (task.attempt, and
// task.escalated when its tier gave up).
func (r RunHooks) Attempt(a taskengine.Attempt) {
	if r.h.run != nil {
		data, _ := json.Marshal(taskengine.AttemptData{Attempt: a})
		r.h.recorded(engine.Event{Type: taskengine.EventAttempt, Data: data})
	}
}

// Waiting says that the run waits for a rate limit to reset: until, with
// the agent's message.
func (r RunHooks) Waiting(until time.Time, message string) {
	if r.h.run != nil {
		data, _ := json.Marshal(engine.WaitData{Until: until, Message: message})
		r.h.recorded(engine.Event{Type: engine.EventWait, Data: data})
	}
}

// HooksOf are the hooks of p (none when p has none, or run is nil) for
// run.
func HooksOf(p Parts, run *store.Run) RunHooks { return RunHooks{hookRun{d: p.Hooks, run: run}} }

// Started says that the run started.
func (r RunHooks) Started() {
	if r.h.run != nil {
		r.h.recorded(engine.Event{Type: engine.EventStart})
	}
}

// TaskEnded says that the task ended with res; BatchEnded that the batch
// ended with s. Both wait for the hooks, as a run here does.
func (r RunHooks) TaskEnded(res taskengine.Result) {
	if r.h.run != nil {
		r.h.taskEnded(res)
	}
}

// PREnded says that the pull-request run ended with res.
func (r RunHooks) PREnded(res PRResult) {
	if r.h.run != nil {
		r.h.prEnded(res)
	}
}

func (r RunHooks) BatchEnded(s batch.Summary) {
	if r.h.run != nil {
		r.h.batchEnded(s)
	}
}
