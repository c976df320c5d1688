package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// stderrKeep bounds the standard error kept for classification.
const stderrKeep = 64 << 10

// lineMax bounds one line of a CLI's JSON event stream.
const lineMax = 8 << 20

// invocation is how one call is made: arguments after the executable, the
// standard input (nil: none) and extra environment.
type invocation struct {
	Args  []string
	Stdin *string
	Env   []string
}

// streamParser turns one call's standard output into a Response.
type streamParser interface {
	// Line receives each line of standard output; cut tells that the line
	// was longer than the bound and was cut.
	Line(line []byte, cut bool)
	// Finish builds the response once the process ended.
	Finish(end callEnd) Response
}

// callEnd is how the process of a call ended.
type callEnd struct {
	ExitCode int
	Stopped  bool // jlgcli stopped it (timeout or interrupt)
	Stderr   string
}

// cliSpec describes one agent CLI.
type cliSpec struct {
	name string
	// bin is the executable looked up in PATH.
	bin string
	// minVersion is the oldest version whose headless interface is known.
	minVersion version
	// build makes the invocation for a request. promptFile is the path of a
	// file holding the prompt, for CLIs that can take neither a long
	// argument nor standard input.
	build func(req Request, promptFile func() (string, error)) (invocation, error)
	// newParser makes the parser of one call's output.
	newParser func() streamParser
	// activity reads one line of a call's output for ActivityOf: the
	// text and the tool calls it reports.
	activity func(a *activityReader, line []byte)
	// probe, when set, tells cheaply whether the CLI is authenticated. It
	// returns "" when it cannot tell.
	probe func(ctx context.Context, path string, env []string) (Status, string)
	// note, when set, warns of what will make the CLI's calls fail in the
	// environment env (Availability.Note); "" when nothing.
	note func(env []string) string
}

// cliAgent is an Agent over a known CLI.
type cliAgent struct {
	spec     cliSpec
	env      []string // base environment (nil: the process's own)
	explicit []string // the names of env the run gives it (Registry.Explicit)
	// untrusted are the names of env a project's file set
	// (Registry.Untrusted).
	untrusted []string
}

// Name implements Agent.
func (a *cliAgent) Name() string { return a.spec.name }

// Check implements Agent: the executable, its version, then the probe.
func (a *cliAgent) Check(ctx context.Context) Availability {
	// Found, and probed outside any sandbox, with jlgcli's own values of
	// what a project's file set.
	penv := proc.Trusted(baseEnv(a.env), a.untrusted)
	path, err := proc.LookPath(a.spec.bin, penv)
	if err != nil {
		return Availability{Status: Missing, Details: fmt.Sprintf("%s is not installed (not found in PATH); install it with: %s", a.spec.bin, InstallCommand(a.spec.name))}
	}
	av := Availability{Status: Available, Path: path}
	if a.spec.note != nil {
		av.Note = a.spec.note(penv)
	}
	out, err := quickOutput(ctx, penv, path, "--version")
	v, ok := parseVersion(out)
	if err != nil || !ok {
		av.Status = Unsupported
		av.Details = fmt.Sprintf("%s --version gave no version: %s", path, oneLine(out, err))
		return av
	}
	av.Version = v.String()
	if v.Less(a.spec.minVersion) {
		av.Status = Unsupported
		av.Details = fmt.Sprintf("%s %s is older than %s, the oldest version jlgcli knows how to drive", a.spec.bin, v, a.spec.minVersion)
		return av
	}
	if a.spec.probe != nil {
		if st, why := a.spec.probe(ctx, path, penv); st != "" {
			av.Status, av.Details = st, why
		}
	}
	return av
}

// Run implements Agent.
func (a *cliAgent) Run(ctx context.Context, req Request) (Response, error) {
	var tmpDir string
	defer func() {
		if tmpDir != "" {
			os.RemoveAll(tmpDir)
		}
	}()
	promptFile := func() (string, error) {
		d, err := os.MkdirTemp("", "jlgcli-prompt-")
		if err != nil {
			return "", err
		}
		tmpDir = d
		p := filepath.Join(d, "prompt.md")
		return p, os.WriteFile(p, []byte(req.Prompt), 0o600)
	}
	inv, err := a.spec.build(req, promptFile)
	if err != nil {
		return Response{}, err
	}
	env := append(baseEnv(a.env), req.Env...)
	env = append(env, inv.Env...)
	return runParsed(ctx, a.spec.name, append([]string{a.spec.bin}, inv.Args...), env, append(envNames(req.Env, inv.Env), a.explicit...), req, inv.Stdin, a.spec.newParser())
}

