package modelserver

import (
	"fmt"
	"time"
)

// Script is the list of turns the server plays, one per model request, in
// order.
type Script []Turn

// Usage is the token usage a turn reports to the client.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// U is shorthand for Usage{InputTokens: in, OutputTokens: out}.
func U(in, out int) Usage { return Usage{InputTokens: in, OutputTokens: out} }

// Role names what a scripted tool call does. The server maps it to the tool
// the client offered for it in that request (see roleCandidates).
type Role string

// The tool roles.
const (
	// RoleWriteFile creates or overwrites a file (Claude's Write, gemini's
	// write_file, opencode's write, copilot's create, codex's apply_patch).
	RoleWriteFile Role = "write_file"
	// RoleRunCommand runs a shell command (Claude's Bash, gemini's
	// run_shell_command, opencode's and copilot's bash, codex's
	// exec_command or shell).
	RoleRunCommand Role = "run_command"
)

// ToolCall is a tool call the model makes.
type ToolCall struct {
	// Role picks the client's tool by what it does; Name, when set, names
	// the tool exactly instead (it must be offered).
	Role Role
	Name string
	// Path and Content are the file of RoleWriteFile; Command is the shell
	// command of RoleRunCommand.
	Path    string
	Content string
	Command string
	// Args, when set, are sent as they are instead of arguments built from
	// the tool's schema (for Name calls).
	Args map[string]any
}

