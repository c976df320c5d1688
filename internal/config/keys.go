package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/taskengine"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/pull"
)

// Key is one configuration key, described once: its name in files, its
// flag and environment variable, the flag's type, help and default on each
// command that has it, how a flag's or the environment's text is read into
// a layer, how a layer's value is checked and applied, and how `jlgcli
// config` prints the resolved value. Keys, the flag bindings (Bind), the
// environment layer, Value and the hints are made from the table.
type Key struct {
	// Name is the key in files and in `jlgcli config`; "" for a flag that
	// is no key of the files (attempts).
	Name string
	// Flag and Short name its flag ("": none); Env its variable ("": none).
	Flag, Short, Env string
	// Kind is the flag's type as help shows it: string, int, bool,
	// duration, float64 or stringArray.
	Kind string
	// Usage and Default are the flag's help and default as help shows it.
	Usage, Default string
	// Commands are the commands that have the flag; an entry's FlagUse
	// replaces Usage or Default where it sets them.
	Commands map[string]FlagUse
	// Lined: an error in the key's value names its line in the file (the
	// keys of the task command do).
	Lined bool

	parse func(l *Layer, text string) error
	apply func(c *Config, l *Layer) (set bool, err error)
	print func(c *Config) string
}

// FlagUse is how one command shows a key's flag, where it differs.
type FlagUse struct{ Usage, Default string }

// The commands of the flags.
const (
	cmdRun, cmdLoop, cmdTask, cmdBatch, cmdConfig, cmdWorker = "run", "loop", "task", "batch", "config", "worker"
	// cmdPR works a pull request as a task's rounds: the keys of how a
	// task develops are its too.
	cmdPR = "pr"
	// The commands that act on a run kept here: those of a run on
	// Temporal dial its server.
	cmdShow, cmdResume, cmdReport = "show", "resume", "report"
)

// on lists commands that show the flag as the key says.
func on(cmds ...string) map[string]FlagUse {
	m := map[string]FlagUse{}
	for _, c := range cmds {
		m[c] = FlagUse{}
	}
	return m
}

// with adds commands that show the flag their own way.
func with(m map[string]FlagUse, use FlagUse, cmds ...string) map[string]FlagUse {
	for _, c := range cmds {
		m[c] = use
	}
	return m
}

var (
	everyCmd   = []string{cmdRun, cmdLoop, cmdTask, cmdBatch, cmdPR, cmdConfig}
	loopCmds   = []string{cmdLoop, cmdConfig}
	taskCmds   = []string{cmdTask, cmdBatch, cmdPR}
	taskConfig = []string{cmdTask, cmdBatch, cmdConfig}
)

// dialing are the commands that have a flag of how to connect to the
// Temporal server: those that submit, the worker, config, and those that
// act on a run kept here, which by default connect as the run was
// submitted (their usage says so).
func dialing(key, usage string) map[string]FlagUse {
	return with(on(cmdTask, cmdBatch, cmdPR, cmdWorker, cmdConfig),
		FlagUse{Usage: usage + " (default: as the run was submitted; config: " + key + ")"}, cmdShow, cmdResume, cmdReport)
}

// temporalPath reads a file of the [temporal] table, made absolute (flags
// are relative to the current directory); "" is none.
func temporalPath(field func(*TemporalLayer) **string) func(*Layer, string) error {
	return func(l *Layer, s string) error {
		if s == "" {
			*field(l.temporal()) = &s
			return nil
		}
		return absPath(func(l *Layer) **string { return field(l.temporal()) })(l, s)
	}
}

