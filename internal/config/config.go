// Package config holds jlgcli's typed settings and resolves them from their
// layers: defaults < user file < project file < environment < flags. Unknown
// keys, wrong types and bad values are errors that name the file, the key
// and, when known, the line.
package config

import (
	"fmt"
	"io"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/taskengine"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/pull"
)

// ProjectFile is the name of the project configuration file.
const ProjectFile = "jlgcli.toml"

// Defaults of the seed.
const (
	DefaultMaxIterations   = 10
	DefaultTimeout         = 5 * time.Minute
	DefaultMarker          = "DONE"
	DefaultNoProgressLimit = 3
	DefaultStallTimeout    = 10 * time.Minute
	DefaultMaxWait         = time.Hour
	DefaultCheckTimeout    = 10 * time.Minute
	// DefaultAttempts is how many times a tier of the task command is tried
	// before the next one.
	DefaultAttempts = 3
	// ReviewNone, as the reviewer's backend (--review none), is no
	// reviewer.
	ReviewNone = "none"
	// DefaultBudgetUSD is a task's spending limit, in US dollars.
	DefaultBudgetUSD = 1.00
	// DefaultJobs is how many tasks of a batch run at once.
	DefaultJobs = 2
	// DefaultTemporalNamespace and DefaultTaskQueue are where tasks go on
	// a Temporal server; DefaultWorkerWait how long an attempt waits for
	// a worker that has its backend.
	DefaultTemporalNamespace = "default"
	DefaultTaskQueue         = "jlgcli"
	DefaultWorkerWait        = 10 * time.Minute
	// DefaultSimilarity is how alike two attempts' changes must be to count
	// as a loop.
	DefaultSimilarity = 0.9
	// DefaultSameErrorCount is how many attempts in a row that end in the
	// same error are a loop.
	DefaultSameErrorCount = 3
	// DefaultEmbeddingsThreshold is the cosine similarity of two attempts'
	// embeddings above which they are a loop.
	DefaultEmbeddingsThreshold = 0.95
)

