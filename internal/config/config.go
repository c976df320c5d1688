// Package config holds jlgcli's typed settings and resolves them from their
// layers: defaults < user file < project file < environment < flags. Unknown
// keys, wrong types and bad values are errors that name the file, the key
// and, when known, the line.
package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
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
	// DefaultBudgetUSD is a task's spending limit, in US dollars.
	DefaultBudgetUSD = 1.00
	// DefaultJobs is how many tasks of a batch run at once.
	DefaultJobs = 2
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
	// BudgetUSD is a task's spending limit in US dollars; 0: no limit.
	BudgetUSD float64
	// Prices are the configured [prices] entries, to merge over
	// cost.DefaultTable(); nil when there are none.
	Prices cost.Table
	// EscalateFrom is where a tier's first attempt starts.
	EscalateFrom engine.EscalateFrom
	// AntiGaming is what the test gate does when a change lowers the number
	// of tests run, raises the skipped ones or deletes test files:
	// refuse or warn.
	AntiGaming gate.Gaming
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
	// Jobs is how many tasks of a batch run at once.
	Jobs int
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

// Keys lists the top-level keys in the order `jlgcli config` prints them.
var Keys = []string{"backend", "model", "maxIterations", "timeoutMs", "completionMode", "marker", "noProgressLimit", "cwd", "env", "json", "quiet",
	"stateDir", "session", "stallTimeout", "maxWait", "handoff", "checks", "baseline", "checklist", "prematureStop",
	"tiers", "planner", "budgetUsd", "prices", "escalateFrom", "antiGaming", "loopDetection", "commit", "merge", "push", "pr", "jobs"}

// Layer is one source of settings; nil fields are not set by it.
type Layer struct {
	// Name says where the values come from ("flag", a file path, ...).
	Name            string
	Backend         *string                `toml:"backend"`
	Model           *string                `toml:"model"`
	MaxIterations   *int                   `toml:"maxIterations"`
	TimeoutMs       *int64                 `toml:"timeoutMs"`
	CompletionMode  *string                `toml:"completionMode"`
	Marker          *string                `toml:"marker"`
	NoProgressLimit *int                   `toml:"noProgressLimit"`
	Cwd             *string                `toml:"cwd"`
	Env             map[string]string      `toml:"env"`
	JSON            *bool                  `toml:"json"`
	Quiet           *bool                  `toml:"quiet"`
	Backends        map[string]backendFile `toml:"backends"`
	StateDir        *string                `toml:"stateDir"`
	Session         *string                `toml:"session"`
	StallTimeout    *string                `toml:"stallTimeout"`
	MaxWait         *string                `toml:"maxWait"`
	Checks          []checkFile            `toml:"checks"`
	// ShellChecks are --check command lines (flags only).
	ShellChecks []string       `toml:"-"`
	Baseline    *bool          `toml:"baseline"`
	Handoff     *bool          `toml:"handoff"`
	Checklist   *string        `toml:"checklist"`
	Premature   *prematureFile `toml:"prematureStop"`
	// Tiers are the [[tiers]] of the task command; when a layer sets any,
	// they replace those of the layers below. The cli makes one of each
	// --tier BACKEND[:MODEL], named after the flag's text.
	Tiers []TierLayer `toml:"tiers"`
	// Attempts, when set (--attempts N, flags only), overrides the attempts
	// of every resolved tier, whichever layer set them.
	Attempts      *int                          `toml:"-"`
	Planner       *PlannerLayer                 `toml:"planner"`
	BudgetUSD     *float64                      `toml:"budgetUsd"`
	Prices        map[string]map[string]float64 `toml:"prices"`
	EscalateFrom  *string                       `toml:"escalateFrom"`
	AntiGaming    *string                       `toml:"antiGaming"`
	LoopDetection *loopDetectionFile            `toml:"loopDetection"`
	Commit        *string                       `toml:"commit"`
	Merge         *string                       `toml:"merge"`
	Push          *bool                         `toml:"push"`
	PR            *bool                         `toml:"pr"`
	Jobs          *int                          `toml:"jobs"`

	// lines are the lines of the file's keys (see keyLines).
	lines map[string]int
}