// keyTable is every key, in the order `jlgcli config` prints them.
var keyTable = []Key{
	{Name: "backend", Flag: "backend", Short: "b", Env: "JLGCLI_BACKEND", Kind: "string", Commands: on(everyCmd...),
		Usage: "agent backend: " + strings.Join(agent.Builtins, ", ") + ", or a [backends.NAME] from config (config: backend)",
		parse: text(func(l *Layer) **string { return &l.Backend }),
		apply: scalar(func(l *Layer) *string { return l.Backend }, func(c *Config, v string) error { c.Backend = strings.TrimSpace(v); return nil }),
		print: func(c *Config) string {
			if c.Backend == "" {
				return "(first installed of " + strings.Join(agent.Builtins, ", ") + ")"
			}
			return c.Backend
		}},
	{Name: "model", Flag: "model", Kind: "string", Commands: on(everyCmd...), Usage: "model passed to the agent CLI (config: model)",
		parse: text(func(l *Layer) **string { return &l.Model }),
		apply: scalar(func(l *Layer) *string { return l.Model }, func(c *Config, v string) error { c.Model = v; return nil }),
		print: func(c *Config) string { return c.Model }},
	{Name: "maxIterations", Flag: "max-iterations", Env: "JLGCLI_MAX_ITERATIONS", Kind: "int", Default: strconv.Itoa(DefaultMaxIterations),
		Commands: on(loopCmds...), Usage: "stop after this many agent calls, exit 4 (config: maxIterations)",
		parse: integer(func(l *Layer) **int { return &l.MaxIterations }),
		apply: scalar(func(l *Layer) *int { return l.MaxIterations }, func(c *Config, v int) error {
			if v < 1 {
				return fmt.Errorf("must be at least 1, not %d", v)
			}
			c.MaxIterations = v
			return nil
		}),
		print: func(c *Config) string { return strconv.Itoa(c.MaxIterations) }},
	{Name: "timeoutMs", Flag: "timeout", Env: "JLGCLI_TIMEOUT", Kind: "duration", Default: DefaultTimeout.String(),
		Usage: "global time limit as a Go duration, e.g. 90s, 5m (config: timeoutMs)",
		Commands: with(on(cmdRun, cmdLoop, cmdConfig), FlagUse{Default: taskengine.DefaultTimeout.String(),
			Usage: "global time limit of the task as a Go duration (default 30m; config: timeoutMs)"}, taskCmds...),
		parse: func(l *Layer, s string) error {
			d, err := ParseDuration(s)
			if err != nil {
				return err
			}
			if d <= 0 {
				return fmt.Errorf("must be positive, not %s", d)
			}
			n := millis.Of(d)
			l.TimeoutMs = &n
			return nil
		},
		apply: scalar(func(l *Layer) *millis.Duration { return l.TimeoutMs }, func(c *Config, v millis.Duration) error {
			if v <= 0 {
				return fmt.Errorf("must be positive, not %d", v)
			}
			c.Timeout = v.Duration()
			return nil
		}),
		print: func(c *Config) string { return fmt.Sprintf("%d (%s)", millis.Of(c.Timeout), c.Timeout) }},
	{Name: "completionMode", Flag: "completion", Env: "JLGCLI_COMPLETION", Kind: "string", Default: string(completion.ModeMarker),
		Commands: on(loopCmds...), Usage: "how the agent signals done: marker or json (config: completionMode)",
		parse: text(func(l *Layer) **string { return &l.CompletionMode }),
		apply: scalar(func(l *Layer) *string { return l.CompletionMode }, func(c *Config, v string) error {
			m, err := completion.ParseMode(v)
			c.CompletionMode = m
			return err
		}),
		print: func(c *Config) string { return string(c.CompletionMode) }},
	{Name: "marker", Flag: "marker", Kind: "string", Default: DefaultMarker, Commands: on(loopCmds...),
		Usage: "the line that means done in marker mode (config: marker)",
		parse: text(func(l *Layer) **string { return &l.Marker }),
		apply: scalar(func(l *Layer) *string { return l.Marker }, func(c *Config, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("must not be empty")
			}
			c.Marker = strings.TrimSpace(v)
			return nil
		}),
		print: func(c *Config) string { return c.Marker }},
	{Name: "noProgressLimit", Flag: "no-progress-limit", Env: "JLGCLI_NO_PROGRESS_LIMIT", Kind: "int", Default: strconv.Itoa(DefaultNoProgressLimit),
		Commands: on(loopCmds...), Usage: "stop after this many identical consecutive replies, exit 5; 0 disables (config: noProgressLimit)",
		parse: integer(func(l *Layer) **int { return &l.NoProgressLimit }),
		apply: scalar(func(l *Layer) *int { return l.NoProgressLimit }, func(c *Config, n int) error {
			if n < 0 || n == 1 {
				return fmt.Errorf("must be 0 (off) or at least 2, not %d: it counts identical consecutive replies, and 1 would stop at the first reply", n)
			}
			c.NoProgressLimit = n
			return nil
		}),
		print: func(c *Config) string { return strconv.Itoa(c.NoProgressLimit) }},
	{Name: "cwd", Flag: "cwd", Kind: "string", Commands: on(everyCmd...), Usage: "working directory of the agent (config: cwd)",
		parse: absPath(func(l *Layer) **string { return &l.Cwd }),
		apply: scalar(func(l *Layer) *string { return l.Cwd }, func(c *Config, v string) error { c.Cwd = v; return nil }),
		print: func(c *Config) string { return c.Cwd }},
	{Name: "env", Flag: "env", Kind: "stringArray", Commands: on(everyCmd...), Usage: "extra environment for the agent, KEY=VALUE, repeatable (config: [env])",
		parse: func(l *Layer, kv string) error {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("%q: want KEY=VALUE", kv)
			}
			if l.Env == nil {
				l.Env = map[string]string{}
			}
			l.Env[k] = v
			return nil
		},
		print: func(c *Config) string { return redactedEnv(c.Env) }},
	{Name: "json", Flag: "json", Kind: "bool", Commands: on(everyCmd...), Usage: "print the result object as JSON on stdout (config: json)",
		parse: boolean(func(l *Layer) **bool { return &l.JSON }),
		apply: scalar(func(l *Layer) *bool { return l.JSON }, func(c *Config, v bool) error { c.JSON = v; return nil }),
		print: func(c *Config) string { return strconv.FormatBool(c.JSON) }},
	{Name: "quiet", Flag: "quiet", Short: "q", Kind: "bool", Commands: on(everyCmd...), Usage: "no progress on stderr (config: quiet)",
		parse: boolean(func(l *Layer) **bool { return &l.Quiet }),
		apply: scalar(func(l *Layer) *bool { return l.Quiet }, func(c *Config, v bool) error { c.Quiet = v; return nil }),
		print: func(c *Config) string { return strconv.FormatBool(c.Quiet) }},
	{Name: "stateDir", Flag: "state-dir", Kind: "string",
		Usage: "where runs are kept (default: .jlgcli at the repository root, else $XDG_STATE_HOME/jlgcli) (config: stateDir)",
		Commands: with(with(on(loopCmds...), FlagUse{Usage: "where runs are kept (config: stateDir)"}, taskCmds...),
			FlagUse{Usage: "where the worker keeps its clones (default: $XDG_STATE_HOME/jlgcli/worker) (config: stateDir)"}, cmdWorker),
		parse: absPath(func(l *Layer) **string { return &l.StateDir }),
		apply: scalar(func(l *Layer) *string { return l.StateDir }, func(c *Config, v string) error { c.StateDir = v; return nil }),
		print: func(c *Config) string { return c.StateDir }},
	{Name: "session", Flag: "session", Kind: "string", Default: string(engine.SessionFresh), Commands: on(loopCmds...),
		Usage: "fresh: a new agent session each iteration (see --handoff); continue: resume the agent's session (config: session)",
		parse: text(func(l *Layer) **string { return &l.Session }),
		apply: enum(func(l *Layer) *string { return l.Session }, func(c *Config) *engine.Session { return &c.Session }, engine.Sessions),
		print: func(c *Config) string { return string(c.Session) }},
	{Name: "handoff", Flag: "handoff", Env: "JLGCLI_HANDOFF", Kind: "bool", Commands: on(loopCmds...),
		Usage: "wrap each fresh session's prompt in a handoff: the task, the next step, progress notes kept in the run's progress.md and the last refusal (config: handoff)",
		parse: boolean(func(l *Layer) **bool { return &l.Handoff }),
		apply: scalar(func(l *Layer) *bool { return l.Handoff }, func(c *Config, v bool) error { c.Handoff = v; return nil }),
		print: func(c *Config) string { return strconv.FormatBool(c.Handoff) }},
	{Name: "stallTimeout", Flag: "stall-timeout", Kind: "duration", Default: DefaultStallTimeout.String(),
		Usage:    "kill an agent that prints nothing this long and retry the iteration; 0 disables (config: stallTimeout)",
		Commands: with(on(loopCmds...), FlagUse{Usage: "kill an agent that prints nothing this long; the attempt counts (config: stallTimeout)"}, taskCmds...),
		parse:    duration(func(l *Layer) **string { return &l.StallTimeout }),
		apply:    durationKey(func(l *Layer) *string { return l.StallTimeout }, func(c *Config) *time.Duration { return &c.StallTimeout }),
		print:    func(c *Config) string { return c.StallTimeout.String() }},
	{Name: "maxWait", Flag: "max-wait", Kind: "duration", Default: DefaultMaxWait.String(), Commands: on(append(loopCmds, taskCmds...)...),
		Usage: "longest total wait for rate limits to reset; 0: stop at the first, exit 69 (config: maxWait)",
		parse: duration(func(l *Layer) **string { return &l.MaxWait }),
		apply: durationKey(func(l *Layer) *string { return l.MaxWait }, func(c *Config) *time.Duration { return &c.MaxWait }),
		print: func(c *Config) string { return c.MaxWait.String() }},
	{Name: "windowLimit", Flag: "window-limit", Env: "JLGCLI_WINDOW_LIMIT", Kind: "float64", Default: "0",
		Commands: on(append(loopCmds, taskCmds...)...),
		Usage:    "start no call on a backend while a subscription window it reported (5h, weekly) is at or above this percent: wait for its reset within --max-wait, else exit 69; 0: no limit (config: windowLimit, [backends.NAME] windowLimit)",
		parse: func(l *Layer, s string) error {
			f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%q is not a percentage such as 80", s)
			}
			l.WindowLimit = &f
			return nil
		},
		apply: scalar(func(l *Layer) *float64 { return l.WindowLimit }, func(c *Config, v float64) error {
			if err := checkWindowLimit(v); err != nil {
				return err
			}
			c.WindowLimit = v
			return nil
		}),
		print: func(c *Config) string {
			v := "0 (no limit)"
			if c.WindowLimit > 0 {
				v = strconv.FormatFloat(c.WindowLimit, 'f', -1, 64) + "%"
			}
			for _, b := range sortedKeys(c.WindowLimits) {
				v += fmt.Sprintf(", %s %s%%", b, strconv.FormatFloat(c.WindowLimits[b], 'f', -1, 64))
			}
			return v
		}},
	{Name: "checks", Flag: "check", Kind: "stringArray",
		Usage:    "a command line (run with sh -c) that must pass before done is accepted; repeatable (config: [[checks]])",
		Commands: with(on(loopCmds...), FlagUse{Usage: "a command line (sh -c) of the gate, repeatable; replaces the detected defaults (config: [[checks]])"}, taskCmds...),
		parse: func(l *Layer, s string) error {
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("--check needs a command line")
			}
			l.ShellChecks = append(l.ShellChecks, s)
			return nil
		},
		print: func(c *Config) string {
			var names []string
			for _, ch := range c.Checks {
				names = append(names, fmt.Sprintf("%q", ch.Name))
			}
			return strings.Join(names, ", ")
		}},
	{Name: "baseline", Flag: "baseline", Kind: "bool", Commands: on(loopCmds...),
		Usage: "run the checks once before the first iteration; a check failing there the same way does not block done (config: baseline)",
		parse: boolean(func(l *Layer) **bool { return &l.Baseline }),
		apply: scalar(func(l *Layer) *bool { return l.Baseline }, func(c *Config, v bool) error { c.Baseline = v; return nil }),
		print: func(c *Config) string { return strconv.FormatBool(c.Baseline) }},
	{Name: "checklist", Flag: "checklist", Kind: "string", Commands: on(loopCmds...), Usage: "refuse done while FILE has unchecked '- [ ]' items (config: checklist)",
		parse: absPath(func(l *Layer) **string { return &l.Checklist }),
		apply: scalar(func(l *Layer) *string { return l.Checklist }, func(c *Config, v string) error { c.Checklist = v; return nil }),
		print: func(c *Config) string { return c.Checklist }},
	{Name: "prematureStop", print: func(c *Config) string {
		if !c.Premature.Enabled {
			return "disabled"
		}
		if c.Premature.Phrases == nil {
			return "enabled (built-in phrases)"
		}
		return fmt.Sprintf("enabled (%d phrases)", len(c.Premature.Phrases))
	}},
	{Name: "tiers", Flag: "tier", Kind: "stringArray", Commands: on(taskCmds...),
		Usage: "a developer tier BACKEND[:MODEL], repeatable, cheapest first (config: [[tiers]])",
		parse: func(l *Layer, t string) error {
			backend, model, _ := strings.Cut(t, ":")
			if backend == "" {
				return fmt.Errorf("%q: want BACKEND[:MODEL]", t)
			}
			l.Tiers = append(l.Tiers, TierLayer{Name: TierName(t), Backend: backend, Model: model})
			return nil
		},
		print: func(c *Config) string {
			var tiers []string
			for _, t := range c.Tiers {
				tiers = append(tiers, t.Name+" ("+tierValue(t)+", "+plural.N(t.Attempts, "attempt")+")")
			}
			return strings.Join(tiers, ", ")
		}},
	{Name: "planner", print: func(c *Config) string {
		if c.Planner == nil {
			return ""
		}
		return tierValue(*c.Planner)
	}},
	{Name: "review", Flag: "review", Env: "JLGCLI_REVIEW", Kind: "string", Commands: on(taskCmds...),
		Usage: "a reviewer BACKEND[:MODEL] that reads each change that passes the checks: it lands only when approved (config: [review]); none: no reviewer",
		parse: func(l *Layer, t string) error {
			t = strings.TrimSpace(t)
			backend, model, _ := strings.Cut(t, ":")
			if backend == "" {
				return fmt.Errorf("%q: want BACKEND[:MODEL] or %s", t, ReviewNone)
			}
			l.Review = &PlannerLayer{Backend: backend, Model: model}
			return nil
		},
		print: func(c *Config) string {
			if c.Review == nil {
				return ""
			}
			return tierValue(*c.Review)
		}},
	{Name: "budgetUsd", Lined: true, Flag: "budget", Env: "JLGCLI_BUDGET_USD", Kind: "float64", Default: strconv.FormatFloat(DefaultBudgetUSD, 'g', -1, 64),
		Usage:    "cost budget of the task in US dollars; 0: none (config: budgetUsd)",
		Commands: on(cmdTask),
		parse: func(l *Layer, s string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%q is not an amount of US dollars such as 2.50", s)
			}
			l.BudgetUSD = &f
			return nil
		},
		apply: scalar(func(l *Layer) *float64 { return l.BudgetUSD }, func(c *Config, v float64) error {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("must be an amount of US dollars, 0 (no budget) or more, not %v", v)
			}
			c.BudgetUSD = v
			return nil
		}),
		print: func(c *Config) string {
			if c.BudgetUSD == 0 {
				return "0 (no budget)"
			}
			return strconv.FormatFloat(c.BudgetUSD, 'f', -1, 64)
		}},
	{Name: "prices", print: func(c *Config) string { return strings.Join(sortedKeys(c.Prices), ", ") }},
	{Name: "escalateFrom", Lined: true, Flag: "escalate-from", Env: "JLGCLI_ESCALATE_FROM", Kind: "string", Default: string(taskengine.EscalateFromBase),
		Commands: on(taskCmds...), Usage: "where a tier that takes over starts: base or last (config: escalateFrom)",
		parse: text(func(l *Layer) **string { return &l.EscalateFrom }),
		apply: enum(func(l *Layer) *string { return l.EscalateFrom }, func(c *Config) *taskengine.EscalateFrom { return &c.EscalateFrom }, taskengine.EscalateFroms),
		print: func(c *Config) string { return string(c.EscalateFrom) }},
	{Name: "antiGaming", Lined: true, Flag: "anti-gaming", Kind: "string", Default: string(gate.GamingRefuse), Commands: on(taskCmds...),
		Usage: "a change that runs fewer tests, skips more, deletes test files or removes or alters lines of existing tests: refuse or warn (config: antiGaming)",
		parse: text(func(l *Layer) **string { return &l.AntiGaming }),
		apply: enum(func(l *Layer) *string { return l.AntiGaming }, func(c *Config) *gate.Gaming { return &c.AntiGaming }, gate.GamingModes),
		print: func(c *Config) string { return string(c.AntiGaming) }},
	{Name: "editTests", Lined: true, Flag: "edit-tests", Kind: "bool", Commands: on(taskCmds...),
		Usage: "the task is meant to change existing tests: removing or altering lines of the base's test files is not refused (config: editTests)",
		parse: boolean(func(l *Layer) **bool { return &l.EditTests }),
		apply: scalar(func(l *Layer) *bool { return l.EditTests }, func(c *Config, v bool) error { c.EditTests = v; return nil }),
		print: func(c *Config) string { return strconv.FormatBool(c.EditTests) }},
	{Name: "loopDetection", print: func(c *Config) string {
		ld := c.LoopDetection
		v := fmt.Sprintf("similarity=%v sameErrorCount=%d", ld.Similarity, ld.SameErrorCount)
		if e := ld.Embeddings; e != nil {
			v += " " + embeddingsValue(e)
		}
		return v
	}},
	{Name: "commit", Lined: true, Flag: "commit", Env: "JLGCLI_COMMIT", Kind: "string", Default: string(git.CommitBranch), Commands: on(cmdTask),
		Usage: "branch: commits on the task branch, squash-merged on success; direct: the commits land on the current branch, which must be clean (config: commit)",
		parse: text(func(l *Layer) **string { return &l.Commit }),
		apply: enum(func(l *Layer) *string { return l.Commit }, func(c *Config) *git.CommitMode { return &c.Commit }, git.CommitModes),
		print: func(c *Config) string { return string(c.Commit) }},
	{Name: "merge", Lined: true, Flag: "merge", Env: "JLGCLI_MERGE", Kind: "string", Default: string(git.MergeSquash), Commands: on(cmdTask),
		Usage: "on success: squash (merge into the base branch as one commit) or none; with --temporal, push fast-forwards the base branch on the remote (config: merge)",
		parse: text(func(l *Layer) **string { return &l.Merge }),
		apply: enum(func(l *Layer) *string { return l.Merge }, func(c *Config) *git.MergeMode { return &c.Merge }, git.MergeModes),
		print: func(c *Config) string { return string(c.Merge) }},
	{Name: "until", Lined: true, Flag: "until", Env: "JLGCLI_UNTIL", Kind: "string", Commands: with(on(cmdTask, cmdBatch), FlagUse{Usage: "work the pull request until it is green (its checks pass at its head, no open thread), approved, or merged (config: until)", Default: string(pull.Green)}, cmdPR),
		Usage: "with --pr: work the pull request until it is green (its checks pass at its head, no open thread), approved, or merged by jlgcli (config: until)",
		parse: text(func(l *Layer) **string { return &l.Until }),
		apply: enum(func(l *Layer) *string { return l.Until }, func(c *Config) *pull.Target { return &c.Until }, pull.Targets),
		print: func(c *Config) string { return string(c.Until) }},
	{Name: "mergeMethod", Lined: true, Flag: "merge-method", Env: "JLGCLI_MERGE_METHOD", Kind: "string", Default: string(forge.MethodMerge), Commands: on(cmdTask, cmdPR, cmdBatch),
		Usage: "with --until merged: merge, squash or rebase, as the forge's branch protection allows (config: mergeMethod)",
		parse: text(func(l *Layer) **string { return &l.MergeMethod }),
		apply: enum(func(l *Layer) *string { return l.MergeMethod }, func(c *Config) *forge.MergeMethod { return &c.MergeMethod }, []forge.MergeMethod{forge.MethodMerge, forge.MethodSquash, forge.MethodRebase}),
		print: func(c *Config) string { return string(cmp.Or(c.MergeMethod, forge.MethodMerge)) }},
	{Name: "poll", Lined: true, Flag: "poll", Kind: "duration", Default: pull.DefaultPoll.String(), Commands: with(on(cmdTask, cmdPR),
		FlagUse{Usage: "with --issues: how often the issue of a running task is read again, and with --watch the first wait for new issues; with --until: the first wait between two looks at a pull request (config: poll)"}, cmdBatch),
		Usage: "with --until: the first wait between two looks at the pull request; it doubles while nothing changes, up to 5m (config: poll)",
		parse: duration(func(l *Layer) **string { return &l.Poll }),
		apply: durationKey(func(l *Layer) *string { return l.Poll }, func(c *Config) *time.Duration { return &c.Poll }),
		print: func(c *Config) string { return cmp.Or(c.Poll, pull.DefaultPoll).String() }},
	{Name: "checksGrace", Lined: true, Flag: "checks-grace", Kind: "duration", Default: pull.DefaultGrace.String(), Commands: on(cmdTask, cmdPR, cmdBatch),
		Usage: "with --until: how long checks have to appear at a new head; no check is not green (config: checksGrace)",
		parse: duration(func(l *Layer) **string { return &l.ChecksGrace }),
		apply: durationKey(func(l *Layer) *string { return l.ChecksGrace }, func(c *Config) *time.Duration { return &c.ChecksGrace }),
		print: func(c *Config) string { return cmp.Or(c.ChecksGrace, pull.DefaultGrace).String() }},
	{Name: "giveUpAfter", Lined: true, Flag: "give-up-after", Kind: "duration", Default: "0", Commands: on(cmdTask, cmdPR, cmdBatch),
		Usage: "with --until: give up (needs-you) after waiting this long with nothing new on the pull request (no new head, check state, review or word); 0 waits as long as it takes (config: giveUpAfter)",
		parse: duration(func(l *Layer) **string { return &l.GiveUpAfter }),
		apply: durationKey(func(l *Layer) *string { return l.GiveUpAfter }, func(c *Config) *time.Duration { return &c.GiveUpAfter }),
		print: func(c *Config) string { return c.GiveUpAfter.String() }},
	{Name: "maxRounds", Lined: true, Flag: "max-rounds", Kind: "int", Default: strconv.Itoa(pull.DefaultMaxRounds), Commands: on(cmdTask, cmdPR, cmdBatch),
		Usage: "with --until: the most rounds (attempts on the pull request) before it gives up (config: maxRounds)",
		parse: integer(func(l *Layer) **int { return &l.MaxRounds }),
		apply: scalar(func(l *Layer) *int { return l.MaxRounds }, func(c *Config, v int) error {
			if v < 1 {
				return fmt.Errorf("must be at least 1, not %d", v)
			}
			c.MaxRounds = v
			return nil
		}),
		print: func(c *Config) string { return strconv.Itoa(cmp.Or(c.MaxRounds, pull.DefaultMaxRounds)) }},
	{Name: "trust", Lined: true, Flag: "trust", Kind: "stringArray", Commands: with(on(cmdTask, cmdPR),
		FlagUse{Usage: "with --issues or --until: a login whose issues' settings, comments, review threads and requests for changes count though it cannot push, repeatable (config: trust = [...])"}, cmdBatch),
		Usage: "with --until: a login whose review threads and requests for changes count though it cannot push, repeatable (config: trust = [...])",
		parse: func(l *Layer, s string) error {
			if s = strings.TrimSpace(s); s == "" || strings.ContainsAny(s, " ,\t") {
				return fmt.Errorf("%q: want a login", s)
			}
			l.Trust = append(l.Trust, s)
			return nil
		},
		apply: func(c *Config, l *Layer) (bool, error) {
			if l.Trust == nil {
				return false, nil
			}
			c.Trust = append(c.Trust, l.Trust...)
			return true, nil
		},
		print: func(c *Config) string { return strings.Join(c.Trust, ", ") }},
	{Name: "push", Lined: true, Flag: "push", Env: "JLGCLI_PUSH", Kind: "bool", Commands: on(cmdTask), Usage: "push the task branch to its remote, never with force (config: push)",
		parse: boolean(func(l *Layer) **bool { return &l.Push }),
		apply: scalar(func(l *Layer) *bool { return l.Push }, func(c *Config, v bool) error { c.Push = v; return nil }),
		print: func(c *Config) string { return strconv.FormatBool(c.Push) }},
	{Name: "pr", Lined: true, Flag: "pr", Env: "JLGCLI_PR", Kind: "bool", Commands: with(on(cmdTask), FlagUse{Usage: "with --until: each task lands through a pull request of its own, opened through the forge's API and worked until the target (config: pr)"}, cmdBatch), Usage: "open a pull request of the pushed branch: with gh, the report as its body; with --until through the forge's API, then work it (config: pr)",
		parse: boolean(func(l *Layer) **bool { return &l.PR }),
		apply: scalar(func(l *Layer) *bool { return l.PR }, func(c *Config, v bool) error { c.PR = v; return nil }),
		print: func(c *Config) string { return strconv.FormatBool(c.PR) }},
	{Name: "jobs", Lined: true, Flag: "jobs", Short: "j", Env: "JLGCLI_JOBS", Kind: "int", Default: strconv.Itoa(DefaultJobs), Commands: on(cmdBatch),
		Usage: "how many tasks run at once (config: jobs)",
		parse: integer(func(l *Layer) **int { return &l.Jobs }),
		apply: scalar(func(l *Layer) *int { return l.Jobs }, func(c *Config, v int) error {
			if v < 1 {
				return fmt.Errorf("must be at least 1, not %d", v)
			}
			c.Jobs = v
			return nil
		}),
		print: func(c *Config) string { return strconv.Itoa(c.Jobs) }},
	{Name: "temporal.address", Flag: "temporal", Env: "JLGCLI_TEMPORAL", Kind: "string", Commands: with(with(on(cmdTask, cmdBatch, cmdConfig), FlagUse{Usage: "HOST:PORT of the Temporal server whose tasks this worker runs (config: temporal.address)"}, cmdWorker),
		FlagUse{Usage: "HOST:PORT of a Temporal server: the workers there work the pull request, each with its own token (config: temporal.address)"}, cmdPR),
		Usage: "HOST:PORT of a Temporal server: submit the task there instead of running it here (config: temporal.address)",
		parse: func(l *Layer, s string) error { l.temporal().Address = &s; return nil },
		apply: scalar(func(l *Layer) *string { return temporalOf(l).Address }, func(c *Config, v string) error { c.Temporal.Address = strings.TrimSpace(v); return nil }),
		print: func(c *Config) string { return c.Temporal.Address }},
	{Name: "temporal.namespace", Flag: "temporal-namespace", Kind: "string", Default: DefaultTemporalNamespace, Commands: on(cmdTask, cmdBatch, cmdPR, cmdWorker, cmdConfig),
		Usage: "the Temporal namespace (config: temporal.namespace)",
		parse: func(l *Layer, s string) error { l.temporal().Namespace = &s; return nil },
		apply: scalar(func(l *Layer) *string { return temporalOf(l).Namespace }, func(c *Config, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("must not be empty")
			}
			c.Temporal.Namespace = v
			return nil
		}),
		print: func(c *Config) string { return c.Temporal.Namespace }},
	{Name: "temporal.taskQueue", Flag: "task-queue", Kind: "string", Default: DefaultTaskQueue, Commands: on(cmdTask, cmdBatch, cmdPR, cmdWorker, cmdConfig),
		Usage: "the Temporal task queue; attempts of backend B go to QUEUE@B (config: temporal.taskQueue)",
		parse: func(l *Layer, s string) error { l.temporal().TaskQueue = &s; return nil },
		apply: scalar(func(l *Layer) *string { return temporalOf(l).TaskQueue }, func(c *Config, v string) error {
			if strings.TrimSpace(v) == "" || strings.Contains(v, "@") {
				return fmt.Errorf("%q is not a queue name (not empty, no @)", v)
			}
			c.Temporal.TaskQueue = v
			return nil
		}),
		print: func(c *Config) string { return c.Temporal.TaskQueue }},
	{Name: "temporal.workerWait", Flag: "worker-wait", Kind: "duration", Default: DefaultWorkerWait.String(), Commands: on(cmdTask, cmdBatch, cmdPR, cmdConfig),
		Usage: "how long an attempt waits for a worker that has its backend before the task fails, exit 2 (config: temporal.workerWait)",
		parse: duration(func(l *Layer) **string { return &l.temporal().WorkerWait }),
		apply: durationKey(func(l *Layer) *string { return temporalOf(l).WorkerWait }, func(c *Config) *time.Duration { return &c.Temporal.WorkerWait }),
		print: func(c *Config) string { return c.Temporal.WorkerWait.String() }},
	{Name: "temporal.tlsCa", Flag: "temporal-ca", Env: "JLGCLI_TEMPORAL_CA", Kind: "string",
		Commands: dialing("temporal.tlsCa", "PEM file of the CA that signed the Temporal server's certificate"),
		Usage:    "PEM file of the CA that signed the Temporal server's certificate; sets TLS on (default: the system's CAs) (config: temporal.tlsCa)",
		parse:    temporalPath(func(t *TemporalLayer) **string { return &t.TLSCA }),
		apply:    scalar(func(l *Layer) *string { return temporalOf(l).TLSCA }, func(c *Config, v string) error { c.Temporal.TLSCA = v; return nil }),
		print:    func(c *Config) string { return c.Temporal.TLSCA }},
	{Name: "temporal.tlsCert", Flag: "temporal-cert", Env: "JLGCLI_TEMPORAL_CERT", Kind: "string",
		Commands: dialing("temporal.tlsCert", "PEM file of the client certificate for mutual TLS"),
		Usage:    "PEM file of the client certificate for mutual TLS, with --temporal-key; sets TLS on (config: temporal.tlsCert)",
		parse:    temporalPath(func(t *TemporalLayer) **string { return &t.TLSCert }),
		apply:    scalar(func(l *Layer) *string { return temporalOf(l).TLSCert }, func(c *Config, v string) error { c.Temporal.TLSCert = v; return nil }),
		print:    func(c *Config) string { return c.Temporal.TLSCert }},
	{Name: "temporal.tlsKey", Flag: "temporal-key", Env: "JLGCLI_TEMPORAL_KEY", Kind: "string",
		Commands: dialing("temporal.tlsKey", "PEM file of the client certificate's private key"),
		Usage:    "PEM file of the client certificate's private key, with --temporal-cert (config: temporal.tlsKey)",
		parse:    temporalPath(func(t *TemporalLayer) **string { return &t.TLSKey }),
		apply:    scalar(func(l *Layer) *string { return temporalOf(l).TLSKey }, func(c *Config, v string) error { c.Temporal.TLSKey = v; return nil }),
		print:    func(c *Config) string { return c.Temporal.TLSKey }},
	{Name: "temporal.tlsServerName", Flag: "temporal-server-name", Env: "JLGCLI_TEMPORAL_SERVER_NAME", Kind: "string",
		Commands: dialing("temporal.tlsServerName", "the name the Temporal server's certificate must have"),
		Usage:    "the name the Temporal server's certificate must have; sets TLS on (default: the host of the address) (config: temporal.tlsServerName)",
		parse:    func(l *Layer, s string) error { l.temporal().TLSServerName = &s; return nil },
		apply: scalar(func(l *Layer) *string { return temporalOf(l).TLSServerName }, func(c *Config, v string) error {
			c.Temporal.TLSServerName = strings.TrimSpace(v)
			return nil
		}),
		print: func(c *Config) string { return c.Temporal.TLSServerName }},
	{Name: "temporal.apiKeyEnv", Flag: "temporal-api-key-env", Env: "JLGCLI_TEMPORAL_API_KEY_ENV", Kind: "string",
		Commands: dialing("temporal.apiKeyEnv", "the environment variable that holds the Temporal API key"),
		Usage:    "the NAME of the environment variable that holds the Temporal API key (Temporal Cloud); sets TLS on (config: temporal.apiKeyEnv)",
		parse:    func(l *Layer, s string) error { l.temporal().APIKeyEnv = &s; return nil },
		apply: scalar(func(l *Layer) *string { return temporalOf(l).APIKeyEnv }, func(c *Config, v string) error {
			if v != "" && !validEnvName(v) {
				// Not quoted: it may be the key itself, given by mistake.
				return fmt.Errorf("is not an environment variable name (letters, digits, _): give the name of the variable that holds the API key, never the key")
			}
			c.Temporal.APIKeyEnv = v
			return nil
		}),
		print: func(c *Config) string { return c.Temporal.APIKeyEnv }},
	{Name: "forge.kind", Flag: "forge-kind", Env: "JLGCLI_FORGE_KIND", Kind: "string", Commands: on(cmdTask, cmdPR, cmdBatch, cmdConfig),
		Usage: "the forge of the remote's pull requests: github or gitea (default: github for github.com, gitea for codeberg.org) (config: forge.kind)",
		parse: func(l *Layer, s string) error {
			if _, err := forge.ParseKind(strings.TrimSpace(s)); err != nil {
				return err
			}
			l.forge().Kind = &s
			return nil
		},
		apply: scalar(func(l *Layer) *string { return forgeOf(l).Kind }, func(c *Config, v string) error {
			k, err := forge.ParseKind(strings.TrimSpace(v))
			c.Forge.Kind = k
			return err
		}),
		print: func(c *Config) string {
			if c.Forge.Kind == "" {
				return "(from the remote's host)"
			}
			return string(c.Forge.Kind)
		}},
	{Name: "forge.url", Flag: "forge-url", Env: "JLGCLI_FORGE_URL", Kind: "string", Commands: on(cmdTask, cmdPR, cmdBatch, cmdConfig),
		Usage: "the forge's web address, for a self-hosted Gitea or GitHub Enterprise (default: the remote's host) (config: forge.url)",
		parse: func(l *Layer, s string) error { l.forge().URL = &s; return nil },
		apply: scalar(func(l *Layer) *string { return forgeOf(l).URL }, func(c *Config, v string) error {
			v = strings.TrimSpace(v)
			if v != "" {
				if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
					return fmt.Errorf("is not an http(s) address, e.g. https://gitea.example.com")
				} else if u.User != nil {
					// Not quoted: it holds a password or a token.
					return fmt.Errorf("has a user or a token in it: give the address alone, and the token's variable in forge.tokenEnv")
				}
			}
			c.Forge.URL = strings.TrimSuffix(v, "/")
			return nil
		}),
		print: func(c *Config) string { return c.Forge.URL }},
	{Name: "forge.tokenEnv", Flag: "forge-token-env", Env: "JLGCLI_FORGE_TOKEN_ENV", Kind: "string", Commands: on(cmdTask, cmdPR, cmdBatch, cmdConfig),
		Usage: "the NAME of the environment variable that holds the forge's token (default on GitHub: GH_TOKEN, GITHUB_TOKEN, then gh's login) (config: forge.tokenEnv)",
		parse: func(l *Layer, s string) error { l.forge().TokenEnv = &s; return nil },
		apply: scalar(func(l *Layer) *string { return forgeOf(l).TokenEnv }, func(c *Config, v string) error {
			if v != "" && !validEnvName(v) {
				// Not quoted: it may be the token itself, given by mistake.
				return fmt.Errorf("is not an environment variable name (letters, digits, _): give the name of the variable that holds the token, never the token")
			}
			c.Forge.TokenEnv = v
			return nil
		}),
		print: func(c *Config) string { return c.Forge.TokenEnv }},
	{Name: "sandbox.mode", Flag: "sandbox", Env: "JLGCLI_SANDBOX", Kind: "string", Default: string(sandbox.Auto), Commands: on(everyCmd...),
		Usage: "confine agents and checks in an OS sandbox: auto (when bubblewrap can), on (refuse to run unconfined) or off (config: sandbox.mode)",
		parse: func(l *Layer, s string) error {
			if _, err := sandbox.ParseMode(s); err != nil {
				return err
			}
			l.sandbox().Mode = &s
			return nil
		},
		apply: projectTightens(func(l SandboxLayer) bool { return l.Mode != nil && strings.TrimSpace(*l.Mode) != string(sandbox.On) },
			scalar(func(l *Layer) *string { return sandboxOf(l).Mode }, func(c *Config, v string) error {
				m, err := sandbox.ParseMode(v)
				c.Sandbox.Mode = m
				return err
			})),
		print: func(c *Config) string { return string(c.Sandbox.Mode) }},
	{Name: "sandbox.denyRead", apply: sandboxList(func(l SandboxLayer) []string { return l.DenyRead }, func(c *Config) *[]string { return &c.Sandbox.DenyRead }, sandbox.CheckPath),
		print: func(c *Config) string { return strings.Join(c.Sandbox.DenyRead, ", ") }},
	{Name: "sandbox.allowRead", apply: projectTightens(func(l SandboxLayer) bool { return len(l.AllowRead) > 0 },
		sandboxList(func(l SandboxLayer) []string { return l.AllowRead }, func(c *Config) *[]string { return &c.Sandbox.AllowRead }, sandbox.CheckPath)),
		print: func(c *Config) string { return strings.Join(c.Sandbox.AllowRead, ", ") }},
	{Name: "sandbox.allowWrite", Env: "JLGCLI_SANDBOX_ALLOW_WRITE",
		parse: func(l *Layer, s string) error {
			l.sandbox().AllowWrite = filepath.SplitList(s)
			return nil
		},
		apply: projectTightens(func(l SandboxLayer) bool { return len(l.AllowWrite) > 0 },
			sandboxList(func(l SandboxLayer) []string { return l.AllowWrite }, func(c *Config) *[]string { return &c.Sandbox.AllowWrite }, sandbox.CheckPath)),
		print: func(c *Config) string { return strings.Join(c.Sandbox.AllowWrite, ", ") }},
	{Name: "sandbox.allowHosts", apply: projectTightens(func(l SandboxLayer) bool { return len(l.AllowHosts) > 0 },
		sandboxList(func(l SandboxLayer) []string { return l.AllowHosts }, func(c *Config) *[]string { return &c.Sandbox.AllowHosts }, sandbox.CheckHost)),
		print: func(c *Config) string { return strings.Join(c.Sandbox.AllowHosts, ", ") }},
	{Name: "sandbox.checksNetwork", Lined: true, Kind: "bool", Default: "through the proxy",
		apply: projectTightens(func(l SandboxLayer) bool { return l.ChecksNetwork != nil && *l.ChecksNetwork },
			scalar(func(l *Layer) *bool { return sandboxOf(l).ChecksNetwork }, func(c *Config, v bool) error {
				c.Sandbox.ChecksHostNetwork, c.Sandbox.ChecksOffline = v, !v
				return nil
			})),
		print: func(c *Config) string {
			switch {
			case c.Sandbox.ChecksHostNetwork:
				return "true (the machine's network)"
			case c.Sandbox.ChecksOffline:
				return "false (no network)"
			}
			return "through the proxy (the package registries of the project's language, allowHosts)"
		}},
	{Name: "sandbox.caches", Kind: "bool", Default: "true",
		apply: projectTightens(func(l SandboxLayer) bool { return l.Caches != nil && *l.Caches },
			scalar(func(l *Layer) *bool { return sandboxOf(l).Caches }, func(c *Config, v bool) error { c.Sandbox.NoCaches = !v; return nil })),
		print: func(c *Config) string { return strconv.FormatBool(!c.Sandbox.NoCaches) }},
	{Name: "sandbox.passEnv", Lined: true, Env: "JLGCLI_SANDBOX_PASS_ENV",
		parse: func(l *Layer, s string) error {
			names := []string{}
			for n := range strings.SplitSeq(s, ",") {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			l.sandbox().PassEnv = names
			return nil
		},
		apply: projectTightens(func(l SandboxLayer) bool { return len(l.PassEnv) > 0 },
			sandboxList(func(l SandboxLayer) []string { return l.PassEnv }, func(c *Config) *[]string { return &c.Sandbox.PassEnv }, checkPassEnv)),
		print: func(c *Config) string { return strings.Join(c.Sandbox.PassEnv, ", ") }},
	{Name: "sandbox.maxProcesses", Lined: true, Env: "JLGCLI_SANDBOX_MAX_PROCESSES", Kind: "int", Default: strconv.Itoa(sandbox.DefaultLimits.Processes),
		parse: integer(func(l *Layer) **int { return &l.sandbox().MaxProcesses }),
		apply: sandboxLimit(func(l SandboxLayer) (int64, bool, error) {
			if l.MaxProcesses == nil {
				return 0, false, nil
			}
			return int64(*l.MaxProcesses), true, nil
		}, func(c *Config) int64 { return int64(c.Sandbox.MaxProcesses) },
			func(c *Config, v int64) { c.Sandbox.MaxProcesses = int(v) }, int64(sandbox.DefaultLimits.Processes), minProcesses, count),
		print: func(c *Config) string {
			return strconv.Itoa(cmp.Or(c.Sandbox.MaxProcesses, sandbox.DefaultLimits.Processes))
		}},
	{Name: "sandbox.maxMemory", Lined: true, Env: "JLGCLI_SANDBOX_MAX_MEMORY", Kind: "size", Default: FormatSize(sandbox.DefaultLimits.Memory),
		parse: size(func(l *Layer) **string { return &l.sandbox().MaxMemory }),
		apply: sandboxLimit(sizeOf(func(l SandboxLayer) *string { return l.MaxMemory }), func(c *Config) int64 { return c.Sandbox.MaxMemory },
			func(c *Config, v int64) { c.Sandbox.MaxMemory = v }, sandbox.DefaultLimits.Memory, minMemory, FormatSize),
		print: func(c *Config) string { return FormatSize(cmp.Or(c.Sandbox.MaxMemory, sandbox.DefaultLimits.Memory)) }},
	{Name: "sandbox.maxTmp", Lined: true, Env: "JLGCLI_SANDBOX_MAX_TMP", Kind: "size", Default: FormatSize(sandbox.DefaultLimits.Tmp),
		parse: size(func(l *Layer) **string { return &l.sandbox().MaxTmp }),
		apply: sandboxLimit(sizeOf(func(l SandboxLayer) *string { return l.MaxTmp }), func(c *Config) int64 { return c.Sandbox.MaxTmp },
			func(c *Config, v int64) { c.Sandbox.MaxTmp = v }, sandbox.DefaultLimits.Tmp, minTmp, FormatSize),
		print: func(c *Config) string { return FormatSize(cmp.Or(c.Sandbox.MaxTmp, sandbox.DefaultLimits.Tmp)) }},
	{Name: "hooks", print: func(c *Config) string {
		var hs []string
		for _, h := range c.Hooks {
			hs = append(hs, hookValue(h))
		}
		return strings.Join(hs, "; ")
	}},
	{Name: "hookTimeout", Lined: true, Env: "JLGCLI_HOOK_TIMEOUT", Kind: "duration", Default: hooks.DefaultTimeout.String(),
		parse: duration(func(l *Layer) **string { return &l.HookTimeout }),
		apply: durationKey(func(l *Layer) *string { return l.HookTimeout }, func(c *Config) *time.Duration { return &c.HookTimeout }),
		print: func(c *Config) string { return c.HookTimeout.String() }},
	{Name: "notify", Lined: true, Env: "JLGCLI_NOTIFY", Kind: "bool", Default: "true",
		parse: boolean(func(l *Layer) **bool { return &l.Notify }),
		apply: scalar(func(l *Layer) *bool { return l.Notify }, func(c *Config, v bool) error { c.Notify = v; return nil }),
		print: func(c *Config) string { return strconv.FormatBool(c.Notify) }},
	// attempts is a flag only: it overrides the attempts of every tier.
	{Flag: "attempts", Kind: "int", Default: strconv.Itoa(DefaultAttempts), Commands: on(taskCmds...),
		Usage: "attempts per tier and step (config: attempts of each [[tiers]])",
		parse: func(l *Layer, s string) error {
			if err := integer(func(l *Layer) **int { return &l.Attempts })(l, s); err != nil {
				return err
			}
			if *l.Attempts < 1 {
				return fmt.Errorf("must be at least 1, not %d", *l.Attempts)
			}
			return nil
		}},
}