// Config is the resolved configuration.
type Config struct {
	Backend         string
	Model           string
	MaxIterations   int
	Timeout         time.Duration
	CompletionMode  completion.Mode
	Marker          string
	NoProgressLimit int
	Cwd             string
	Env             map[string]string
	JSON            bool
	Quiet           bool
	// StateDir overrides where runs are kept ("": the default).
	StateDir string
	// Session is how a loop uses the agent's sessions.
	Session engine.Session
	// StallTimeout stops a silent agent; 0 disables it.
	StallTimeout time.Duration
	// MaxWait bounds the waits for rate limits; 0: no wait.
	MaxWait time.Duration
	// WindowLimit is the use, in percent, of a subscription window at or
	// above which no call starts on its backend until it resets; 0: none.
	// WindowLimits are the backends' own ([backends.NAME] windowLimit).
	WindowLimit  float64
	WindowLimits map[string]float64
	// Checks are the verification gate's commands.
	Checks []Check
	// Baseline runs the checks once before the first iteration.
	Baseline bool
	// Handoff wraps each fresh session's prompt in a handoff: the task, the
	// next step, progress notes and the last refusal. Off: every call sends
	// exactly the user's prompt (or the reply's next), as the seed does.
	Handoff bool
	// Checklist is a file whose unchecked items refuse done.
	Checklist string
	// Premature configures premature-stop detection.
	Premature Premature
	// Backends are the user-defined command backends.
	Backends map[string]agent.CommandSpec
	// Tiers are the task command's escalation ladder, cheapest first; empty
	// when none is configured. A tier's empty backend is filled with Backend
	// (and stays empty when Backend is: the first installed backend).
	Tiers []Tier
	// Attempts is how many attempts a tier that sets none gets: --attempts
	// when given (it then is every tier's Attempts), else DefaultAttempts.
	// The task command gives it to the tier it makes of Backend and Model
	// when Tiers is empty.
	Attempts int
	// Planner is the tier that plans for `task --plan` (Name "planner",
	// Attempts 1), nil when [planner] is not configured.
	Planner *Tier
	// Review is the tier that reviews each change that passes the checks
	// before it lands (Name "review", Attempts 1), nil without [review] or
	// --review.
	Review *Tier
	// BudgetUSD is a task's spending limit in US dollars; 0: no limit.
	BudgetUSD float64
	// Prices are the configured [prices] entries, to merge over
	// cost.DefaultTable(); nil when there are none.
	Prices cost.Table
	// EscalateFrom is where a tier's first attempt starts.
	EscalateFrom taskengine.EscalateFrom
	// AntiGaming is what the test gate does when a change lowers the number
	// of tests run, raises the skipped ones or deletes test files:
	// refuse or warn.
	AntiGaming gate.Gaming
	// EditTests: tasks are meant to change existing tests; removing or
	// altering lines of the base's test files is then not refused.
	EditTests bool
	// LoopDetection says when a tier's attempts loop.
	LoopDetection LoopDetection
	// Commit is where a task's commits go.
	Commit git.CommitMode
	// Merge is what becomes of a task branch on success.
	Merge git.MergeMode
	// Push pushes the result.
	Push bool
	// PR opens a pull request for a task branch.
	PR bool
	// Until is the state the pull request is worked until ("": none, the
	// pull request is left once opened); MergeMethod how the target
	// merged merges it.
	Until       pull.Target
	MergeMethod forge.MergeMethod
	// Poll, ChecksGrace, GiveUpAfter, MaxRounds and Trust are the
	// pull-request loop's first wait between looks, the time checks have
	// to appear at a head, how long it waits with nothing new before it
	// gives up, its most rounds, and the logins whose threads count though
	// they cannot push (pull.Policy); zero: its defaults.
	Poll        time.Duration
	ChecksGrace time.Duration
	GiveUpAfter time.Duration
	MaxRounds   int
	Trust       []string
	// Jobs is how many tasks of a batch run at once.
	Jobs int
	// Temporal is the server tasks are submitted to and workers serve.
	Temporal Temporal
	// Forge is which forge serves the remote's pull requests, where, and
	// the name of the variable that holds its token (never the token).
	Forge forge.Settings
	// Sandbox is how agents and checks are confined.
	Sandbox sandbox.Config
	// Hooks are told of the runs' events (hooks.Dispatcher), each within
	// HookTimeout. Notify: a run of over a minute that ends rings the
	// terminal and notifies the desktop.
	Hooks       []hooks.Hook
	HookTimeout time.Duration
	Notify      bool
	// Ignored are the settings of a project file that the user has not
	// trusted as it is, which would run or send something outside the
	// sandbox (its hooks, ...): they are not in the fields above.
	Ignored []Ignored
	// Sources says where each key's value came from.
	Sources map[string]string
}

// Tier is one rung of the task command's escalation ladder: an agent backend
// and model, with their extra environment and how many attempts it gets.
type Tier struct {
	Name     string
	Backend  string
	Model    string
	Env      map[string]string
	Attempts int
}

// EnvList returns the tier's extra environment as sorted KEY=VALUE pairs.
func (t Tier) EnvList() []string { return envList(t.Env) }

// LoopDetection says when the attempts of a tier loop.
type LoopDetection struct {
	// Similarity is how alike two attempts' changes must be, in (0, 1], to
	// count as the same change.
	Similarity float64
	// SameErrorCount is how many attempts in a row ending in the same error
	// are a loop (at least 2).
	SameErrorCount int
	// Embeddings compares attempts by meaning; nil when not configured.
	Embeddings *Embeddings
}

// Embeddings is the embeddings service with which loop detection compares
// attempts by meaning.
type Embeddings struct {
	// URL is the service's http or https URL.
	URL string `json:"url"`
	// Model is the embeddings model.
	Model string `json:"model"`
	// APIKeyEnv names the environment variable holding the API key; "":
	// no key.
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// Threshold is the cosine similarity, in (0, 1], above which two
	// attempts are the same.
	Threshold float64 `json:"threshold"`
}

// Check is one command of the verification gate: Run is an argv, or Shell a
// command line for sh -c (from --check).
type Check struct {
	Name    string
	Run     []string
	Shell   string
	Timeout time.Duration
}

// Premature configures premature-stop detection: phrases replace the
// built-in lists when given.
type Premature struct {
	Enabled   bool     `json:"enabled"`
	Phrases   []string `json:"phrases,omitempty"`
	Negations []string `json:"negations,omitempty"`
}

