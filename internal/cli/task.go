package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// taskFlags are the inputs of `task`: its flags that are configuration
// keys go into flags, the layer of the command line.
type taskFlags struct {
	promptFile   string
	flags        *config.Layer
	plan         bool
	base         string
	includeDirty bool
	repoURL      string
	detach       bool
	heartbeat    time.Duration
	// heartbeatSet: --heartbeat-timeout was given.
	heartbeatSet bool
}

func newTaskCmd(stdio *Stdio) *cobra.Command {
	o := &taskFlags{}
	cmd := &cobra.Command{
		Use:   "task [flags] PROMPT",
		Short: "Develop a change through tiers of agents until the project's checks pass",
		Long: strings.TrimSpace(`
Develop PROMPT on the git repository of the working directory: a developer
agent on the first tier changes the code in a worktree of its own
(.jlgcli/worktrees/<run>, branch jlgcli/<slug>-<id>); jlgcli then measures the
change (git diff against the task's base), runs the project's checks itself
(--check or [[checks]], else the detected defaults: go build/vet/test, npm
test, pytest, cargo), and decides: pass (commit), retry with the gate's
result, step back after a first loop (same diff, no change, same error 3
times, A→B→A, nearly the same diff), or escalate to the next tier after a
second loop or when the tier's attempts are spent. The next tier starts from
the task's base again (--escalate-from last keeps the failed tree) with the
history in its prompt. Every attempt's tree is kept under
refs/jlgcli/<run>/<n>. --budget stops the task before an attempt it cannot
pay for (exit 7); the last tier looping exits 5, spending its attempts 4.
The task is a run: Ctrl-C stops it (130) and 'jlgcli resume ID' continues.`),
		Args: cobra.MaximumNArgs(1),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.promptFile, "prompt-file", "f", "", "read the task from FILE")
	o.registerDeveloper(fs, "task")
	fs.StringVar(&o.base, "base", "", "start the task branch from REF instead of HEAD")
	fs.BoolVar(&o.includeDirty, "include-dirty", false, "bring the uncommitted changes of your tree in as the branch's first commit")
	o.registerTemporal(fs, "task")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.heartbeatSet = cmd.Flags().Changed("heartbeat-timeout")
		return runTaskCmd(cmd.Context(), stdio, o, args)
	}
	return cmd
}

// registerTemporal adds the flags of a submission to a Temporal server
// that are no configuration keys.
func (o *taskFlags) registerTemporal(fs *pflag.FlagSet, what string) {
	fs.StringVar(&o.repoURL, "repo", "", "with --temporal: the repository's URL as the workers clone it (default: this repository's origin)")
	fs.BoolVar(&o.detach, "detach", false, "with --temporal: print the run id and exit once the "+what+" is submitted")
	durationVar(fs, &o.heartbeat, "heartbeat-timeout", temporal.DefaultHeartbeat, "with --temporal: how long a silent worker keeps an attempt before another worker makes it again (at least 10s)")
}

// registerDeveloper adds the flags that say how a task is developed,
// which task and batch share: command's flags of the key table, and --plan.
func (o *taskFlags) registerDeveloper(fs *pflag.FlagSet, command string) {
	o.flags = flagLayer()
	bindKeys(fs, command, o.flags)
	fs.BoolVar(&o.plan, "plan", false, "ask a planner (config: [planner], else the first tier) for steps first")
}

func runTaskCmd(ctx context.Context, stdio *Stdio, o *taskFlags, args []string) error {
	out, err := runs.StartTask(ctx, stdio, runs.TaskCommand{Prompt: o.prompt(stdio, args), Flags: o.flags,
		Submission: o.submission(o.base), HeartbeatGiven: o.heartbeatSet})
	if err != nil {
		return err
	}
	if out.Result == nil {
		fmt.Fprintln(stdio.Out, out.ID) // --detach
		return nil
	}
	if g := out.Result.Git; out.Temporal && g != nil && g.Merge != nil && g.Merge.Commit != "" {
		stdio.Reporter().Notice(fmt.Sprintf("squash commit %s on branch %s", plain.ShortSHA(g.Merge.Commit), temporal.ReadyBranch(g.Branch)))
	}
	if out.PR != nil {
		// The task is done; what counts now is its pull request's end.
		return withCode(plain.TaskPRResult(stdio.Out, stdio.Reporter(), out.JSON, *out.Result, *out.PR), out.PR.ExitCode)
	}
	return reportTask(stdio, out.JSON, *out.Result)
}

// prompt is where the task's prompt comes from: args, --prompt-file or
// stdin.
func (o *taskFlags) prompt(stdio *Stdio, args []string) runs.Prompt {
	return runs.Prompt{Args: args, File: o.promptFile, Stdin: stdio.In}
}

// submission is how task's and batch's flags start a run, base the branch
// it starts from, and what they send to Temporal.
func (o *taskFlags) submission(base string) runs.Submission {
	return runs.Submission{RepoURL: o.repoURL, Base: base, Heartbeat: o.heartbeat, Detach: o.detach, IncludeDirty: o.includeDirty, Plan: o.plan}
}

// reportTask prints a task's result (plain.TaskResult).
func reportTask(stdio *Stdio, asJSON bool, res taskengine.Result) error {
	return withCode(plain.TaskResult(stdio.Out, stdio.Reporter(), asJSON, res), res.ExitCode)
}