// Keys lists the keys in the order `jlgcli config` prints them.
var Keys = func() []string {
	var names []string
	for _, k := range keyTable {
		if k.Name != "" {
			names = append(names, k.Name)
		}
	}
	return names
}()

// Table is the key table: the flags of a command are bound from it.
func Table() []Key { return keyTable }

// FlagOf names the flag of key ("" when it has none).
func FlagOf(key string) string {
	for _, k := range keyTable {
		if k.Name == key {
			return k.Flag
		}
	}
	return ""
}

// Parse reads text, a flag's value, into l (a flag's own layer).
func (k Key) Parse(l *Layer, text string) error { return k.parse(l, text) }

// Use is how command shows the flag: its help and default; ok is false
// when the command has no such flag.
func (k Key) Use(command string) (usage, def string, ok bool) {
	use, ok := k.Commands[command]
	if !ok || k.Flag == "" {
		return "", "", false
	}
	usage, def = k.Usage, k.Default
	if use.Usage != "" {
		usage = use.Usage
	}
	if use.Default != "" {
		def = use.Default
	}
	return usage, def, true
}

// text reads a string into a layer's field.
func text(field func(*Layer) **string) func(*Layer, string) error {
	return func(l *Layer, s string) error { *field(l) = &s; return nil }
}

