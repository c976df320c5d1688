package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/store"
)

// State is what the loop carries from one iteration to the next: enough to
// continue a run exactly where it stopped. Every iteration event holds the
// State after it, so the last one is the state of the run.
type State struct {
	// Iterations is the number of recorded iterations.
	Iterations int `json:"iterations"`
	// ElapsedMs is the active time used against the global timeout: time
	// while jlgcli ran the loop, waits for a rate limit excepted.
	ElapsedMs millis.Duration `json:"elapsedMs"`
	// WaitedMs is the time spent waiting for rate limits, against MaxWait.
	WaitedMs millis.Duration `json:"waitedMs"`
	// Prompt is the prompt of the next iteration (the task, or json next).
	Prompt string `json:"prompt"`
	// Repeats counts identical consecutive replies (noProgressLimit).
	Repeats int `json:"repeats"`
	// SessionID is the agent's session, continued in session mode continue.
	SessionID string `json:"sessionId,omitempty"`
	// Feedback is what the next prompt must tell the agent: why its last
	// "done" was refused.
	Feedback string `json:"feedback,omitempty"`
	// Refused is the last refusal of done, cleared when a reply does not
	// claim done or done is accepted.
	Refused *Refusal `json:"refused,omitempty"`
	// SoftRefusals counts the soft refusals in a row (premature stop).
	SoftRefusals int `json:"softRefusals,omitempty"`
	// Unverified is set when the last reply claimed done and its
	// verification was cut short: resume verifies it before calling the
	// agent again.
	Unverified bool `json:"unverified,omitempty"`
	// Accepted is set by Replay when the last iteration's reply was
	// accepted as done: a run killed after that iteration was recorded and
	// before its stop was is done, and resume ends it so without calling
	// the agent. The iteration event's verdict holds it.
	Accepted bool `json:"-"`
	// Windows are the last known use of the subscription windows the
	// agent reported, for --window-limit and for show.
	Windows Windows `json:"windows,omitempty"`
}

// Refusal is a guard's refusal of a reply that claims done.
type Refusal struct {
	// Guard names the guard: "checks", "checklist", "premature-stop".
	Guard string `json:"guard"`
	// Details says in one line why.
	Details string `json:"details"`
	// Prompt tells the agent what to do about it (next iteration).
	Prompt string `json:"-"`
	// Soft marks a refusal that may be wrong (a phrase detector): after
	// MaxSoftRefusals of them in a row, done is accepted anyway, so a false
	// positive cannot spend every iteration of a finished task.
	Soft bool `json:"soft,omitempty"`
	// Report is the guard's full result (e.g. each check's outcome).
	Report json.RawMessage `json:"report,omitempty"`
}

// Event types written to the journal.
const (
	EventStart     = "start"
	EventIteration = "iteration"
	EventWait      = "rate-limit-wait"
	EventStop      = "stop"
	EventResume    = "resume"
)

// Event is one line of a run's journal, as the store keeps it; its Data is
// one of the engine's payloads (IterationData, AttemptData, ...).
type Event = store.Event

// IterationData is the payload of an iteration event: the transcript entry,
// the verdict on it, and the state after it.
type IterationData struct {
	Entry   Entry    `json:"entry"`
	Verdict string   `json:"verdict"`
	Refusal *Refusal `json:"refusal,omitempty"`
	State   State    `json:"state"`
}

// VerdictDone is the verdict on a reply accepted as done.
const VerdictDone = "done"

// WaitData is the payload of a rate-limit wait event.
type WaitData struct {
	Until   time.Time       `json:"until"`
	WaitMs  millis.Duration `json:"waitMs"`
	Message string          `json:"message"`
	// Window, when set, is the subscription window over --window-limit
	// that is waited for (no call was refused).
	Window *Window `json:"window,omitempty"`
	State  State   `json:"state"`
}