// runParsed runs one call of the CLI name ("" for a command backend) and
// feeds its output to p. The call is confined when req.Box is set: then of
// env it gets what its CLI needs, the user's passEnv and the variables
// named in explicit (those the run and the adapter give it).
func runParsed(ctx context.Context, name string, argv, env, explicit []string, req Request, stdin *string, p streamParser) (Response, error) {
	stderr := proc.NewTail(stderrKeep)
	var sink io.Writer = &proc.Lines{Max: lineMax, Fn: p.Line}
	if w, ok := p.(io.Writer); ok {
		sink = w // a parser that wants the raw output, not lines
	}
	var errOut io.Writer = stderr
	var events, notes *proc.Lines
	if req.Notice != nil {
		notes = &proc.Lines{Max: lineMax, Fn: func(line []byte, _ bool) {
			if s, ok := stderrNotice(string(line)); ok {
				req.Notice(s)
			}
		}}
		events = &proc.Lines{Max: lineMax, Fn: func(line []byte, _ bool) {
			if s, ok := eventNotice(line); ok {
				req.Notice(s)
			}
		}}
		errOut = io.MultiWriter(stderr, notes)
	}
	stdout := writerFunc(func(b []byte) {
		if req.Output != nil {
			req.Output(b)
		}
		if events != nil {
			events.Write(b)
		}
		sink.Write(b)
	})
	c := proc.Cmd{Argv: argv, Dir: req.Dir, Env: env, Stdout: stdout, Stderr: errOut, StallTimeout: req.StallTimeout}
	if stdin != nil {
		c.Stdin = strings.NewReader(*stdin)
	}
	if box := req.Box; box != nil {
		// What the call may write and reach follows from the trusted
		// environment: not from a variable a project's file set.
		cwd := req.Dir
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		confined, release, err := box.Agent(c, SandboxNeeds(name, box.Trusted(env), cwd), explicit)
		if err != nil {
			return Response{}, err
		}
		defer release()
		c = confined
	}
	res, err := proc.Run(ctx, c)
	if err != nil {
		return Response{}, err
	}
	if l, ok := sink.(*proc.Lines); ok {
		l.Flush()
	}
	if notes != nil {
		notes.Flush()
		events.Flush()
	}
	r := p.Finish(callEnd{ExitCode: res.ExitCode, Stopped: res.Stopped || res.Stalled, Stderr: stderr.String()})
	r.ExitCode = res.ExitCode
	r.Duration = res.Duration
	switch {
	case res.Limit != nil:
		// The cause, whatever the CLI made of it.
		r.Failure = &Failure{Kind: FailLimit, Message: res.Limit.Error()}
		var h interface{ Hint() string }
		if errors.As(res.Limit, &h) {
			r.Failure.Hint = h.Hint()
		}
	case res.Stalled:
		r.Failure = &Failure{Kind: FailStall, Message: fmt.Sprintf("stopped by jlgcli: no output for %s", req.StallTimeout)}
	case res.Stopped:
		r.Failure = &Failure{Kind: FailTimeout, Message: "stopped by jlgcli: " + context.Cause(ctx).Error()}
	}
	return r, nil
}

type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

// baseEnv is the environment a call starts from.
// envNames are the names of the variables of the lists.
func envNames(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, kv := range l {
			name, _, _ := strings.Cut(kv, "=")
			out = append(out, name)
		}
	}
	return out
}

func baseEnv(env []string) []string {
	if env != nil {
		return append([]string(nil), env...)
	}
	return os.Environ()
}

// quickOutput runs a short command (a version or auth probe) with a time
// limit and returns its combined output.
func quickOutput(ctx context.Context, env []string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out := proc.NewTail(16 << 10)
	res, err := proc.Run(ctx, proc.Cmd{Argv: argv, Env: baseEnv(env), Stdout: out, Stderr: out, Grace: time.Second})
	if err != nil {
		return "", err
	}
	if res.Stopped {
		return out.String(), errors.New("timed out")
	}
	if res.ExitCode != 0 {
		return out.String(), fmt.Errorf("exit status %d", res.ExitCode)
	}
	return out.String(), nil
}

func oneLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if err != nil {
		if s == "" {
			return err.Error()
		}
		return s + " (" + err.Error() + ")"
	}
	if s == "" {
		return "(no output)"
	}
	return s
}

// version is a dotted numeric version.
type version [3]int

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`)

// parseVersion finds the first dotted version in s.
func parseVersion(s string) (version, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return version{}, false
	}
	var v version
	for i := 0; i < 3; i++ {
		fmt.Sscan(m[i+1], &v[i])
	}
	return v, true
}

func (v version) Less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }
