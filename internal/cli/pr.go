package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

func newPRCmd(stdio *Stdio) *cobra.Command {
	var c runs.PRCommand
	cmd := &cobra.Command{
		Use:   "pr [flags] NUMBER|URL",
		Short: "Work a pull request until it is green, approved or merged",
		Long: strings.TrimSpace(`
Work the pull request NUMBER (or its address) of the repository of the
working directory until --until's target: green (every required check, else
every reported one, succeeded at the pull request's current head; no open
review thread begun by someone with write access; no conflict with its
base), approved (green, and approved or no review required) or merged (jlgcli
merges it by --merge-method). Waiting costs no agent call. Each condition in
the way becomes a round: a task (the same tiers, checks, sandbox and budget as
jlgcli task) on the pull request's head, told the failing check's step and log
tail, each thread's file, line, hunk and words; its commits are pushed to the
same branch on a lease (a push of someone else's is built upon, never
overwritten), and each thread it addressed is answered and resolved. A failed
check is run again once before an agent is woken; a condition is acted on once
per head. When it gives up it says why on the pull request and ends needs-you
(exit 8). The forge is chosen from the remote's address ([forge] for
self-hosted servers; its token from GH_TOKEN/GITHUB_TOKEN, the gh login, or
forge.tokenEnv). Ctrl-C or 'jlgcli stop' stops it; 'jlgcli resume ID' goes on.`),
		Args: cobra.ExactArgs(1),
	}
	fs := cmd.Flags()
	c.Flags = flagLayer()
	bindKeys(fs, "pr", c.Flags)
	fs.StringVar(&c.Remote, "remote", "origin", "the git remote the pull request's branch is on")
	fs.BoolVar(&c.Detach, "detach", false, "with --temporal: print the run id and exit once the loop is submitted")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c.Ref = args[0]
		return runPRCmd(cmd.Context(), stdio, c)
	}
	return cmd
}

func runPRCmd(ctx context.Context, stdio *Stdio, c runs.PRCommand) error {
	out, err := runs.StartPR(ctx, stdio, c)
	if err != nil {
		return err
	}
	if out.Result == nil {
		fmt.Fprintln(stdio.Out, out.ID) // --detach
		return nil
	}
	return withCode(plain.PRResult(stdio.Out, stdio.Reporter(), out.JSON, *out.Result), out.Result.ExitCode)
}