// TierLayer is one [[tiers]] entry as a layer gives it. Name is required,
// unique in its list, 1 to 40 of the characters A-Z a-z 0-9 . _ : -; an
// empty Backend is the top-level backend; nil Attempts is DefaultAttempts.
type TierLayer struct {
	Name     string            `toml:"name"`
	Backend  string            `toml:"backend"`
	Model    string            `toml:"model"`
	Env      map[string]string `toml:"env"`
	Attempts *int              `toml:"attempts"`
}

// PlannerLayer is the [planner] table: the tier that plans for `task
// --plan`. An empty Backend is the top-level backend. A layer's planner
// replaces the planner of the layers below.
type PlannerLayer struct {
	Backend string            `toml:"backend"`
	Model   string            `toml:"model"`
	Env     map[string]string `toml:"env"`
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

type checkFile struct {
	Name    string   `toml:"name"`
	Run     []string `toml:"run"`
	Timeout string   `toml:"timeout"`
}

type prematureFile struct {
	Enabled   *bool    `toml:"enabled"`
	Phrases   []string `toml:"phrases"`
	Negations []string `toml:"negations"`
}

type loopDetectionFile struct {
	Similarity     *float64        `toml:"similarity"`
	SameErrorCount *int            `toml:"sameErrorCount"`
	Embeddings     *embeddingsFile `toml:"embeddings"`
}

type embeddingsFile struct {
	URL       string   `toml:"url"`
	Model     string   `toml:"model"`
	APIKeyEnv string   `toml:"apiKeyEnv"`
	Threshold *float64 `toml:"threshold"`
}

type backendFile struct {
	Command []string `toml:"command"`
	Prompt  string   `toml:"prompt"`
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

// UserFile is the user configuration file's path:
// $XDG_CONFIG_HOME/jlgcli/config.toml (default ~/.config).
func UserFile(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "jlgcli", "config.toml")
}

// FindProjectFile looks for jlgcli.toml in dir, then in its parents up to the
// root of the git repository holding dir. Outside a repository only dir
// itself is looked at. It returns "" when there is none.
func FindProjectFile(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	var candidates []string
	for d := dir; ; d = filepath.Dir(d) {
		candidates = append(candidates, filepath.Join(d, ProjectFile))
		if exists(filepath.Join(d, ".git")) {
			for _, c := range candidates {
				if exists(c) {
					return c
				}
			}
			return ""
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if c := filepath.Join(dir, ProjectFile); exists(c) {
		return c
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// LoadFile reads one TOML file into a Layer; a missing file is an empty
// layer.
func LoadFile(path string) (*Layer, error) {
	l := &Layer{Name: path}
	if path == "" {
		return l, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, &Error{Source: path, Msg: err.Error()}
	}
	lines := keyLines(data)
	dec := toml.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(l); err != nil {
		return nil, tomlError(path, lines, err)
	}
	l.Name = path
	l.lines = lines
	for _, p := range []*string{l.Cwd, l.StateDir, l.Checklist} {
		if p != nil && *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(filepath.Dir(path), *p)
		}
	}
	return l, nil
}

func tomlError(path string, lines map[string]int, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, _ := e.Position()
		return &Error{Source: path, Line: row, Key: indexedKey(lines, e.Key(), row), Msg: "unknown key" + knownHint(e.Key())}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if i := strings.Index(msg, " into struct field "); i >= 0 {
			// "cannot decode TOML string into struct field config.Layer.X of type int"
			if j := strings.LastIndex(msg, " of type "); j > i {
				msg = msg[:i] + ", want " + strings.TrimPrefix(msg[j+len(" of type "):], "*")
			}
		}
		return &Error{Source: path, Line: row, Key: indexedKey(lines, de.Key(), row), Msg: msg}
	}
	return &Error{Source: path, Msg: err.Error()}
}

func knownHint(key []string) string {
	switch {
	case len(key) == 1:
		return " (known keys: " + strings.Join(Keys, ", ") + ", backends)"
	case len(key) == 2 && key[0] == "checks":
		return " (a check has: name, run, timeout)"
	case len(key) == 2 && key[0] == "prematureStop":
		return " (prematureStop has: enabled, phrases, negations)"
	case len(key) == 3 && key[0] == "backends":
		return " (a backend has: command, prompt)"
	case len(key) == 2 && key[0] == "tiers":
		return " (a tier has: name, backend, model, env, attempts)"
	case len(key) == 2 && key[0] == "planner":
		return " (planner has: backend, model, env)"
	case len(key) == 2 && key[0] == "loopDetection":
		return " (loopDetection has: similarity, sameErrorCount, embeddings)"
	case len(key) == 3 && key[0] == "loopDetection" && key[1] == "embeddings":
		return " (loopDetection.embeddings has: url, model, apiKeyEnv, threshold)"
	}
	return ""
}

// indexedKey is the dotted key of an error at line row, with the index of
// the array elements it is in ("tiers[1].attempts", not "tiers.attempts")
// when lines tell it.
func indexedKey(lines map[string]int, key []string, row int) string {
	plain := strings.Join(key, ".")
	var found []string
	for k, n := range lines {
		if n == row && stripIndexes(k) == plain {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		return plain
	}
	sort.Strings(found)
	return found[0]
}

// stripIndexes removes the "[N]" of array elements from a key.
func stripIndexes(k string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(k, '[')
		if i < 0 {
			break
		}
		j := strings.IndexByte(k[i:], ']')
		if j < 0 {
			break
		}
		b.WriteString(k[:i])
		k = k[i+j+1:]
	}
	b.WriteString(k)
	return b.String()
}

// keyLines maps the dotted keys of a TOML document, with the index of
// array elements ("tiers[1].attempts"), to the line where they are set or
// where their table starts. It is best effort: for a document that does not
// parse, it has the keys before the error.
func keyLines(data []byte) (lines map[string]int) {
	lines = map[string]int{}
	defer func() {
		// The parser is go-toml's unstable API: lines are a help, never a
		// reason to fail.
		_ = recover()
	}()
	counts := map[string]int{} // elements of each array of tables so far
	var p unstable.Parser
	p.Reset(data)
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			path, line := "", 0
			it := e.Key()
			for it.Next() {
				k := it.Node()
				if line == 0 {
					line = p.Shape(k.Raw).Start.Line
				}
				path = joinKey(path, string(k.Data))
				if n := counts[path]; n > 0 && (e.Kind == unstable.Table || !it.IsLast()) {
					// An earlier [[path]]: this is in its last element.
					path = fmt.Sprintf("%s[%d]", path, n-1)
				}
			}
			if e.Kind == unstable.ArrayTable {
				counts[path]++
				path = fmt.Sprintf("%s[%d]", path, counts[path]-1)
			}
			setLine(lines, path, line)
			table = path
		case unstable.KeyValue:
			keyValueLines(&p, e, table, lines)
		}
	}
	return lines
}

func keyValueLines(p *unstable.Parser, kv *unstable.Node, prefix string, lines map[string]int) {
	path, line := prefix, 0
	it := kv.Key()
	for it.Next() {
		k := it.Node()
		if line == 0 {
			line = p.Shape(k.Raw).Start.Line
		}
		path = joinKey(path, string(k.Data))
	}
	setLine(lines, path, line)
	valueLines(p, kv.Value(), path, lines)
}

func valueLines(p *unstable.Parser, v *unstable.Node, path string, lines map[string]int) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				keyValueLines(p, n, path, lines)
			}
		}
	case unstable.Array:
		i := 0
		it := v.Children()
		for it.Next() {
			n := it.Node()
			if n.Kind == unstable.Comment {
				continue
			}
			elem := fmt.Sprintf("%s[%d]", path, i)
			i++
			if n.Raw.Length > 0 {
				setLine(lines, elem, p.Shape(n.Raw).Start.Line)
			}
			valueLines(p, n, elem, lines)
		}
	}
}

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func setLine(lines map[string]int, key string, line int) {
	if _, ok := lines[key]; !ok && line > 0 {
		lines[key] = line
	}
}

