package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/trust"
)

// Layer is one source of settings; nil fields are not set by it.
type Layer struct {
	// Name says where the values come from ("flag", a file path, ...).
	Name string
	// Project marks the project file (jlgcli.toml of the repository): it
	// may tighten the sandbox, never loosen it.
	Project bool `toml:"-"`
	// Trusted: the user trusted this project file as it is (jlgcli trust,
	// its path and Sum): its settings that run or send something outside
	// the sandbox (NeedsTrust) are honoured. A project file without it
	// gives them not (Config.Ignored says which).
	Trusted bool `toml:"-"`
	// Sum is the SHA-256 of the file's content as it was read and decoded
	// ("": no file).
	Sum             string                 `toml:"-"`
	Backend         *string                `toml:"backend"`
	Model           *string                `toml:"model"`
	MaxIterations   *int                   `toml:"maxIterations"`
	TimeoutMs       *millis.Duration       `toml:"timeoutMs"`
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
	WindowLimit     *float64               `toml:"windowLimit"`
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
	Attempts *int          `toml:"-"`
	Planner  *PlannerLayer `toml:"planner"`
	// Review is the [review] table, or --review: the reviewer tier.
	Review        *PlannerLayer                 `toml:"review"`
	BudgetUSD     *float64                      `toml:"budgetUsd"`
	Prices        map[string]map[string]float64 `toml:"prices"`
	EscalateFrom  *string                       `toml:"escalateFrom"`
	AntiGaming    *string                       `toml:"antiGaming"`
	EditTests     *bool                         `toml:"editTests"`
	LoopDetection *loopDetectionFile            `toml:"loopDetection"`
	Commit        *string                       `toml:"commit"`
	Merge         *string                       `toml:"merge"`
	Push          *bool                         `toml:"push"`
	PR            *bool                         `toml:"pr"`
	Until         *string                       `toml:"until"`
	MergeMethod   *string                       `toml:"mergeMethod"`
	Poll          *string                       `toml:"poll"`
	ChecksGrace   *string                       `toml:"checksGrace"`
	GiveUpAfter   *string                       `toml:"giveUpAfter"`
	MaxRounds     *int                          `toml:"maxRounds"`
	Trust         []string                      `toml:"trust"`
	Jobs          *int                          `toml:"jobs"`
	Temporal      *TemporalLayer                `toml:"temporal"`
	Forge         *ForgeLayer                   `toml:"forge"`
	Sandbox       *SandboxLayer                 `toml:"sandbox"`
	// Hooks are the [[hooks]]: those of every layer add up.
	Hooks       []hooks.Hook `toml:"hooks"`
	HookTimeout *string      `toml:"hookTimeout"`
	Notify      *bool        `toml:"notify"`

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
// --plan`, and the [review] table: the tier that reviews each change that
// passes the checks (Backend "none": no reviewer). An empty Backend is the
// top-level backend. A layer's table replaces that of the layers below.
type PlannerLayer struct {
	Backend string            `toml:"backend"`
	Model   string            `toml:"model"`
	Env     map[string]string `toml:"env"`
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

// TemporalLayer is the [temporal] table: the server that tasks are
// submitted to (task/batch --temporal) and that workers serve.
type TemporalLayer struct {
	Address       *string `toml:"address"`
	Namespace     *string `toml:"namespace"`
	TaskQueue     *string `toml:"taskQueue"`
	WorkerWait    *string `toml:"workerWait"`
	TLSCA         *string `toml:"tlsCa"`
	TLSCert       *string `toml:"tlsCert"`
	TLSKey        *string `toml:"tlsKey"`
	TLSServerName *string `toml:"tlsServerName"`
	APIKeyEnv     *string `toml:"apiKeyEnv"`
}

// ForgeLayer is the [forge] table: the forge that serves the pull
// requests of the remote (GitHub or Gitea), where its API is and which
// variable holds its token.
type ForgeLayer struct {
	Kind     *string `toml:"kind"`
	URL      *string `toml:"url"`
	TokenEnv *string `toml:"tokenEnv"`
}

// forge is l's [forge] table, made when absent.
func (l *Layer) forge() *ForgeLayer {
	if l.Forge == nil {
		l.Forge = &ForgeLayer{}
	}
	return l.Forge
}

// forgeOf is l's [forge] table, empty when absent.
func forgeOf(l *Layer) ForgeLayer {
	if l.Forge == nil {
		return ForgeLayer{}
	}
	return *l.Forge
}

// SandboxLayer is the [sandbox] table: how agents and checks are confined.
// Its lists add up over the layers.
type SandboxLayer struct {
	Mode          *string  `toml:"mode"`
	DenyRead      []string `toml:"denyRead"`
	AllowRead     []string `toml:"allowRead"`
	AllowWrite    []string `toml:"allowWrite"`
	AllowHosts    []string `toml:"allowHosts"`
	ChecksNetwork *bool    `toml:"checksNetwork"`
	Caches        *bool    `toml:"caches"`
	PassEnv       []string `toml:"passEnv"`
	// MaxProcesses, MaxMemory and MaxTmp are limits of each call; the
	// sizes as written ("8GiB", ParseSize).
	MaxProcesses *int    `toml:"maxProcesses"`
	MaxMemory    *string `toml:"maxMemory"`
	MaxTmp       *string `toml:"maxTmp"`
}

// sandbox is l's [sandbox] table, made when absent.
func (l *Layer) sandbox() *SandboxLayer {
	if l.Sandbox == nil {
		l.Sandbox = &SandboxLayer{}
	}
	return l.Sandbox
}

// sandboxOf is l's [sandbox] table, empty when absent.
func sandboxOf(l *Layer) SandboxLayer {
	if l.Sandbox == nil {
		return SandboxLayer{}
	}
	return *l.Sandbox
}

// temporal is l's [temporal] table, made when absent.
func (l *Layer) temporal() *TemporalLayer {
	if l.Temporal == nil {
		l.Temporal = &TemporalLayer{}
	}
	return l.Temporal
}

// temporalOf is l's [temporal] table, empty when absent.
func temporalOf(l *Layer) TemporalLayer {
	if l.Temporal == nil {
		return TemporalLayer{}
	}
	return *l.Temporal
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
	// WindowLimit is the backend's own windowLimit; the table of a
	// built-in backend may hold only it.
	WindowLimit *float64 `toml:"windowLimit"`
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
	l.Sum = trust.Sum(data)
	l.lines = lines
	paths := []*string{l.Cwd, l.StateDir, l.Checklist}
	if t := l.Temporal; t != nil {
		paths = append(paths, t.TLSCA, t.TLSCert, t.TLSKey)
	}
	for _, p := range paths {
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
	case len(key) == 2 && key[0] == "hooks":
		return " (a hook has: on, command, url)"
	case len(key) == 2 && key[0] == "tiers":
		return " (a tier has: name, backend, model, env, attempts)"
	case len(key) == 2 && key[0] == "planner":
		return " (planner has: backend, model, env)"
	case len(key) == 2 && key[0] == "review":
		return " (review has: backend, model, env)"
	case len(key) == 2 && key[0] == "sandbox":
		return " (sandbox has: mode, denyRead, allowRead, allowWrite, allowHosts, checksNetwork, caches, passEnv, maxProcesses, maxMemory, maxTmp)"
	case len(key) == 2 && key[0] == "temporal":
		return " (temporal has: address, namespace, taskQueue, workerWait, tlsCa, tlsCert, tlsKey, tlsServerName, apiKeyEnv)"
	case len(key) == 2 && key[0] == "forge":
		return " (forge has: kind, url, tokenEnv)"
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
