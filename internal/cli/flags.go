package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
)

// flagOfKey names the flag of each config key.
var flagOfKey = map[string]string{
	"backend": "backend", "model": "model", "maxIterations": "max-iterations", "timeoutMs": "timeout",
	"completionMode": "completion", "marker": "marker", "noProgressLimit": "no-progress-limit",
	"cwd": "cwd", "env": "env", "json": "json", "quiet": "quiet",
	"stateDir": "state-dir", "session": "session", "handoff": "handoff", "stallTimeout": "stall-timeout", "maxWait": "max-wait",
	"checks": "check", "baseline": "baseline", "checklist": "checklist",
	"tiers": "tier", "attempts": "attempts", "budgetUsd": "budget", "escalateFrom": "escalate-from",
	"antiGaming": "anti-gaming", "commit": "commit", "merge": "merge", "push": "push", "pr": "pr",
}

// settingFlags are the flags that are also config keys.
type settingFlags struct {
	backend         string
	model           string
	maxIterations   int
	timeout         time.Duration
	completion      string
	marker          string
	noProgressLimit int
	cwd             string
	env             []string
	json            bool
	quiet           bool
	stateDir        string
	session         string
	handoff         bool
	stallTimeout    time.Duration
	maxWait         time.Duration
	checks          []string
	baseline        bool
	checklist       string
}

func (f *settingFlags) register(fs *pflag.FlagSet, loop bool) {
	fs.StringVarP(&f.backend, "backend", "b", "", "agent backend: "+strings.Join(agent.Builtins, ", ")+", or a [backends.NAME] from config (config: backend)")
	fs.StringVar(&f.model, "model", "", "model passed to the agent CLI (config: model)")
	fs.DurationVar(&f.timeout, "timeout", config.DefaultTimeout, "global time limit as a Go duration, e.g. 90s, 5m (config: timeoutMs)")
	fs.StringVar(&f.cwd, "cwd", "", "working directory of the agent (config: cwd)")
	fs.StringArrayVar(&f.env, "env", nil, "extra environment for the agent, KEY=VALUE, repeatable (config: [env])")
	fs.BoolVar(&f.json, "json", false, "print the result object as JSON on stdout (config: json)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr (config: quiet)")
	if loop {
		fs.IntVar(&f.maxIterations, "max-iterations", config.DefaultMaxIterations, "stop after this many agent calls, exit 4 (config: maxIterations)")
		fs.StringVar(&f.completion, "completion", "marker", "how the agent signals done: marker or json (config: completionMode)")
		fs.StringVar(&f.marker, "marker", config.DefaultMarker, "the line that means done in marker mode (config: marker)")
		fs.IntVar(&f.noProgressLimit, "no-progress-limit", config.DefaultNoProgressLimit, "stop after this many identical consecutive replies, exit 5; 0 disables (config: noProgressLimit)")
		f.registerPersistence(fs)
	}
}

// registerPersistence adds the flags of persistent runs (loop, resume).
func (f *settingFlags) registerPersistence(fs *pflag.FlagSet) {
	fs.StringVar(&f.stateDir, "state-dir", "", "where runs are kept (default: .jlgcli at the repository root, else $XDG_STATE_HOME/jlgcli) (config: stateDir)")
	fs.StringVar(&f.session, "session", string(engine.SessionFresh), "fresh: a new agent session each iteration (see --handoff); continue: resume the agent's session (config: session)")
	fs.BoolVar(&f.handoff, "handoff", false, "wrap each fresh session's prompt in a handoff: the task, the next step, progress notes kept in the run's progress.md and the last refusal (config: handoff)")
	fs.DurationVar(&f.stallTimeout, "stall-timeout", config.DefaultStallTimeout, "kill an agent that prints nothing this long and retry the iteration; 0 disables (config: stallTimeout)")
	fs.DurationVar(&f.maxWait, "max-wait", config.DefaultMaxWait, "longest total wait for rate limits to reset; 0: stop at the first, exit 69 (config: maxWait)")
	fs.StringArrayVar(&f.checks, "check", nil, "a command line (run with sh -c) that must pass before done is accepted; repeatable (config: [[checks]])")
	fs.BoolVar(&f.baseline, "baseline", false, "run the checks once before the first iteration; a check failing there the same way does not block done (config: baseline)")
	fs.StringVar(&f.checklist, "checklist", "", "refuse done while FILE has unchecked '- [ ]' items (config: checklist)")
}

