package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/flow"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/runs"
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
	durationVar(fs, &o.heartbeat, "heartbeat-timeout", flow.DefaultHeartbeat, "with --temporal: how long a silent worker keeps an attempt before another worker makes it again (at least 10s)")
}

// registerDeveloper adds the flags that say how a task is developed,
// which task and batch share: command's flags of the key table, and --plan.
func (o *taskFlags) registerDeveloper(fs *pflag.FlagSet, command string) {
	o.flags = flagLayer()
	bindKeys(fs, command, o.flags)
	fs.BoolVar(&o.plan, "plan", false, "ask a planner (config: [planner], else the first tier) for steps first")
}

func runTaskCmd(ctx context.Context, stdio *Stdio, o *taskFlags, args []string) error {
	prompt, err := readPrompt(stdio, o.promptFile, args)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(stdio, o.flags)
	if err != nil {
		return err
	}
	stdio.envValue = envValue(stdio, cfg)
	if cfg.Temporal.Address != "" {
		return runTaskTemporal(ctx, stdio, cfg, o, prompt)
	}
	switch {
	case o.repoURL != "" || o.detach || o.heartbeatSet:
		return usagef("--repo, --detach and --heartbeat-timeout are for a task sent to a Temporal server (--temporal HOST:PORT)")
	case cfg.Merge == git.MergePush:
		return keyError(cfg, "merge", "push is for a task sent to a Temporal server (--temporal); here: squash or none")
	}
	s, failed, err := runs.TaskSpec(ctx, cfg, o.plan, stdio.base())
	if err != nil {
		return err
	}
	if failed != nil {
		return reportTask(stdio, cfg.JSON, *failed)
	}
	p := stdio.parts(cfg.Quiet, true, false)
	if c, ok := p.TaskObserver.(interface{ Close() }); ok {
		defer c.Close()
	}
	res, err := runs.StartTask(ctx, cfg, runs.Task{Prompt: prompt, Spec: s, Base: o.base, IncludeDirty: o.includeDirty}, p)
	if err != nil {
		return err
	}
	return reportTask(stdio, cfg.JSON, res)
}

// reportTask prints a task's result: the JSON object, or a summary on
// stdout, and why a task that is not done stopped on stderr.
func reportTask(stdio *Stdio, asJSON bool, res engine.TaskResult) error {
	if asJSON {
		if err := printJSON(stdio, res); err != nil {
			return err
		}
	} else {
		printTaskSummary(stdio, res)
	}
	if res.Status != engine.StatusDone {
		say := stdio.reporter()
		say.Notice(fmt.Sprintf("%s: %s", res.Status, res.Details))
		if h := taskHint(res); h != "" {
			say.Hint(h)
		}
	}
	if res.ExitCode == 0 {
		return nil
	}
	return &exitError{code: res.ExitCode}
}

// taskHint says what to do about a task that stopped for a reason the user
// can fix: the agent's own failure hint (agent.Failure.Hint) of the last
// attempt that had one, else the hint of the status.
func taskHint(res engine.TaskResult) string {
	for i := len(res.Attempts) - 1; i >= 0; i-- {
		if f := res.Attempts[i].Failure; f != nil && f.Hint != "" {
			return f.Hint
		}
	}
	return statusHint(engine.Result{Status: res.Status, Backend: res.Backend})
}

func printTaskSummary(stdio *Stdio, res engine.TaskResult) {
	w := stdio.Out
	if res.Summary != "" {
		fmt.Fprintln(w, res.Summary)
	}
	for _, t := range res.Tiers {
		if t.Attempts == 0 {
			continue
		}
		fmt.Fprintf(w, "  tier %s: %s, %s, %s\n", t.Name, plural.N(t.Attempts, "attempt"), cost.Phrase(t.CostUSD, t.CostKnown, t.CostEstimated), t.Outcome)
	}
	for _, d := range res.Detections {
		fmt.Fprintf(w, "  loop %s (attempts %s, tier %s): %s\n", d.Names(), joinInts(d.Attempts), d.Tier, d.Action)
	}
	g := res.Git
	if g == nil {
		return
	}
	switch {
	case g.Merge != nil && g.Merge.Status == git.MergeFastForwarded:
		fmt.Fprintf(w, "committed on %s, fast-forwarded to %s\n", g.Merge.Into, shortSHA(g.Merge.Commit))
	case g.Merge != nil && g.Merge.Status == git.MergeMerged:
		fmt.Fprintf(w, "merged into %s as %s (branch %s keeps the attempts)\n", g.Merge.Into, shortSHA(g.Merge.Commit), g.Branch)
	case g.Merge != nil && g.Merge.Command != "":
		fmt.Fprintf(w, "branch %s passed the checks; not merged (%s). To merge:\n  %s\n", g.Branch, orText(g.Merge.Reason, string(g.Merge.Status)), g.Merge.Command)
	case g.Discarded:
		fmt.Fprintf(w, "no attempt ran: branch %s and its worktree were removed (nothing to keep)\n", g.Branch)
	case g.WIP != "":
		fmt.Fprintf(w, "manual intervention required: review branch %s (WIP commit %s); attempts under %s\n", g.Branch, shortSHA(g.WIP), g.Refs)
	default:
		fmt.Fprintf(w, "branch %s; attempts under %s\n", g.Branch, g.Refs)
	}
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, ",")
}

func shortSHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
