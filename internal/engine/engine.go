package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
	"github.com/jlgcli/jlgcli/internal/proc"
)

// Options are the resolved settings of one run.
type Options struct {
	// RunID names the run.
	RunID string
	// Prompt is the first prompt.
	Prompt string
	// Once makes a single call whose success is done, without completion
	// parsing (the `run` command).
	Once bool
	// Model, Dir and Env are passed to every call.
	Model string
	Dir   string
	Env   []string
	// MaxIterations bounds the number of calls (at least 1).
	MaxIterations int
	// Timeout bounds the whole run; each call gets the time that is left.
	Timeout time.Duration
	// Completion and Marker say how done is signalled.
	Completion completion.Mode
	Marker     string
	// NoProgressLimit stops the run after that many identical consecutive
	// replies; 0 disables the check.
	NoProgressLimit int
	// Observer is told of each iteration; nil: nobody.
	Observer Observer
	// Output receives the agent's raw standard output as it comes; nil: none.
	Output func(p []byte)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Observer follows a run as it goes.
type Observer interface {
	// IterationStarted is called before each call to the agent.
	IterationStarted(iteration, max int, started time.Time)
	// IterationDone is called after each call, once its entry is recorded.
	IterationDone(e Entry, r *Result)
}

const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// Run drives a through the loop and returns the result; it never panics on
// an agent's failure and always returns a Result whose ExitCode follows the
// contract.
func Run(ctx context.Context, a agent.Agent, o Options) (res Result) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	res = Result{Backend: a.Name(), RunID: o.RunID, Transcript: []Entry{}}
	defer func() { res.DurationMs = ms(now().Sub(start)) }()

	if s, details := availability(a.Check(ctx)); s != "" {
		res.stop(s, details)
		res.Text = details
		return res
	}

	maxIter := o.MaxIterations
	if o.Once || maxIter < 1 {
		maxIter = 1
	}
	deadline := start.Add(o.Timeout)
	prompt := o.Prompt
	prev, repeats := "", 0

	for i := 1; i <= maxIter; i++ {
		if ctx.Err() != nil {
			res.stop(StatusInterrupted, "interrupted before iteration "+fmt.Sprint(i))
			return res
		}
		began := now()
		if o.Timeout > 0 && !began.Before(deadline) {
			res.stop(StatusTimeout, fmt.Sprintf("global timeout of %s reached after %d iterations", o.Timeout, len(res.Transcript)))
			return res
		}
		if o.Observer != nil {
			o.Observer.IterationStarted(i, maxIter, began)
		}
		callCtx, cancel := ctx, context.CancelFunc(func() {})
		if o.Timeout > 0 {
			callCtx, cancel = context.WithDeadlineCause(ctx, time.Now().Add(deadline.Sub(began)),
				fmt.Errorf("global timeout of %s reached", o.Timeout))
		}
		resp, err := a.Run(callCtx, agent.Request{Prompt: prompt, Model: o.Model, Dir: o.Dir, Env: o.Env, Output: o.Output})
		cancel()
		if err != nil {
			s := StatusError
			if errors.Is(err, proc.ErrNotFound) {
				s = StatusBackendMissing
			} else if errors.Is(err, agent.ErrPromptTooLong) {
				s = StatusBackendUnsupported
			}
			res.stop(s, err.Error())
			return res
		}
		e := Entry{
			Iteration:    i,
			StartedAt:    began.Format(timestampLayout),
			Prompt:       prompt,
			Response:     resp.Text,
			DurationMs:   ms(now().Sub(began)),
			ExitCode:     resp.ExitCode,
			SessionID:    resp.SessionID,
			InputTokens:  resp.Usage.InputTokens,
			OutputTokens: resp.Usage.OutputTokens,
			CostUSD:      resp.Usage.CostUSD,
			Truncated:    resp.Truncated,
			Failure:      resp.Failure,
		}
		res.add(e, resp.Usage)
		if o.Observer != nil {
			o.Observer.IterationDone(e, &res)
		}

		if resp.Failure != nil || resp.ExitCode != 0 {
			failed(ctx, &res, resp, o.Timeout)
			return res
		}
		if o.Once {
			res.stop(StatusDone, "")
			return res
		}

		// No progress: checked after the entry is recorded, before the
		// completion is parsed (seed 000).
		if o.NoProgressLimit > 0 {
			if i > 1 && resp.Text == prev {
				repeats++
			} else {
				repeats = 1
			}
			prev = resp.Text
			if repeats >= o.NoProgressLimit {
				res.stop(StatusNoProgress, fmt.Sprintf("stopped after %d identical consecutive replies", repeats))
				return res
			}
		}

		v := completion.Parse(resp.Text, o.Completion, o.Marker)
		switch v.Status {
		case completion.Done:
			res.Summary = v.Summary
			res.stop(StatusDone, "")
			return res
		case completion.Invalid:
			res.stop(StatusInvalidJSON, v.Reason)
			return res
		}
		if v.Next != "" {
			prompt = v.Next
		}
	}
	res.stop(StatusMaxIterations, fmt.Sprintf("reached the limit of %d iterations without completion", maxIter))
	return res
}

// availability maps a failed Check to a status and its details; "" when the
// agent is available.
func availability(av agent.Availability) (Status, string) {
	switch av.Status {
	case agent.Missing:
		return StatusBackendMissing, av.Details
	case agent.Unauthenticated:
		return StatusBackendUnauthenticated, av.Details
	case agent.Unsupported:
		return StatusBackendUnsupported, av.Details
	}
	return "", ""
}

// failed ends res for a call that failed.
func failed(ctx context.Context, res *Result, resp agent.Response, timeout time.Duration) {
	f := resp.Failure
	if f == nil {
		f = &agent.Failure{Kind: agent.FailCrash, Message: fmt.Sprintf("the agent exited with status %d", resp.ExitCode)}
	}
	res.Failure = f
	switch f.Kind {
	case agent.FailTimeout:
		if ctx.Err() != nil {
			res.stop(StatusInterrupted, "interrupted during iteration "+fmt.Sprint(res.Iterations))
			return
		}
		res.stop(StatusTimeout, fmt.Sprintf("global timeout of %s reached during iteration %d; the agent was stopped", timeout, res.Iterations))
	case agent.FailAuth:
		res.stop(StatusBackendUnauthenticated, "the agent is not authenticated: "+f.Message)
	case agent.FailRateLimit:
		d := "rate limited: " + f.Message
		if !f.ResetAt.IsZero() {
			d += "; resets at " + f.ResetAt.Format(time.RFC3339)
		}
		res.stop(StatusRateLimited, d)
	default:
		res.stop(StatusError, fmt.Sprintf("the agent failed (%s): %s", f.Kind, f.Message))
		if resp.ExitCode != 0 {
			res.ExitCode = resp.ExitCode // passed through (seed 001)
		}
	}
}
