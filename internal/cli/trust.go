package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

type trustOptions struct {
	list, remove bool
}

func newTrustCmd(stdio *Stdio) *cobra.Command {
	o := &trustOptions{}
	cmd := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Trust a project's jlgcli.toml as it is: its hooks may then run outside the sandbox",
		Long: strings.TrimSpace(`
Trust FILE (default: the jlgcli.toml that a run started here reads) as it is now, as
'direnv allow' and 'mise trust' do: print what it runs or sends outside the sandbox
(its [[hooks]], the embeddings service of [loopDetection.embeddings], the Temporal
server of [temporal] and how jlgcli proves itself to it, the forge address and token
variable of [forge], a cwd or checklist outside the file's directory) and record its path and the
SHA-256 of its content in trusted.json beside your config.toml. Until then, and again
as soon as the file changes (an agent's change included), a run ignores those settings
and says so; the rest of the file, which runs confined, is honoured either way.
--list prints the files trusted and whether each is still as it was; --remove takes
the trust of FILE away.`),
		Args: cobra.MaximumNArgs(1),
	}
	cmd.Flags().BoolVar(&o.list, "list", false, "list the files trusted and whether each changed since")
	cmd.Flags().BoolVar(&o.remove, "remove", false, "take the trust of FILE away")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		file := ""
		if len(args) == 1 {
			file = args[0]
		}
		return runTrust(stdio, o, file)
	}
	return cmd
}

func runTrust(stdio *Stdio, o *trustOptions, file string) error {
	switch {
	case o.list && (o.remove || file != ""):
		return usagef("--list takes no FILE and no --remove")
	case o.list:
		record, files, err := runs.TrustedFiles(stdio.Env)
		if err != nil {
			return err
		}
		return plain.TrustedFiles(stdio.Out, record, files)
	}
	dir, err := stdio.WorkDir()
	if err != nil {
		return err
	}
	if o.remove {
		path, removed, err := runs.Untrust(stdio.Env, dir, file)
		if err != nil {
			return err
		}
		return plain.Untrusted(stdio.Out, path, removed)
	}
	t, err := runs.Trust(stdio.Env, dir, file, time.Now())
	if err != nil {
		return err
	}
	return plain.Trusted(stdio.Out, t)
}
