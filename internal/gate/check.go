// Package gate verifies an agent's claim that its work is done: it runs the
// user's checks (tests, linters, builds) in the working directory, compares
// their failures with a baseline taken before the first iteration, and reads
// a Markdown checklist for unticked items. It decides nothing about the loop:
// it returns results, verdicts and the prompt text that tells the agent what
// is still wrong.
package gate

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
)

// DefaultTimeout stops a check that runs longer than this when its Timeout is
// zero.
const DefaultTimeout = 10 * time.Minute

// Check is one verification command. Exactly one of Argv and Shell is set.
type Check struct {
	// Name identifies the check in results, prompts and baselines; for a
	// --check it is the command line itself.
	Name string `json:"name"`
	// Argv is the program and its arguments, run without a shell (config
	// `run = [...]`).
	Argv []string `json:"argv,omitempty"`
	// Shell is a command line written by the user, run with `sh -c`
	// (--check).
	Shell string `json:"shell,omitempty"`
	// Timeout stops the check (its whole process group); zero means
	// DefaultTimeout. It is kept as timeoutMs, in milliseconds.
	Timeout time.Duration `json:"-"`
	// Kind says what the check does (KindBuild, KindVet, KindTest), for
	// SortFastFirst and for the report; empty: inferred from the command
	// (InferKind).
	Kind string `json:"kind,omitempty"`
	// Format names the parser of the check's output (one of the Format*
	// constants); empty: inferred from the command (InferFormat).
	Format string `json:"format,omitempty"`
	// JUnit is where the check writes a JUnit XML report: a path relative
	// to the working directory, or a glob. When set, the report's test
	// failures and counts come from the files it matches that the check
	// wrote (created or modified while it ran).
	JUnit string `json:"junit,omitempty"`
}

// checkJSON is how a check is kept: camelCase, its timeout in
// milliseconds. Timeout is the Go duration, in nanoseconds, that runs
// written before timeoutMs hold.
type checkJSON struct {
	checkFields
	TimeoutMs millis.Duration `json:"timeoutMs,omitempty"`
	Timeout   int64           `json:"Timeout,omitempty"`
}

type checkFields Check // without its methods

// MarshalJSON writes the check with its timeout in milliseconds.
func (c Check) MarshalJSON() ([]byte, error) {
	return json.Marshal(checkJSON{checkFields: checkFields(c), TimeoutMs: millis.Of(c.Timeout)})
}

// UnmarshalJSON reads a check as MarshalJSON writes it, or as runs written
// before it kept it (capitalised names, the timeout in nanoseconds).
func (c *Check) UnmarshalJSON(data []byte) error {
	var v checkJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*c = Check(v.checkFields)
	switch {
	case v.TimeoutMs != 0:
		c.Timeout = v.TimeoutMs.Duration()
	case v.Timeout != 0:
		c.Timeout = time.Duration(v.Timeout)
	}
	return nil
}

// FieldError is a check that cannot run, with the field at fault: "run",
// "run[0]", "timeout", or "--check". A configuration loader prefixes
// Field with where the check came from (checks[2].run).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// ShellCheck makes a check of a --check command line: it runs with sh -c,
// and its name is the command line.
func ShellCheck(cmdline string) (Check, error) {
	c := Check{Name: strings.TrimSpace(cmdline), Shell: cmdline}
	if c.Name == "" {
		return c, &FieldError{"--check", "the command line is empty"}
	}
	return c, c.Validate()
}

// ArgvCheck makes a check of a configuration entry (`name`, `run`,
// `timeout`). An empty name becomes the command, its words joined by
// spaces; a zero timeout becomes DefaultTimeout when the check runs.
func ArgvCheck(name string, argv []string, timeout time.Duration) (Check, error) {
	c := Check{Name: strings.TrimSpace(name), Argv: argv, Timeout: timeout}
	if c.Name == "" {
		c.Name = strings.Join(argv, " ")
	}
	return c, c.Validate()
}

// Validate reports the first field that makes c impossible to run.
func (c Check) Validate() error {
	switch {
	case c.Shell != "" && len(c.Argv) > 0:
		return &FieldError{"run", "a check has either a command line (--check) or an argv (run), not both"}
	case len(c.Argv) > 0:
		if c.Argv[0] == "" {
			return &FieldError{"run[0]", "the program name is empty"}
		}
	case strings.TrimSpace(c.Shell) != "":
	case c.Shell != "":
		return &FieldError{"--check", "the command line is blank"}
	default:
		return &FieldError{"run", `is empty: give the program and its arguments, e.g. run = ["go", "test", "./..."]`}
	}
	if c.Timeout < 0 {
		return &FieldError{"timeout", fmt.Sprintf("must be positive, not %s", c.Timeout)}
	}
	return c.validateHints()
}

// Command is c's command as the user would type it: the command line of a
// shell check, or the argv quoted for a POSIX shell.
func (c Check) Command() string {
	if c.Shell != "" {
		return c.Shell
	}
	q := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func (c Check) argv() []string {
	if c.Shell != "" {
		return []string{"sh", "-c", c.Shell}
	}
	return c.Argv
}

func (c Check) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// shellQuote quotes s for sh when it holds anything but safe characters.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+,@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
