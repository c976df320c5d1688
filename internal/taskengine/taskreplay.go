package taskengine

import (
	"encoding/json"
	"fmt"

	"github.com/jlgcli/jlgcli/internal/engine"
)

// TaskJournal is what a task's journal holds: how it started, where it
// stands, and its last stop.
type TaskJournal struct {
	Start  TaskStart
	Resume Resume
	// Stop is the last stop recorded, nil when the task never stopped
	// (it is live, or was killed); a stop followed by a resume is cleared.
	Stop *engine.StopData
}

// Replay rebuilds a task from its journal's events.
func Replay(events []engine.Event) (TaskJournal, error) {
	var j TaskJournal
	for i, ev := range events {
		var err error
		switch ev.Type {
		case engine.EventStart:
			err = json.Unmarshal(ev.Data, &j.Start)
			j.Resume.State, j.Resume.Prior = j.Start.State, j.Start.Prior
		case engine.EventResume:
			// The state the resumed task went on from: a new turn of its
			// tier (Policy.Resumed) is made again, from the same tree, by
			// a second resume.
			j.Stop = nil
			if len(ev.Data) > 0 {
				var s TaskStart
				if err = json.Unmarshal(ev.Data, &s); err == nil {
					j.Resume.State = s.State
				}
			}
		case EventPlan:
			var p PlanData
			if err = json.Unmarshal(ev.Data, &p); err == nil {
				j.Resume.Planned, j.Resume.Plan, j.Resume.Planner = true, p.Steps, &p.Planner
				j.Resume.State = p.State
			}
		case EventAttempt:
			var a AttemptData
			if err = json.Unmarshal(ev.Data, &a); err == nil {
				j.Resume.Attempts = append(j.Resume.Attempts, a.Attempt)
				j.Resume.State = a.State
			}
		case engine.EventWait:
			var w TaskWait
			if err = json.Unmarshal(ev.Data, &w); err == nil {
				j.Resume.State.WaitedMs = w.State.WaitedMs
				j.Resume.State.Windows = w.State.Windows
			}
		case engine.EventStop:
			var s engine.StopData
			if err = json.Unmarshal(ev.Data, &s); err == nil {
				j.Stop = &s
				if s.DurationMs > j.Resume.State.ElapsedMs {
					j.Resume.State.ElapsedMs = s.DurationMs
				}
			}
		}
		if err != nil {
			return j, fmt.Errorf("journal event %d (%s): %w", i+1, ev.Type, err)
		}
	}
	return j, nil
}

// ResultOf rebuilds a task's result from its journal, as `task --json`
// printed it when the task stopped (without what the caller adds: Git). A
// task with no stop after its last attempt (live, or killed) has status
// running and exit code -1.
func ResultOf(runID string, events []engine.Event) (Result, error) {
	j, err := Replay(events)
	if err != nil {
		return Result{}, err
	}
	var plan []string
	if j.Resume.Planned {
		plan = j.Resume.Plan
	}
	return buildTaskResult(runID, j.Start.Task, j.Start.Tiers, j.Start.BudgetUSD, plan, j.Resume.Planner, j.Start.Prior,
		j.Resume.Attempts, j.Resume.State, j.Stop), nil
}