// Error is a configuration error: a bad key or value, with where it is.
type Error struct {
	// Source is the file (or "environment", "flag").
	Source string
	// Line is the line in the file, 0 when unknown.
	Line int
	// Key is the dotted key, or the variable or flag name.
	Key string
	Msg string
}

func (e *Error) Error() string {
	where := e.Source
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", where, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// KeyError is a value of key that a command cannot take, naming where it
// came from: the file, the environment, or the flag the user typed.
func (c *Config) KeyError(key, msg string) *Error {
	e := &Error{Source: c.Sources[key], Key: key, Msg: msg}
	e.NameFlag()
	return e
}

// NameFlag makes an error of the flag layer (named "flag") name the flag
// the user typed, not the config key behind it.
func (e *Error) NameFlag() {
	if e.Source == "flag" {
		key, _, _ := strings.Cut(e.Key, "[") // tiers[1].name: the 2nd --tier
		e.Source, e.Key = "command line", "--"+FlagOf(key)
	}
}

// EnvList returns the configured extra environment as sorted KEY=VALUE pairs.
func (c *Config) EnvList() []string { return envList(c.Env) }

// Dispatcher tells c's hooks of a run's events, agents' commands started
// in environ, warn told of a hook that failed; with the desktop
// notification on terminal (nil: none) unless notify = false. nil when
// there is neither.
func (c *Config) Dispatcher(environ []string, warn func(string), terminal io.Writer) *hooks.Dispatcher {
	var desktop *hooks.Desktop
	if c.Notify && terminal != nil {
		desktop = &hooks.Desktop{Bell: terminal}
	}
	if len(c.Hooks) == 0 && desktop == nil {
		return nil
	}
	return &hooks.Dispatcher{Hooks: c.Hooks, Timeout: c.HookTimeout, Environ: environ, Warn: warn, Desktop: desktop}
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Temporal is the [temporal] table resolved.
type Temporal struct {
	// Address is the server's HOST:PORT; "" runs tasks here.
	Address   string
	Namespace string
	TaskQueue string
	// WorkerWait is how long an attempt waits for a worker that has its
	// backend before the task fails (backend-missing).
	WorkerWait time.Duration
	// TLSCA, TLSCert and TLSKey are PEM files: the CA that signed the
	// server's certificate ("": the system's roots), and the client's
	// certificate and key for mutual TLS. TLSServerName is the name the
	// server's certificate must have ("": the address's host). Any of them,
	// or an API key, makes the connection TLS.
	TLSCA, TLSCert, TLSKey, TLSServerName string
	// APIKeyEnv names the environment variable that holds the API key, sent
	// with every call as a bearer token (Temporal Cloud's API keys); "":
	// none. The key itself is never in a file or a run's record.
	APIKeyEnv string
}

// TemporalConnectionKeys are the keys of how a client connects to the
// Temporal server, beyond its address and namespace: a run's record keeps
// them (none is a secret), and the configuration overrides them
// (OverTemporal).
var TemporalConnectionKeys = []string{"temporal.tlsCa", "temporal.tlsCert", "temporal.tlsKey", "temporal.tlsServerName", "temporal.apiKeyEnv"}

// OverTemporal is c with the Temporal server t, recorded by source (a
// run's record): t's address, namespace and queue, and each of its
// connection settings (TemporalConnectionKeys) unless c's files,
// environment or flags set that key.
func (c *Config) OverTemporal(t Temporal, source string) *Config {
	o := *c
	o.Sources = maps.Clone(c.Sources)
	fields := func(t *Temporal) []*string {
		return []*string{&t.TLSCA, &t.TLSCert, &t.TLSKey, &t.TLSServerName, &t.APIKeyEnv}
	}
	mine := fields(&c.Temporal)
	for i, p := range fields(&t) {
		if key := TemporalConnectionKeys[i]; c.Sources[key] != "default" && c.Sources[key] != "" {
			*p = *mine[i]
		} else {
			o.Sources[key] = source
		}
	}
	o.Temporal = t
	for _, key := range []string{"temporal.address", "temporal.namespace", "temporal.taskQueue"} {
		o.Sources[key] = source
	}
	return &o
}