// StopData is the payload of a stop event: the result but its transcript,
// which the iteration events hold.
type StopData struct {
	Status     Status          `json:"status"`
	ExitCode   int             `json:"exitCode"`
	Details    string          `json:"details,omitempty"`
	Summary    string          `json:"summary,omitempty"`
	Text       string          `json:"text"`
	DurationMs millis.Duration `json:"durationMs"`
	Failure    *agent.Failure  `json:"failure,omitempty"`
	GateFailed bool            `json:"gateFailed,omitempty"`
}

// Checkpoint is the snapshot written after every iteration and at every
// heartbeat while a run is live: the progress the run index reads (its
// status is "running" while live, then the final status) and the state.
type Checkpoint struct {
	store.Progress
	RunID string `json:"runId"`
	State State  `json:"state"`
}

// StatusRunning is the status of a live run in its checkpoint.
const StatusRunning Status = "running"

// Journal keeps a run durable. Record must return only once the event is
// stored for good: an iteration exists once its event is recorded.
type Journal interface {
	Record(ev Event) error
	Checkpoint(cp Checkpoint) error
	// Output returns where the raw output of an iteration goes, or nil.
	Output(iteration int) io.WriteCloser
}

// Replay rebuilds a run from its journal's events: the state to resume
// from, the transcript so far, and the last stop, if any.
func Replay(events []Event) (State, []Entry, *StopData, error) {
	var (
		st         State
		transcript = []Entry{}
		stop       *StopData
	)
	for _, ev := range events {
		switch ev.Type {
		case EventIteration:
			var d IterationData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return st, nil, nil, fmt.Errorf("iteration %d event: %w", ev.Iteration, err)
			}
			if d.State.Iterations != len(transcript)+1 {
				return st, nil, nil, fmt.Errorf("iteration %d event follows %d iterations", d.State.Iterations, len(transcript))
			}
			d.Entry.Refusal = d.Refusal
			transcript = append(transcript, d.Entry)
			st, stop = d.State, nil
			st.Accepted = d.Verdict == VerdictDone
		case EventWait:
			var d WaitData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return st, nil, nil, fmt.Errorf("wait event: %w", err)
			}
			st, stop = d.State, nil
		case EventStop:
			var d StopData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return st, nil, nil, fmt.Errorf("stop event: %w", err)
			}
			stop = &d
		case EventResume:
			stop = nil
		}
	}
	return st, transcript, stop, nil
}

// ResultOf rebuilds a run's result from its journal, as `loop --json`
// printed it when the run stopped. A run with no stop after its last
// iteration (live, or killed) has status running and exit code -1.
func ResultOf(runID, backend string, events []Event) (Result, error) {
	st, transcript, stop, err := Replay(events)
	if err != nil {
		return Result{}, err
	}
	res := Result{RunID: runID, Backend: backend, Transcript: []Entry{}}
	for _, e := range transcript {
		res.add(e, agent.Usage{InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, CostUSD: e.CostUSD, CostKnown: e.CostKnown})
	}
	res.DurationMs = st.ElapsedMs
	res.Windows = st.Windows
	if stop == nil {
		res.Status, res.ExitCode = StatusRunning, -1
		res.Details = NotStopped(st.Iterations, false, false)
		return res, nil
	}
	res.Status, res.ExitCode, res.Details, res.Summary = stop.Status, stop.ExitCode, stop.Details, stop.Summary
	res.Text, res.DurationMs, res.Failure, res.GateFailed = stop.Text, stop.DurationMs, stop.Failure, stop.GateFailed
	res.Windows = st.Windows
	return res, nil
}

// NotStopped is the details of a loop that has not stopped after n
// iterations: live when a process runs it, killed (resume continues it)
// when none does; known false when its reader cannot tell (a journal read
// alone), which says both.
func NotStopped(n int, live, known bool) string {
	after := plural.N(n, "iteration")
	switch {
	case known && live:
		return "live: the run has not stopped after " + after
	case known:
		return "killed after " + after + ": no process runs it; resume continues it"
	}
	return "the run has not stopped after " + after + ": it is live, or it was killed and can be resumed"
}