// FaultSpec is an HTTP error answer.
type FaultSpec struct {
	// Status is the HTTP status: 401, 403, 429, 500, 529, ...
	Status int
	// Message is the error message in the body; empty: a default per
	// status.
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header (whole
	// seconds).
	RetryAfter time.Duration
	// ResetAt, when set, is sent as the provider's rate-limit reset header
	// and body fields (see the protocol files).
	ResetAt time.Time
}

// CutKind says where a streamed answer is cut.
type CutKind int

// The cut points.
const (
	// NoCut: the answer is complete.
	NoCut CutKind = iota
	// CutMidStream: the connection is dropped after the first part of the
	// answer (the stream start and a first text delta) was sent.
	CutMidStream
)

// Turn is one scripted model answer. Build it with Text, WriteFile,
// RunCommand, Call or Fault and adjust it with its methods.
type Turn struct {
	// Text is the assistant text; with Tool set it precedes the call.
	Text string
	// Tool, when set, is a tool call ending the turn.
	Tool *ToolCall
	// Fault, when set, makes the turn an HTTP error.
	Fault *FaultSpec
	// Usage is reported in the answer.
	Usage Usage
	// Windows, when set, are sent with the answer as the subscription
	// window headers of the provider: Anthropic's
	// anthropic-ratelimit-unified-*, the Responses API's x-codex-* (the
	// other protocols send none).
	Windows []Window
	// Delay is waited before the first byte of the answer.
	Delay time.Duration
	// Cut drops the connection in the middle of a streamed answer.
	Cut CutKind
	// Sticky turns are not consumed: they answer every later model request.
	Sticky bool
	// StickyFor, when positive, makes the turn answer every model request
	// for that long after the first one it answered; the next request after
	// that goes to the next turn.
	StickyFor time.Duration
	// StickyMin, with StickyFor, is the fewest requests the turn answers
	// before it gives way, however long they take: more than one CLI
	// process's own retries, so that a CLI slowed down by a loaded machine
	// still gives up at least once.
	StickyMin int
}

// Text is a turn answering text with the given usage.
func Text(text string, usage Usage) Turn { return Turn{Text: text, Usage: usage} }

// WriteFile is a turn calling the client's file-writing tool. Path should be
// absolute for clients that require it (Claude Code, gemini, opencode).
func WriteFile(path, content string) Turn {
	return Turn{Tool: &ToolCall{Role: RoleWriteFile, Path: path, Content: content}}
}

// RunCommand is a turn calling the client's shell tool.
func RunCommand(command string) Turn {
	return Turn{Tool: &ToolCall{Role: RoleRunCommand, Command: command}}
}

// Call is a turn calling the tool named name with args as they are.
func Call(name string, args map[string]any) Turn {
	return Turn{Tool: &ToolCall{Name: name, Args: args}}
}

// Fault is a turn answering an HTTP error with the given status. Options set
// the message, Retry-After and reset time.
func Fault(status int, opts ...FaultOption) Turn {
	f := &FaultSpec{Status: status}
	for _, o := range opts {
		o(f)
	}
	return Turn{Fault: f}
}

// FaultOption adjusts a Fault.
type FaultOption func(*FaultSpec)

// RetryAfter sets the Retry-After header.
func RetryAfter(d time.Duration) FaultOption { return func(f *FaultSpec) { f.RetryAfter = d } }

// ResetAt sets the rate-limit reset time.
func ResetAt(t time.Time) FaultOption { return func(f *FaultSpec) { f.ResetAt = t } }

// Message sets the error message.
func Message(msg string) FaultOption { return func(f *FaultSpec) { f.Message = msg } }

// Slow is a turn that waits d before the first byte of its answer.
func Slow(d time.Duration, t Turn) Turn {
	t.Delay = d
	return t
}

// CutStream is a turn whose streamed answer is dropped mid-way.
func CutStream(t Turn) Turn {
	t.Cut = CutMidStream
	return t
}

// WithUsage returns t reporting usage u.
func (t Turn) WithUsage(u Usage) Turn {
	t.Usage = u
	return t
}

// Window is the use of one subscription window, sent with an answer.
type Window struct {
	// Claim is the window as the headers name it: "5h", "7d".
	Claim string
	// Utilization is its use, 0..1; ResetAt when it resets.
	Utilization float64
	ResetAt     time.Time
	// SurpassedThreshold, when positive, is the warning threshold the use
	// passed: Claude Code reports the window (allowed_warning) once one is.
	SurpassedThreshold float64
}

// WithWindows returns t sending the use of subscription windows ws.
func (t Turn) WithWindows(ws ...Window) Turn {
	t.Windows = ws
	return t
}

// WithText returns t with assistant text (before its tool call, if any).
func (t Turn) WithText(text string) Turn {
	t.Text = text
	return t
}

// Forever returns t made sticky: it is never consumed and so answers every
// later model request (for clients that retry a fault an unknown number of
// times).
func (t Turn) Forever() Turn {
	t.Sticky = true
	return t
}

// For returns t made sticky for d: it answers every model request that
// comes within d of the first one it answered, then gives way to the next
// turn (a rate limit that lifts, however often the client retries within it).
func (t Turn) For(d time.Duration) Turn {
	t.StickyFor = d
	return t
}

// AtLeast returns t, made sticky with For, answering at least n model
// requests before it gives way (n: more requests than one client process
// sends before it gives up on the fault).
func (t Turn) AtLeast(n int) Turn {
	t.StickyMin = n
	return t
}

// String describes the turn for logs and errors.
func (t Turn) String() string {
	switch {
	case t.Fault != nil:
		return fmt.Sprintf("fault %d", t.Fault.Status)
	case t.Tool != nil && t.Tool.Name != "":
		return "call " + t.Tool.Name
	case t.Tool != nil:
		return "tool " + string(t.Tool.Role)
	default:
		return fmt.Sprintf("text %q", t.Text)
	}
}

func defaultFaultMessage(status int) string {
	switch status {
	case 401:
		return "invalid x-api-key: the scripted server rejects this key"
	case 403:
		return "permission denied by the scripted server"
	case 429:
		return "rate limit reached (scripted): please try again later"
	case 500:
		return "internal server error (scripted)"
	case 503:
		return "service unavailable (scripted)"
	case 529:
		return "overloaded (scripted)"
	}
	return fmt.Sprintf("scripted error %d", status)
}