// line is the line of key in the layer's file, or of the nearest table
// holding it; 0 when unknown.
func (l *Layer) line(key string) int {
	for k := key; k != ""; {
		if n, ok := l.lines[k]; ok {
			return n
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// EnvLayer reads the JLGCLI_* environment variables.
func EnvLayer(getenv func(string) string) (*Layer, error) {
	l := &Layer{Name: "environment"}
	if v := getenv("JLGCLI_BACKEND"); v != "" {
		l.Backend = &v
	}
	if v := getenv("JLGCLI_COMPLETION"); v != "" {
		l.CompletionMode = &v
	}
	for _, p := range []struct {
		name string
		dst  **int
	}{{"JLGCLI_MAX_ITERATIONS", &l.MaxIterations}, {"JLGCLI_NO_PROGRESS_LIMIT", &l.NoProgressLimit}, {"JLGCLI_JOBS", &l.Jobs}} {
		if v := getenv(p.name); v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, &Error{Source: "environment", Key: p.name, Msg: fmt.Sprintf("%q is not an integer", v)}
			}
			*p.dst = &n
		}
	}
	if v := getenv("JLGCLI_TIMEOUT"); v != "" {
		d, err := ParseTimeout(v)
		if err != nil {
			return nil, &Error{Source: "environment", Key: "JLGCLI_TIMEOUT", Msg: err.Error()}
		}
		n := d.Milliseconds()
		l.TimeoutMs = &n
	}
	if v := getenv("JLGCLI_BUDGET_USD"); v != "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, &Error{Source: "environment", Key: "JLGCLI_BUDGET_USD", Msg: fmt.Sprintf("%q is not an amount of US dollars such as 2.50", v)}
		}
		l.BudgetUSD = &f
	}
	for _, p := range []struct {
		name string
		dst  **string
	}{{"JLGCLI_ESCALATE_FROM", &l.EscalateFrom}, {"JLGCLI_COMMIT", &l.Commit}, {"JLGCLI_MERGE", &l.Merge}} {
		if v := getenv(p.name); v != "" {
			*p.dst = &v
		}
	}
	for _, p := range []struct {
		name string
		dst  **bool
	}{{"JLGCLI_PUSH", &l.Push}, {"JLGCLI_PR", &l.PR}, {"JLGCLI_HANDOFF", &l.Handoff}} {
		if v := getenv(p.name); v != "" {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return nil, &Error{Source: "environment", Key: p.name, Msg: fmt.Sprintf("%q is not a boolean: true or false", v)}
			}
			*p.dst = &b
		}
	}
	return l, nil
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