func integer(field func(*Layer) **int) func(*Layer, string) error {
	return func(l *Layer, s string) error {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		*field(l) = &n
		return nil
	}
}

func boolean(field func(*Layer) **bool) func(*Layer, string) error {
	return func(l *Layer, s string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a boolean: true or false", s)
		}
		*field(l) = &b
		return nil
	}
}

// duration reads a duration (ParseDuration), kept as text as files give it.
func duration(field func(*Layer) **string) func(*Layer, string) error {
	return func(l *Layer, s string) error {
		if _, err := ParseDuration(s); err != nil {
			return err
		}
		*field(l) = &s
		return nil
	}
}

// absPath reads a path, made absolute (flags are relative to the
// current directory).
func absPath(field func(*Layer) **string) func(*Layer, string) error {
	return func(l *Layer, s string) error {
		a, err := filepath.Abs(s)
		if err != nil {
			return err
		}
		*field(l) = &a
		return nil
	}
}

// projectTightens refuses a value of the project file that loosens the
// sandbox (loosens tells): a repository's jlgcli.toml must not give its
// agents more of the user's machine than the user gave them.
func projectTightens(loosens func(SandboxLayer) bool, apply func(*Config, *Layer) (bool, error)) func(*Config, *Layer) (bool, error) {
	return func(c *Config, l *Layer) (bool, error) {
		if l.Project && loosens(sandboxOf(l)) {
			return true, errors.New("a project's jlgcli.toml may tighten the sandbox, not loosen it (a repository would give its agents more of your machine): " +
				"set it in your user file (~/.config/jlgcli/config.toml), the environment or a flag")
		}
		return apply(c, l)
	}
}

// The least limits of a call: below them no agent CLI starts.
const (
	minProcesses = 16
	minMemory    = 64 << 20
	minTmp       = 1 << 20
)

// sandboxLimit applies a limit of each call (read gives a layer's, set
// sets it): at least least; in a project file, at most what the layers
// below give (cur, 0: the default def): a repository may lower a limit
// of the sandbox, never raise it. show writes a value in an error.
func sandboxLimit(read func(SandboxLayer) (int64, bool, error), cur func(*Config) int64, set func(*Config, int64), def, least int64,
	show func(int64) string) func(*Config, *Layer) (bool, error) {
	return func(c *Config, l *Layer) (bool, error) {
		v, ok, err := read(sandboxOf(l))
		if !ok || err != nil {
			return ok, err
		}
		if v < least {
			return true, fmt.Errorf("must be at least %s, not %s", show(least), show(v))
		}
		if below := cmp.Or(cur(c), def); l.Project && v > below {
			return true, fmt.Errorf("%s is above %s, the limit your own configuration gives (or the default): a project's jlgcli.toml may lower a limit of the sandbox, not raise it; "+
				"set it in your user file (~/.config/jlgcli/config.toml) or the environment", show(v), show(below))
		}
		set(c, v)
		return true, nil
	}
}

// sizeOf reads a size of the [sandbox] table (ParseSize).
func sizeOf(field func(SandboxLayer) *string) func(SandboxLayer) (int64, bool, error) {
	return func(l SandboxLayer) (int64, bool, error) {
		s := field(l)
		if s == nil {
			return 0, false, nil
		}
		n, err := ParseSize(*s)
		return n, true, err
	}
}

