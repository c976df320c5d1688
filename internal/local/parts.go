package local

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Reporter is how a run talks to the user on the side of its result.
type Reporter interface {
	// Progress is a message a quiet run leaves out ("running 3 checks").
	Progress(msg string)
	// Notice is a message every run prints (how to resume a stopped run).
	Notice(msg string)
	// Warn is something that went wrong without stopping the run.
	Warn(msg string)
}

// Parts are what a run is given by its caller.
type Parts struct {
	// Environ is the environment agents start from; nil: jlgcli's own.
	Environ []string
	// Getenv reads jlgcli's environment (the embeddings' API key); nil:
	// os.Getenv.
	Getenv func(string) string
	// EnvValue gives the values of a run's recorded environment names
	// when its settings are read back (resume, landing); nil: jlgcli's
	// environment only.
	EnvValue EnvValue
	// Say reports messages and warnings; nil: nobody.
	Say Reporter
	// TaskObserver follows a task's attempts; LoopObserver a loop's
	// iterations; nil: nobody.
	TaskObserver taskengine.Observer
	LoopObserver engine.Observer
	// Inbox gives what people wrote to a task while it runs (the comments
	// of the issue it came from); nil: nothing.
	Inbox taskengine.Inbox
	// Hooks are told of the run's events (its start, end, waits, a
	// task's attempts, a batch's tasks); nil: nobody.
	Hooks *hooks.Dispatcher
	// Windows are the subscription windows known, shared by the runs
	// that hold to a window limit (a batch's tasks); nil: a run with a
	// limit starts from what the runs kept in its state root reported.
	Windows *engine.WindowBook
}

// windowBook is the book of windows a run with limits holds to: p's, else
// one made of what the index's runs last reported; nil without limits.
func (p Parts) windowBook(limits engine.WindowLimits, j journal) *engine.WindowBook {
	if len(limits) == 0 {
		return nil
	}
	if p.Windows != nil {
		return p.Windows
	}
	return engine.NewWindowBook(KnownWindows(j.idx))
}

// KnownWindows is the last known use of every backend's subscription
// windows, across the runs of the index (none when idx is nil or cannot be
// read).
func KnownWindows(idx *store.Index) engine.Windows {
	if idx == nil {
		return nil
	}
	rows, err := idx.List(store.Filter{})
	if err != nil {
		return nil
	}
	return WindowsOf(rows)
}

// WindowsOf is the last known use of every backend's subscription windows
// across rows: for each backend and window, the newest report.
func WindowsOf(rows []store.RunRow) engine.Windows {
	var ws engine.Windows
	for _, r := range rows {
		ws = ws.Merge(r.Windows)
	}
	return ws
}

func (p Parts) progress(format string, a ...any) {
	if p.Say != nil {
		p.Say.Progress(fmt.Sprintf(format, a...))
	}
}

func (p Parts) notice(format string, a ...any) {
	if p.Say != nil {
		p.Say.Notice(fmt.Sprintf(format, a...))
	}
}

func (p Parts) warn(format string, a ...any) {
	if p.Say != nil {
		p.Say.Warn(fmt.Sprintf(format, a...))
	}
}

func (p Parts) getenv(k string) string {
	if p.Getenv == nil {
		return os.Getenv(k)
	}
	return p.Getenv(k)
}

// environ is the environment agents start from.
func (p Parts) environ() []string {
	if p.Environ == nil {
		return os.Environ()
	}
	return p.Environ
}

// Registry is the backends commands, over the environment agents start from
// plus extraEnv, so that a PATH given there is where the agent is looked
// for too.
// untrusted are the names of the variables a project's file set
// (sandbox.Config.ProjectEnv).
func (p Parts) Registry(commands map[string]agent.CommandSpec, extraEnv, untrusted []string) *agent.Registry {
	env := append(slices.Clip(p.environ()), extraEnv...)
	var explicit []string
	for _, kv := range extraEnv {
		name, _, _ := strings.Cut(kv, "=")
		explicit = append(explicit, name)
	}
	return &agent.Registry{Commands: commands, Env: env, Explicit: explicit, Untrusted: untrusted}
}

// RunTag is the environment entry that marks a run's agents and checks, so
// that resume finds those a killed jlgcli left.
func RunTag(id string) string { return "JLGCLI_RUN_ID=" + id }

// Resumable tells the statuses after which resume has something to do.
func Resumable(s engine.Status) bool {
	switch s {
	case engine.StatusInterrupted, engine.StatusTimeout, engine.StatusRateLimited, engine.StatusMaxIterations, engine.StatusNoProgress:
		return true
	}
	return false
}