// ParseTimeout reads a Go duration such as "90s" or "5m"; a bare integer is
// milliseconds, as timeoutMs in files.
func ParseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 90s or 5m", s)
	}
	return d, nil
}

// Resolve applies the layers in order over the defaults and validates the
// result.
func Resolve(layers ...*Layer) (*Config, error) {
	c := &Config{
		MaxIterations:   DefaultMaxIterations,
		Timeout:         DefaultTimeout,
		CompletionMode:  completion.ModeMarker,
		Marker:          DefaultMarker,
		NoProgressLimit: DefaultNoProgressLimit,
		Session:         engine.SessionFresh,
		StallTimeout:    DefaultStallTimeout,
		MaxWait:         DefaultMaxWait,
		Premature:       Premature{Enabled: true},
		Env:             map[string]string{},
		Backends:        map[string]agent.CommandSpec{},
		Attempts:        DefaultAttempts,
		BudgetUSD:       DefaultBudgetUSD,
		EscalateFrom:    engine.EscalateFromBase,
		AntiGaming:      gate.GamingRefuse,
		LoopDetection:   LoopDetection{Similarity: DefaultSimilarity, SameErrorCount: DefaultSameErrorCount},
		Commit:          git.CommitBranch,
		Merge:           git.MergeSquash,
		Jobs:            DefaultJobs,
		Sources:         map[string]string{},
	}
	for _, k := range Keys {
		c.Sources[k] = "default"
	}
	attempts := 0 // the --attempts override
	for _, l := range layers {
		if l == nil {
			continue
		}
		if err := c.apply(l); err != nil {
			return nil, err
		}
		if l.Attempts != nil {
			attempts = *l.Attempts
		}
	}
	// Tiers inherit the backend once every layer has had its say.
	for i := range c.Tiers {
		if c.Tiers[i].Backend == "" {
			c.Tiers[i].Backend = c.Backend
		}
		if attempts > 0 {
			c.Tiers[i].Attempts = attempts
		}
	}
	if attempts > 0 {
		c.Attempts = attempts
	}
	if c.Planner != nil && c.Planner.Backend == "" {
		c.Planner.Backend = c.Backend
	}
	return c, nil
}

