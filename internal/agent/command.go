package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// Prompt modes of a command backend.
const (
	PromptStdin = "stdin" // the prompt is written to standard input
	PromptArg   = "arg"   // the prompt is the last argument
	PromptFile  = "file"  // the path of a file holding the prompt is the last argument
)

// Command is a user-defined backend: any program, run without a shell. Its
// reply is its standard output; its exit code is its exit code.
type Command struct {
	// BackendName is the name the user gave it in config.
	BackendName string
	// Argv is the program and its fixed arguments.
	Argv []string
	// Prompt is PromptStdin, PromptArg or PromptFile.
	Prompt string
	// Env is the base environment (nil: jlgcli's own).
	Env []string
	// Explicit are the names of the variables of Env the run gives it
	// (Registry.Explicit).
	Explicit []string
	// Untrusted are the names of Env a project's file set
	// (Registry.Untrusted).
	Untrusted []string
}

// Name implements Agent.
func (c *Command) Name() string { return c.BackendName }

// Check implements Agent: a command backend is available when its program
// exists; it has no version or authentication to check.
func (c *Command) Check(ctx context.Context) Availability {
	path, err := proc.LookPath(c.Argv[0], proc.Trusted(baseEnv(c.Env), c.Untrusted))
	if err != nil {
		return Availability{Status: Missing, Details: fmt.Sprintf("%s: command %q not found", c.BackendName, c.Argv[0])}
	}
	return Availability{Status: Available, Path: path}
}

// Run implements Agent.
func (c *Command) Run(ctx context.Context, req Request) (Response, error) {
	argv := append([]string(nil), c.Argv...)
	var stdin *string
	switch c.Prompt {
	case PromptArg:
		if len(req.Prompt) > PromptArgMax {
			return Response{}, fmt.Errorf("backend %s: the prompt is %d bytes, over the %d bytes jlgcli puts on a command line (set prompt = \"stdin\" or \"file\" for this backend): %w", c.BackendName, len(req.Prompt), PromptArgMax, ErrPromptTooLong)
		}
		argv = append(argv, req.Prompt)
	case PromptFile:
		dir, err := os.MkdirTemp("", "jlgcli-prompt-")
		if err != nil {
			return Response{}, err
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "prompt.md")
		if err := os.WriteFile(p, []byte(req.Prompt), 0o600); err != nil {
			return Response{}, err
		}
		argv = append(argv, p)
	default:
		stdin = &req.Prompt
	}
	env := append(baseEnv(c.Env), req.Env...)
	return runParsed(ctx, "", argv, env, append(envNames(req.Env), c.Explicit...), req, stdin, &plainParser{text: proc.NewTail(MaxReplyBytes)})
}

// plainParser takes standard output as the reply, as it is: it is written
// straight to a bounded tail (not split in lines), so the end of the output is
// what is kept however long it was.
type plainParser struct {
	text *proc.Tail
}

func (p *plainParser) Write(b []byte) (int, error) { return p.text.Write(b) }

// Line is not used: runParsed gives a parser that is an io.Writer the raw
// output instead.
func (p *plainParser) Line(line []byte, _ bool) {
	p.text.Write(line)
	p.text.Write([]byte{'\n'})
}

func (p *plainParser) Finish(end callEnd) Response {
	text := strings.TrimRight(p.text.String(), "\n")
	r := Response{Text: text, Truncated: p.text.Truncated()}
	if end.ExitCode != 0 && !end.Stopped {
		// Only its stderr: the reply is the agent's own prose, where "403"
		// or "rate limiter" may well appear in a fix it describes.
		r.Failure = classifyText(end.Stderr)
		if r.Failure == nil {
			r.Failure = &Failure{Kind: FailCrash, Message: crashMessage(end)}
		}
	}
	return r
}

func crashMessage(end callEnd) string {
	msg := fmt.Sprintf("exited with status %d", end.ExitCode)
	if s := lastLine(end.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