// count writes a number of processes.
func count(n int64) string { return strconv.FormatInt(n, 10) }

// size reads a size (ParseSize), kept as text as files give it.
func size(field func(*Layer) **string) func(*Layer, string) error {
	return func(l *Layer, s string) error {
		if _, err := ParseSize(s); err != nil {
			return err
		}
		*field(l) = &s
		return nil
	}
}

// checkPassEnv checks a name of passEnv: a variable's name, or a prefix of
// names ending in "*" ("*" alone: every variable).
func checkPassEnv(n string) error {
	if p, ok := strings.CutSuffix(n, "*"); ok && (p == "" || validEnvName(p)) || validEnvName(n) {
		return nil
	}
	return fmt.Errorf("%q is not a variable name (letters, digits, _) nor a prefix of names ending in *", n)
}

// sandboxList adds a layer's list of the [sandbox] table to the
// configuration's, each entry checked.
func sandboxList(get func(SandboxLayer) []string, dst func(*Config) *[]string, check func(string) error) func(*Config, *Layer) (bool, error) {
	return func(c *Config, l *Layer) (bool, error) {
		v := get(sandboxOf(l))
		if v == nil {
			return false, nil
		}
		for _, e := range v {
			if err := check(e); err != nil {
				return true, err
			}
		}
		*dst(c) = append(*dst(c), v...)
		return true, nil
	}
}