func (c *Config) apply(l *Layer) error {
	bad := func(key, msg string) error { return &Error{Source: l.Name, Key: key, Msg: msg} }
	set := func(key string) { c.Sources[key] = l.Name }
	if l.Backend != nil {
		c.Backend = strings.TrimSpace(*l.Backend)
		set("backend")
	}
	if l.Model != nil {
		c.Model = *l.Model
		set("model")
	}
	if l.MaxIterations != nil {
		if *l.MaxIterations < 1 {
			return bad("maxIterations", fmt.Sprintf("must be at least 1, not %d", *l.MaxIterations))
		}
		c.MaxIterations = *l.MaxIterations
		set("maxIterations")
	}
	if l.TimeoutMs != nil {
		if *l.TimeoutMs <= 0 {
			return bad("timeoutMs", fmt.Sprintf("must be positive, not %d", *l.TimeoutMs))
		}
		c.Timeout = time.Duration(*l.TimeoutMs) * time.Millisecond
		set("timeoutMs")
	}
	if l.CompletionMode != nil {
		m, err := completion.ParseMode(*l.CompletionMode)
		if err != nil {
			return bad("completionMode", err.Error())
		}
		c.CompletionMode = m
		set("completionMode")
	}
	if l.Marker != nil {
		if strings.TrimSpace(*l.Marker) == "" {
			return bad("marker", "must not be empty")
		}
		c.Marker = strings.TrimSpace(*l.Marker)
		set("marker")
	}
	if l.NoProgressLimit != nil {
		if n := *l.NoProgressLimit; n < 0 || n == 1 {
			return bad("noProgressLimit", fmt.Sprintf("must be 0 (off) or at least 2, not %d: it counts identical consecutive replies, and 1 would stop at the first reply", n))
		}
		c.NoProgressLimit = *l.NoProgressLimit
		set("noProgressLimit")
	}
	if l.Cwd != nil {
		c.Cwd = *l.Cwd
		set("cwd")
	}
	if len(l.Env) > 0 {
		if err := checkEnv(l.Env, "env", bad); err != nil {
			return err
		}
		maps.Copy(c.Env, l.Env)
		set("env")
	}
	if l.JSON != nil {
		c.JSON = *l.JSON
		set("json")
	}
	if l.Quiet != nil {
		c.Quiet = *l.Quiet
		set("quiet")
	}
	if l.StateDir != nil {
		c.StateDir = *l.StateDir
		set("stateDir")
	}
	if err := applyEnum(l.Session, &c.Session, engine.Sessions); err != nil {
		return bad("session", err.Error())
	} else if l.Session != nil {
		set("session")
	}
	for _, d := range []struct {
		key string
		src *string
		dst *time.Duration
	}{{"stallTimeout", l.StallTimeout, &c.StallTimeout}, {"maxWait", l.MaxWait, &c.MaxWait}} {
		if d.src == nil {
			continue
		}
		v, err := time.ParseDuration(*d.src)
		if err != nil || v < 0 {
			return bad(d.key, fmt.Sprintf("%q is not a duration such as 10m (0 disables)", *d.src))
		}
		*d.dst = v
		set(d.key)
	}
	if len(l.Checks) > 0 || len(l.ShellChecks) > 0 {
		// Checks of a higher layer replace those of a lower one.
		c.Checks = nil
		for i, ch := range l.Checks {
			key := fmt.Sprintf("checks[%d]", i)
			if len(ch.Run) == 0 || ch.Run[0] == "" {
				return bad(key+".run", "must be a non-empty list: the program and its arguments")
			}
			timeout := DefaultCheckTimeout
			if ch.Timeout != "" {
				d, err := time.ParseDuration(ch.Timeout)
				if err != nil || d <= 0 {
					return bad(key+".timeout", fmt.Sprintf("%q is not a positive duration such as 5m", ch.Timeout))
				}
				timeout = d
			}
			name := ch.Name
			if name == "" {
				name = strings.Join(ch.Run, " ")
			}
			c.Checks = append(c.Checks, Check{Name: name, Run: ch.Run, Timeout: timeout})
		}
		for _, sh := range l.ShellChecks {
			if strings.TrimSpace(sh) == "" {
				return bad("checks", "--check needs a command line")
			}
			c.Checks = append(c.Checks, Check{Name: sh, Shell: sh, Timeout: DefaultCheckTimeout})
		}
		set("checks")
	}
	if l.Baseline != nil {
		c.Baseline = *l.Baseline
		set("baseline")
	}
	if l.Handoff != nil {
		c.Handoff = *l.Handoff
		set("handoff")
	}
	if l.Checklist != nil {
		c.Checklist = *l.Checklist
		set("checklist")
	}
	if p := l.Premature; p != nil {
		if p.Enabled != nil {
			c.Premature.Enabled = *p.Enabled
		}
		if p.Phrases != nil {
			c.Premature.Phrases = p.Phrases
		}
		if p.Negations != nil {
			c.Premature.Negations = p.Negations
		}
		set("prematureStop")
	}
	for name, b := range l.Backends {
		key := "backends." + name
		if agent.IsBuiltin(name) {
			return bad(key, fmt.Sprintf("%s is a built-in backend; give your command backend another name", name))
		}
		if len(b.Command) == 0 || b.Command[0] == "" {
			return bad(key+".command", "must be a non-empty list: the program and its arguments")
		}
		switch b.Prompt {
		case "":
			b.Prompt = agent.PromptStdin
		case agent.PromptStdin, agent.PromptArg, agent.PromptFile:
		default:
			return bad(key+".prompt", fmt.Sprintf("must be %q, %q or %q, not %q", agent.PromptStdin, agent.PromptArg, agent.PromptFile, b.Prompt))
		}
		c.Backends[name] = agent.CommandSpec{Command: b.Command, Prompt: b.Prompt}
		c.Sources[key] = l.Name
	}
	return c.applyTask(l, set)
}