// layer is the flags that were set on the command line, as a config layer.
func (f *settingFlags) layer(fs *pflag.FlagSet) (l *config.Layer, err error) {
	l = &config.Layer{Name: "flag"}
	set := fs.Changed
	if set("backend") {
		l.Backend = &f.backend
	}
	if set("model") {
		l.Model = &f.model
	}
	if set("max-iterations") {
		l.MaxIterations = &f.maxIterations
	}
	if set("timeout") {
		if f.timeout <= 0 {
			return nil, usagef("--timeout must be positive, not %s", f.timeout)
		}
		n := f.timeout.Milliseconds()
		l.TimeoutMs = &n
	}
	if set("completion") {
		l.CompletionMode = &f.completion
	}
	if set("marker") {
		l.Marker = &f.marker
	}
	if set("no-progress-limit") {
		l.NoProgressLimit = &f.noProgressLimit
	}
	if set("cwd") {
		abs, err := filepath.Abs(f.cwd)
		if err != nil {
			return nil, usagef("--cwd: %v", err)
		}
		l.Cwd = &abs
	}
	if set("env") {
		l.Env = map[string]string{}
		for _, kv := range f.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, usagef("--env %q: want KEY=VALUE", kv)
			}
			l.Env[k] = v
		}
	}
	if set("json") {
		l.JSON = &f.json
	}
	if set("quiet") {
		l.Quiet = &f.quiet
	}
	abs := func(p string) (*string, error) {
		a, err := filepath.Abs(p)
		return &a, err
	}
	if set("state-dir") {
		if l.StateDir, err = abs(f.stateDir); err != nil {
			return nil, usagef("--state-dir: %v", err)
		}
	}
	if set("session") {
		l.Session = &f.session
	}
	if set("stall-timeout") {
		s := f.stallTimeout.String()
		l.StallTimeout = &s
	}
	if set("max-wait") {
		s := f.maxWait.String()
		l.MaxWait = &s
	}
	if set("check") {
		l.ShellChecks = f.checks
	}
	if set("baseline") {
		l.Baseline = &f.baseline
	}
	if set("handoff") {
		l.Handoff = &f.handoff
	}
	if set("checklist") {
		if l.Checklist, err = abs(f.checklist); err != nil {
			return nil, usagef("--checklist: %v", err)
		}
	}
	return l, nil
}

// loadConfig resolves the configuration for a command run in dir.
func loadConfig(stdio *Stdio, flags *config.Layer) (*config.Config, error) {
	user, err := config.LoadFile(config.UserFile(stdio.getenv))
	if err != nil {
		return nil, err
	}
	dir, err := stdio.dir()
	if err != nil {
		return nil, err
	}
	if flags != nil && flags.Cwd != nil {
		dir = *flags.Cwd
	}
	project, err := config.LoadFile(config.FindProjectFile(dir))
	if err != nil {
		return nil, err
	}
	env, err := config.EnvLayer(stdio.getenv)
	if err != nil {
		return nil, err
	}
	c, err := config.Resolve(user, project, env, flags)
	var cerr *config.Error
	if errors.As(err, &cerr) && cerr.Source == "flag" {
		// Name the flag the user typed, not the config key behind it.
		key, _, _ := strings.Cut(cerr.Key, "[") // tiers[1].name: the 2nd --tier
		cerr.Source, cerr.Key = "command line", "--"+flagOfKey[key]
	}
	if err != nil {
		return nil, err
	}
	if c.Cwd == "" {
		c.Cwd = dir
	}
	if fi, err := os.Stat(c.Cwd); err != nil || !fi.IsDir() {
		return nil, &config.Error{Source: c.Sources["cwd"], Key: "cwd", Msg: fmt.Sprintf("%s is not a directory", c.Cwd)}
	}
	return c, nil
}