// scalar applies a layer's value with set, which checks it.
func scalar[T any](get func(*Layer) *T, set func(*Config, T) error) func(*Config, *Layer) (bool, error) {
	return func(c *Config, l *Layer) (bool, error) {
		v := get(l)
		if v == nil {
			return false, nil
		}
		return true, set(c, *v)
	}
}

// enum applies a value that must be one of values.
func enum[T ~string](get func(*Layer) *string, dst func(*Config) *T, values []T) func(*Config, *Layer) (bool, error) {
	return func(c *Config, l *Layer) (bool, error) {
		src := get(l)
		return src != nil, applyEnum(src, dst(c), values)
	}
}

// durationKey applies a duration of a file (ParseDuration; 0 disables).
func durationKey(get func(*Layer) *string, dst func(*Config) *time.Duration) func(*Config, *Layer) (bool, error) {
	return func(c *Config, l *Layer) (bool, error) {
		src := get(l)
		if src == nil {
			return false, nil
		}
		v, err := ParseDuration(*src)
		if err != nil {
			return true, err
		}
		if v < 0 {
			return true, fmt.Errorf("%q: want 0 (off) or a duration greater than 0", *src)
		}
		*dst(c) = v
		return true, nil
	}
}

// TierName makes a tier's name of a --tier value: its characters outside
// [A-Za-z0-9._:-] become dashes (opencode's models hold slashes).
func TierName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:-", c) >= 0) {
			b[i] = '-'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