// applyTask applies the keys of the task command. Their errors have the
// line of the key in its file.
func (c *Config) applyTask(l *Layer, set func(key string)) error {
	bad := func(key, msg string) error { return &Error{Source: l.Name, Line: l.line(key), Key: key, Msg: msg} }
	if len(l.Tiers) > 0 {
		// Tiers of a higher layer replace those of a lower one.
		c.Tiers = nil
		seen := map[string]int{}
		for i, t := range l.Tiers {
			key := fmt.Sprintf("tiers[%d]", i)
			if err := checkTierName(t.Name); err != nil {
				return bad(key+".name", err.Error())
			}
			if j, ok := seen[t.Name]; ok {
				return bad(key+".name", fmt.Sprintf("%q is already the name of tiers[%d]", t.Name, j))
			}
			seen[t.Name] = i
			if err := checkEnv(t.Env, key+".env", bad); err != nil {
				return err
			}
			attempts := DefaultAttempts
			if t.Attempts != nil {
				if *t.Attempts < 1 {
					return bad(key+".attempts", fmt.Sprintf("must be at least 1, not %d", *t.Attempts))
				}
				attempts = *t.Attempts
			}
			c.Tiers = append(c.Tiers, Tier{Name: t.Name, Backend: strings.TrimSpace(t.Backend), Model: t.Model, Env: maps.Clone(t.Env), Attempts: attempts})
		}
		set("tiers")
	}
	if l.Attempts != nil && *l.Attempts < 1 {
		return bad("attempts", fmt.Sprintf("must be at least 1, not %d", *l.Attempts))
	}
	if p := l.Planner; p != nil {
		if err := checkEnv(p.Env, "planner.env", bad); err != nil {
			return err
		}
		c.Planner = &Tier{Name: "planner", Backend: strings.TrimSpace(p.Backend), Model: p.Model, Env: maps.Clone(p.Env), Attempts: 1}
		set("planner")
	}
	if l.BudgetUSD != nil {
		if v := *l.BudgetUSD; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("budgetUsd", fmt.Sprintf("must be an amount of US dollars, 0 (no budget) or more, not %v", v))
		}
		c.BudgetUSD = *l.BudgetUSD
		set("budgetUsd")
	}
	if len(l.Prices) > 0 {
		t, err := cost.ParseTable(l.Prices)
		if err != nil {
			return bad(pricesErrorKey(l.Prices), strings.ReplaceAll(err.Error(), "prices: ", ""))
		}
		c.Prices = c.Prices.Merge(t)
		for k := range c.Sources {
			if m, ok := strings.CutPrefix(k, "prices."); ok {
				if _, kept := c.Prices[m]; !kept {
					delete(c.Sources, k) // replaced by another spelling
				}
			}
		}
		for m := range t {
			c.Sources["prices."+m] = l.Name
		}
		set("prices")
	}
	for _, e := range []struct {
		key   string
		src   *string
		apply func() error
	}{
		{"escalateFrom", l.EscalateFrom, func() error { return applyEnum(l.EscalateFrom, &c.EscalateFrom, engine.EscalateFroms) }},
		{"antiGaming", l.AntiGaming, func() error { return applyEnum(l.AntiGaming, &c.AntiGaming, gate.GamingModes) }},
		{"commit", l.Commit, func() error { return applyEnum(l.Commit, &c.Commit, git.CommitModes) }},
		{"merge", l.Merge, func() error { return applyEnum(l.Merge, &c.Merge, git.MergeModes) }},
	} {
		if err := e.apply(); err != nil {
			return bad(e.key, err.Error())
		}
		if e.src != nil {
			set(e.key)
		}
	}
	if ld := l.LoopDetection; ld != nil {
		if ld.Similarity != nil {
			if v := *ld.Similarity; !(v > 0 && v <= 1) {
				return bad("loopDetection.similarity", fmt.Sprintf("must be more than 0 and at most 1, not %v", v))
			}
			c.LoopDetection.Similarity = *ld.Similarity
		}
		if ld.SameErrorCount != nil {
			if n := *ld.SameErrorCount; n < 2 {
				return bad("loopDetection.sameErrorCount", fmt.Sprintf("must be at least 2, not %d", n))
			}
			c.LoopDetection.SameErrorCount = *ld.SameErrorCount
		}
		if e := ld.Embeddings; e != nil {
			// Embeddings of a higher layer replace those of a lower one.
			emb, key, msg := resolveEmbeddings(e)
			if emb == nil {
				return bad("loopDetection.embeddings."+key, msg)
			}
			c.LoopDetection.Embeddings = emb
		}
		set("loopDetection")
	}
	if l.Push != nil {
		c.Push = *l.Push
		set("push")
	}
	if l.PR != nil {
		c.PR = *l.PR
		set("pr")
	}
	if l.Jobs != nil {
		if *l.Jobs < 1 {
			return bad("jobs", fmt.Sprintf("must be at least 1, not %d", *l.Jobs))
		}
		c.Jobs = *l.Jobs
		set("jobs")
	}
	return nil
}

