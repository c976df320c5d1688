package runs

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jlgcli/jlgcli/internal/exit"
)

// ReadPrompt is the prompt of a command line: its argument (args[0], at
// most one), in ("-": nil when there is none) or the file given with
// --prompt-file. Giving both, neither, or an empty prompt is a
// *exit.UsageError.
func ReadPrompt(in io.Reader, file string, args []string) (string, error) {
	var (
		data []byte
		err  error
	)
	switch {
	case file != "" && len(args) > 0:
		return "", usagef("give the prompt as an argument or with --prompt-file, not both")
	case file != "":
		data, err = os.ReadFile(file)
		if err != nil {
			return "", usagef("--prompt-file: %v", err)
		}
	case len(args) == 0:
		return "", usagef("missing PROMPT (give '-' to read it from stdin, or --prompt-file FILE)")
	case args[0] == "-":
		if in == nil {
			return "", usagef("no stdin to read the prompt from")
		}
		data, err = io.ReadAll(in)
		if err != nil {
			return "", fmt.Errorf("read prompt from stdin: %w", err)
		}
	default:
		data = []byte(args[0])
	}
	p := string(data)
	if strings.TrimSpace(p) == "" {
		return "", usagef("the prompt is empty")
	}
	return p, nil
}

// usagef is a usage error without a hint.
func usagef(format string, a ...any) error { return exit.Usagef("", format, a...) }
