// Package guard holds the engine's guards of "done": the premature-stop
// detector, the checklist and the verification checks, each refusing a reply
// that claims done with the reason and the prompt that tells the agent what
// to do about it.
package guard

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// Premature refuses a done that announces more work. Its refusals are soft:
// a phrase may be a false positive, so the engine lets done through after
// engine.MaxSoftRefusals of them in a row (a count kept in the run's state,
// across resume).
type Premature struct {
	Detector detect.Premature
}

// Check implements engine.Guard.
func (p *Premature) Check(_ context.Context, reply string) *engine.Refusal {
	f, ok := p.Detector.Check(reply)
	if !ok {
		return nil
	}
	return &engine.Refusal{
		Soft:    true,
		Guard:   "premature-stop",
		Details: fmt.Sprintf("the reply claims done but announces more work (%q)", f.Phrase),
		Prompt:  detect.ContinuePrompt(f),
		Report:  mustJSON(f),
	}
}

// Checklist refuses done while a file has unchecked items.
type Checklist struct {
	File string
}

// Check implements engine.Guard. A checklist that cannot be read refuses:
// an agent does not finish by deleting its checklist.
func (c *Checklist) Check(context.Context, string) *engine.Refusal {
	items, err := gate.Unchecked(c.File)
	if err != nil {
		return &engine.Refusal{Guard: "checklist", Details: err.Error(),
			Prompt: fmt.Sprintf("The checklist %s could not be read (%v). Restore it and complete its items before you say you are done.", c.File, err)}
	}
	if len(items) == 0 {
		return nil
	}
	return &engine.Refusal{
		Guard:   "checklist",
		Details: fmt.Sprintf("%d unchecked item(s) in %s", len(items), c.File),
		Prompt:  gate.ChecklistPrompt(c.File, items),
		Report:  mustJSON(items),
	}
}

// Checks runs the verification commands and refuses done when one fails
// (unless it failed the same way in the baseline).
type Checks struct {
	Dir      string
	Env      []string
	Checks   []gate.Check
	Baseline *gate.Result
	// Box is the sandbox the checks run in; nil: none.
	Box *sandbox.Box
	// Last is the last verdict.
	Last *gate.Verdict
}

// Check implements engine.Guard.
func (c *Checks) Check(ctx context.Context, _ string) *engine.Refusal {
	res := gate.RunIn(ctx, c.Box, c.Dir, c.Env, c.Checks)
	v := gate.Judge(&res, c.Baseline)
	c.Last = &v
	if v.Passed {
		return nil
	}
	return &engine.Refusal{Guard: "checks", Details: v.Summary(), Prompt: gate.FailurePrompt(v), Report: mustJSON(v)}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// Note implements engine.Noter: when the checks passed only because failures
// were tolerated as in the baseline, it says so.
func (c *Checks) Note() string {
	if c.Last == nil || !c.Last.Passed {
		return ""
	}
	return c.Last.Summary()
}