// resolveEmbeddings validates a [loopDetection.embeddings] table; when it is
// wrong, emb is nil and key and msg say why.
func resolveEmbeddings(e *embeddingsFile) (emb *Embeddings, key, msg string) {
	u, err := url.Parse(e.URL)
	switch {
	case e.URL == "":
		return nil, "url", "is required: the embeddings service's http or https URL"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, "url", fmt.Sprintf("%q is not an http or https URL", e.URL)
	case strings.TrimSpace(e.Model) == "":
		return nil, "model", "is required: the embeddings model"
	case e.APIKeyEnv != "" && !validEnvName(e.APIKeyEnv):
		return nil, "apiKeyEnv", fmt.Sprintf("%q is not an environment variable name", e.APIKeyEnv)
	}
	threshold := DefaultEmbeddingsThreshold
	if e.Threshold != nil {
		if v := *e.Threshold; !(v > 0 && v <= 1) {
			return nil, "threshold", fmt.Sprintf("must be more than 0 and at most 1, not %v", v)
		}
		threshold = *e.Threshold
	}
	return &Embeddings{URL: e.URL, Model: strings.TrimSpace(e.Model), APIKeyEnv: e.APIKeyEnv, Threshold: threshold}, "", ""
}

// pricesErrorKey is the key of a bad [prices] table: the model's, when one
// model is wrong by itself.
func pricesErrorKey(prices map[string]map[string]float64) string {
	var badModels []string
	for _, m := range slices.Sorted(maps.Keys(prices)) {
		if _, err := cost.ParseTable(map[string]map[string]float64{m: prices[m]}); err != nil {
			badModels = append(badModels, m)
		}
	}
	if len(badModels) == 1 {
		return "prices." + badModels[0]
	}
	return "prices"
}

