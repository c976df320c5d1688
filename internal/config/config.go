// Package config holds jlgcli's typed settings and resolves them from their
// layers: defaults < user file < project file < environment < flags. Unknown
// keys and wrong types are errors that name the file, the line and the key.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
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
	// Session is "fresh" or "continue".
	Session string
	// StallTimeout stops a silent agent; 0 disables it.
	StallTimeout time.Duration
	// MaxWait bounds the waits for rate limits; 0: no wait.
	MaxWait time.Duration
	// Checks are the verification gate's commands.
	Checks []Check
	// Baseline runs the checks once before the first iteration.
	Baseline bool
	// Checklist is a file whose unchecked items refuse done.
	Checklist string
	// Premature configures premature-stop detection.
	Premature Premature
	// Backends are the user-defined command backends.
	Backends map[string]agent.CommandSpec
	// Sources says where each key's value came from.
	Sources map[string]string
}

// Keys lists the top-level keys in the order `jlgcli config` prints them.
var Keys = []string{"backend", "model", "maxIterations", "timeoutMs", "completionMode", "marker", "noProgressLimit", "cwd", "env", "json", "quiet",
	"stateDir", "session", "stallTimeout", "maxWait", "checks", "baseline", "checklist", "prematureStop"}

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
	Checklist   *string        `toml:"checklist"`
	Premature   *prematureFile `toml:"prematureStop"`
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
	Enabled   bool
	Phrases   []string
	Negations []string
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
	dec := toml.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(l); err != nil {
		return nil, tomlError(path, err)
	}
	l.Name = path
	for _, p := range []*string{l.Cwd, l.StateDir, l.Checklist} {
		if p != nil && *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(filepath.Dir(path), *p)
		}
	}
	return l, nil
}

func tomlError(path string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, _ := e.Position()
		return &Error{Source: path, Line: row, Key: strings.Join(e.Key(), "."), Msg: "unknown key" + knownHint(e.Key())}
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
		return &Error{Source: path, Line: row, Key: strings.Join(de.Key(), "."), Msg: msg}
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
	}
	return ""
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
	}{{"JLGCLI_MAX_ITERATIONS", &l.MaxIterations}, {"JLGCLI_NO_PROGRESS_LIMIT", &l.NoProgressLimit}} {
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
	return l, nil
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
		Session:         "fresh",
		StallTimeout:    DefaultStallTimeout,
		MaxWait:         DefaultMaxWait,
		Premature:       Premature{Enabled: true},
		Env:             map[string]string{},
		Backends:        map[string]agent.CommandSpec{},
		Sources:         map[string]string{},
	}
	for _, k := range Keys {
		c.Sources[k] = "default"
	}
	for _, l := range layers {
		if l == nil {
			continue
		}
		if err := c.apply(l); err != nil {
			return nil, err
		}
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
		for k, v := range l.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return bad("env", fmt.Sprintf("%q is not a valid variable name", k))
			}
			c.Env[k] = v
		}
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
	if l.Session != nil {
		if *l.Session != "fresh" && *l.Session != "continue" {
			return bad("session", fmt.Sprintf("must be \"fresh\" or \"continue\", not %q", *l.Session))
		}
		c.Session = *l.Session
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
	return nil
}

// EnvList returns the configured extra environment as sorted KEY=VALUE pairs.
func (c *Config) EnvList() []string {
	out := make([]string, 0, len(c.Env))
	for k, v := range c.Env {
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
		return c.Session
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
	}
	if name, ok := strings.CutPrefix(key, "backends."); ok {
		if b, ok := c.Backends[name]; ok {
			return fmt.Sprintf("command=%q prompt=%s", b.Command, b.Prompt)
		}
	}
	return ""
}

// AllKeys lists every key with a value: Keys, then the backends.
func (c *Config) AllKeys() []string {
	keys := slices.Clone(Keys)
	var b []string
	for name := range c.Backends {
		b = append(b, "backends."+name)
	}
	sort.Strings(b)
	return append(keys, b...)
}