// applyEnum sets dst to *src when src is set, refusing a value that is not
// one of values: the one check of every key whose values are a set.
func applyEnum[T ~string](src *string, dst *T, values []T) error {
	if src == nil {
		return nil
	}
	v := T(*src)
	if !slices.Contains(values, v) {
		quoted := make([]string, len(values))
		for i, x := range values {
			quoted[i] = strconv.Quote(string(x))
		}
		return fmt.Errorf("must be %s, not %q", strings.Join(quoted, " or "), *src)
	}
	*dst = v
	return nil
}

// EnvLayer reads the JLGCLI_* environment variables of the key table; an
// empty variable is not set.
func EnvLayer(getenv func(string) string) (*Layer, error) {
	l := &Layer{Name: "environment"}
	for _, k := range keyTable {
		if k.Env == "" {
			continue
		}
		if v := getenv(k.Env); v != "" {
			if err := k.parse(l, v); err != nil {
				return nil, &Error{Source: "environment", Key: k.Env, Msg: err.Error()}
			}
		}
	}
	return l, nil
}

// checkWindowLimit checks a windowLimit: a percentage, 0 (none) to 100.
func checkWindowLimit(v float64) error {
	if v < 0 || v > 100 || math.IsNaN(v) {
		return fmt.Errorf("must be a percentage from 0 (no limit) to 100, not %v", v)
	}
	return nil
}

// WindowLimitsOf are the configured window limits for the engine: windowLimit
// for every backend, each [backends.NAME] windowLimit for its own; nil when
// none is set.
func (c *Config) WindowLimitsOf() engine.WindowLimits {
	if c.WindowLimit <= 0 && len(c.WindowLimits) == 0 {
		return nil
	}
	l := engine.WindowLimits{"": c.WindowLimit}
	for b, v := range c.WindowLimits {
		l[b] = v
	}
	return l
}

// Value returns the printable value of a top-level key.
func (c *Config) Value(key string) string {
	for _, k := range keyTable {
		if k.Name == key && k.print != nil {
			return k.print(c)
		}
	}
	if name, ok := strings.CutPrefix(key, "backends."); ok {
		if b, ok := c.Backends[name]; ok {
			return fmt.Sprintf("command=%q prompt=%s", b.Command, b.Prompt)
		}
	}
	if name, ok := strings.CutPrefix(key, "prices."); ok {
		if p, ok := c.Prices[name]; ok {
			return fmt.Sprintf("input=%v output=%v (USD per million tokens)", p.InputPerMTok, p.OutputPerMTok)
		}
	}
	return ""
}

// sortedKeys are the models of a price table, sorted.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// tierValue prints a tier's backend, model and environment.
func tierValue(t Tier) string {
	v := t.Backend
	if v == "" {
		v = "(default backend)"
	}
	if t.Model != "" {
		v += " " + t.Model
	}
	if len(t.Env) > 0 {
		v += " env " + redactedEnv(t.Env)
	}
	return v
}

// embeddingsValue prints the embeddings service of loop detection.
func embeddingsValue(e *Embeddings) string {
	v := fmt.Sprintf("embeddings=%s url=%s threshold=%v", e.Model, e.URL, e.Threshold)
	if e.APIKeyEnv != "" {
		v += " apiKeyEnv=" + e.APIKeyEnv
	}
	return v
}

// redactedEnv prints an environment's names, not its values, which may be
// secrets: "A=<redacted> B=<redacted>", sorted.
func redactedEnv(env map[string]string) string {
	var b []string
	for _, k := range sortedKeys(env) {
		b = append(b, k+"=<redacted>")
	}
	return strings.Join(b, " ")
}

// AllKeys lists every key with a value: Keys, then the backends, then the
// configured prices.
func (c *Config) AllKeys() []string {
	keys := slices.Clone(Keys)
	var b []string
	for name := range c.Backends {
		b = append(b, "backends."+name)
	}
	sort.Strings(b)
	keys = append(keys, b...)
	for _, m := range slices.Sorted(maps.Keys(c.Prices)) {
		keys = append(keys, "prices."+m)
	}
	return keys
}