// checkTierName says what is wrong with a tier's name.
func checkTierName(name string) error {
	if name == "" {
		return errors.New("is required")
	}
	if len(name) > 40 {
		return fmt.Errorf("%q is longer than 40 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:-", r)) {
			return fmt.Errorf("%q has %q: a name has only letters, digits and . _ : -", name, r)
		}
	}
	return nil
}

// checkEnv checks the names of an env table.
func checkEnv(env map[string]string, key string, bad func(key, msg string) error) error {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return bad(key, fmt.Sprintf("%q is not a valid variable name", k))
		}
	}
	return nil
}

// validEnvName reports whether s is a portable environment variable name.
func validEnvName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// EnvList returns the configured extra environment as sorted KEY=VALUE pairs.
func (c *Config) EnvList() []string { return envList(c.Env) }

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Value returns the printable value of a top-level key.
func (c *Config) Value(key string) string {
	switch key {
	case "backend":
		if c.Backend == "" {
			return "(first installed of " + strings.Join(agent.Builtins, ", ") + ")"
		}
		return c.Backend
	case "model":
		return c.Model
	case "maxIterations":
		return strconv.Itoa(c.MaxIterations)
	case "timeoutMs":
		return fmt.Sprintf("%d (%s)", c.Timeout.Milliseconds(), c.Timeout)
	case "completionMode":
		return string(c.CompletionMode)
	case "marker":
		return c.Marker
	case "noProgressLimit":
		return strconv.Itoa(c.NoProgressLimit)
	case "cwd":
		return c.Cwd
	case "env":
		return strings.Join(c.EnvList(), " ")
	case "json":
		return strconv.FormatBool(c.JSON)
	case "quiet":
		return strconv.FormatBool(c.Quiet)
	case "stateDir":
		return c.StateDir
	case "session":
		return string(c.Session)
	case "stallTimeout":
		return c.StallTimeout.String()
	case "maxWait":
		return c.MaxWait.String()
	case "checks":
		var names []string
		for _, ch := range c.Checks {
			names = append(names, fmt.Sprintf("%q", ch.Name))
		}
		return strings.Join(names, ", ")
	case "baseline":
		return strconv.FormatBool(c.Baseline)
	case "jobs":
		return strconv.Itoa(c.Jobs)
	case "handoff":
		return strconv.FormatBool(c.Handoff)
	case "checklist":
		return c.Checklist
	case "prematureStop":
		if !c.Premature.Enabled {
			return "disabled"
		}
		if c.Premature.Phrases == nil {
			return "enabled (built-in phrases)"
		}
		return fmt.Sprintf("enabled (%d phrases)", len(c.Premature.Phrases))
	case "tiers":
		var tiers []string
		for _, t := range c.Tiers {
			tiers = append(tiers, t.Name+" ("+tierValue(t)+fmt.Sprintf(", %d attempts)", t.Attempts))
		}
		return strings.Join(tiers, ", ")
	case "planner":
		if c.Planner == nil {
			return ""
		}
		return tierValue(*c.Planner)
	case "budgetUsd":
		if c.BudgetUSD == 0 {
			return "0 (no budget)"
		}
		return strconv.FormatFloat(c.BudgetUSD, 'f', -1, 64)
	case "prices":
		return strings.Join(slices.Sorted(maps.Keys(c.Prices)), ", ")
	case "escalateFrom":
		return string(c.EscalateFrom)
	case "antiGaming":
		return string(c.AntiGaming)
	case "loopDetection":
		ld := c.LoopDetection
		v := fmt.Sprintf("similarity=%v sameErrorCount=%d", ld.Similarity, ld.SameErrorCount)
		if e := ld.Embeddings; e != nil {
			v += fmt.Sprintf(" embeddings=%s url=%s threshold=%v", e.Model, e.URL, e.Threshold)
			if e.APIKeyEnv != "" {
				v += " apiKeyEnv=" + e.APIKeyEnv
			}
		}
		return v
	case "commit":
		return string(c.Commit)
	case "merge":
		return string(c.Merge)
	case "push":
		return strconv.FormatBool(c.Push)
	case "pr":
		return strconv.FormatBool(c.PR)
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
		v += " env " + strings.Join(t.EnvList(), " ")
	}
	return v
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
