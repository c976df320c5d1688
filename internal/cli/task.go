package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/proc"
	taskreport "github.com/jlgcli/jlgcli/internal/report"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/ui"
)

// taskFlags are the inputs of `task`.
type taskFlags struct {
	promptFile   string
	flags        settingFlags
	tiers        []string
	attempts     int
	budget       float64
	plan         bool
	escalateFrom string
	base         string
	includeDirty bool
	commit       string
	merge        string
	push         bool
	pr           bool
	antiGaming   string
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
	o.flags.register(fs, false)
	fs.Lookup("timeout").DefValue = engine.DefaultTaskTimeout.String()
	fs.Lookup("timeout").Usage = "global time limit of the task as a Go duration (default 30m; config: timeoutMs)"
	fs.StringVar(&o.flags.stateDir, "state-dir", "", "where runs are kept (config: stateDir)")
	fs.DurationVar(&o.flags.stallTimeout, "stall-timeout", config.DefaultStallTimeout, "kill an agent that prints nothing this long; the attempt counts (config: stallTimeout)")
	fs.DurationVar(&o.flags.maxWait, "max-wait", config.DefaultMaxWait, "longest total wait for rate limits to reset; 0: stop at the first, exit 69 (config: maxWait)")
	fs.StringArrayVar(&o.flags.checks, "check", nil, "a command line (sh -c) of the gate, repeatable; replaces the detected defaults (config: [[checks]])")
	fs.StringArrayVar(&o.tiers, "tier", nil, "a developer tier BACKEND[:MODEL], repeatable, cheapest first (config: [[tiers]])")
	fs.IntVar(&o.attempts, "attempts", 3, "attempts per tier and step (config: attempts of each [[tiers]])")
	fs.Float64Var(&o.budget, "budget", 1.00, "cost budget of the task in US dollars; 0: none (config: budgetUsd)")
	fs.BoolVar(&o.plan, "plan", false, "ask a planner (config: [planner], else the first tier) for steps first")
	fs.StringVar(&o.escalateFrom, "escalate-from", "base", "where a tier that takes over starts: base or last (config: escalateFrom)")
	fs.StringVar(&o.base, "base", "", "start the task branch from REF instead of HEAD")
	fs.BoolVar(&o.includeDirty, "include-dirty", false, "bring the uncommitted changes of your tree in as the branch's first commit")
	fs.StringVar(&o.commit, "commit", "branch", "branch: commits on the task branch, squash-merged on success; direct: the commits land on the current branch, which must be clean (config: commit)")
	fs.StringVar(&o.merge, "merge", "squash", "on success: squash (merge into the base branch as one commit) or none (config: merge)")
	fs.BoolVar(&o.push, "push", false, "push the task branch to its remote, never with force (config: push)")
	fs.BoolVar(&o.pr, "pr", false, "open a pull request with gh, the report as its body (config: pr)")
	fs.StringVar(&o.antiGaming, "anti-gaming", "refuse", "a change that runs fewer tests, skips more or deletes test files: refuse or warn (config: antiGaming)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runTaskCmd(cmd.Context(), stdio, cmd, o, args)
	}
	return cmd
}

// taskSettings are what a task was started with, kept in its meta.json so
// that resume runs it again the same way.
type taskSettings struct {
	Tiers          []tierSetting                `json:"tiers"`
	Planner        *tierSetting                 `json:"planner,omitempty"`
	Plan           bool                         `json:"plan,omitempty"`
	Commands       map[string]agent.CommandSpec `json:"commands,omitempty"`
	Repo           string                       `json:"repo"`
	Env            []string                     `json:"env,omitempty"`
	TimeoutMs      int64                        `json:"timeoutMs"`
	StallTimeoutMs int64                        `json:"stallTimeoutMs"`
	MaxWaitMs      int64                        `json:"maxWaitMs"`
	BudgetUSD      float64                      `json:"budgetUsd"`
	Prices         cost.Table                   `json:"prices,omitempty"`
	EscalateFrom   string                       `json:"escalateFrom"`
	AntiGaming     string                       `json:"antiGaming"`
	Checks         []gate.Check                 `json:"checks"`
	Similarity     float64                      `json:"similarity,omitempty"`
	SameErrors     int                          `json:"sameErrors,omitempty"`
	Embeddings     *config.Embeddings           `json:"embeddings,omitempty"`
	Commit         string                       `json:"commit"`
	Merge          string                       `json:"merge"`
	Push           bool                         `json:"push,omitempty"`
	PR             bool                         `json:"pr,omitempty"`
	Worktree       git.Worktree                 `json:"worktree"`
	DirtyLeftOut   bool                         `json:"dirtyLeftOut,omitempty"`
}

type tierSetting struct {
	Name     string   `json:"name"`
	Backend  string   `json:"backend"`
	Model    string   `json:"model,omitempty"`
	Env      []string `json:"env,omitempty"`
	Attempts int      `json:"attempts"`
}

// layer adds the task's own flags to the setting flags' layer.
func (o *taskFlags) layer(cmd *cobra.Command) (*config.Layer, error) {
	fs := cmd.Flags()
	l, err := o.flags.layer(fs)
	if err != nil {
		return nil, err
	}
	set := fs.Changed
	if set("tier") {
		for _, t := range o.tiers {
			backend, model, _ := strings.Cut(t, ":")
			if backend == "" {
				return nil, usagef("--tier %q: want BACKEND[:MODEL]", t)
			}
			l.Tiers = append(l.Tiers, config.TierLayer{Name: tierName(t), Backend: backend, Model: model})
		}
	}
	if set("attempts") {
		if o.attempts < 1 {
			return nil, usagef("--attempts must be at least 1, not %d", o.attempts)
		}
		l.Attempts = &o.attempts
	}
	if set("budget") {
		l.BudgetUSD = &o.budget
	}
	if set("escalate-from") {
		l.EscalateFrom = &o.escalateFrom
	}
	if set("commit") {
		l.Commit = &o.commit
	}
	if set("merge") {
		l.Merge = &o.merge
	}
	if set("push") {
		l.Push = &o.push
	}
	if set("pr") {
		l.PR = &o.pr
	}
	if set("anti-gaming") {
		l.AntiGaming = &o.antiGaming
	}
	return l, nil
}

func runTaskCmd(ctx context.Context, stdio *Stdio, cmd *cobra.Command, o *taskFlags, args []string) error {
	prompt, err := readPrompt(stdio, o.promptFile, args)
	if err != nil {
		return err
	}
	flags, err := o.layer(cmd)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(stdio, flags)
	if err != nil {
		return err
	}
	repo, err := git.Open(ctx, cfg.Cwd)
	if err != nil {
		if errors.Is(err, git.ErrNotRepository) {
			return &hintError{usagef("jlgcli task works on a git repository: %s is not in one", cfg.Cwd), "run 'git init' and commit your code first, or use 'jlgcli loop'"}
		}
		return err
	}
	if _, err := repo.Head(ctx); errors.Is(err, git.ErrNoCommits) {
		return &hintError{usagef("the repository %s has no commit yet", repo.Dir), "commit your code first: the task branch starts from a commit"}
	}

	s := taskSettingsOf(cfg, repo.Dir)
	s.Plan = o.plan
	// Pick the single tier's backend as loop does when none is configured.
	if len(s.Tiers) == 1 && s.Tiers[0].Backend == "" {
		res, a := pickAgent(stdio, cfg, registry(stdio, cfg.Backends, cfg.EnvList()))
		if a == nil {
			return reportTask(stdio, cfg.JSON, taskFailure(res))
		}
		s.Tiers[0].Backend, s.Tiers[0].Name = a.Name(), a.Name()
	}
	tiers, planner, bad := s.agents(stdio)
	if bad != nil {
		return reportTask(stdio, cfg.JSON, *bad)
	}

	// Nothing is created for a task whose agents cannot run.
	all := tiers
	if s.Plan && planner != nil {
		all = append(slices.Clip(tiers), *planner)
	}
	if st, details := engine.CheckTiers(ctx, all); st != "" {
		return reportTask(stdio, cfg.JSON, taskFailure(engine.Result{Status: st, ExitCode: st.ExitCode(), Backend: s.Tiers[0].Backend, Details: details, Text: details}))
	}

	// The gate: the configured checks, else what the project looks like.
	if len(s.Checks) == 0 {
		s.Checks = gate.DetectDefaults(repo.Dir)
		if len(s.Checks) == 0 {
			return &hintError{usagef("no checks to judge the work with: none configured, and no go.mod, package.json test script, Python or Cargo project found in %s", repo.Dir),
				"give the gate's commands with --check 'CMD' (repeatable) or [[checks]] in jlgcli.toml"}
		}
	}

	dirty, err := repo.Dirty(ctx)
	if err != nil {
		return err
	}
	if cfg.Commit == config.CommitDirect {
		// Direct commits land on the checked-out branch: it must be clean
		// and be where the task starts.
		switch cur, err := repo.CurrentBranch(ctx); {
		case err != nil:
			return err
		case dirty:
			return &hintError{usagef("--commit direct refuses to start: %s has uncommitted changes", repo.Dir),
				"commit or stash them first, or use --commit branch (the default), which leaves your tree alone"}
		case cur == "":
			return &hintError{usagef("--commit direct needs a checked-out branch; HEAD is detached in %s", repo.Dir), "check out the branch the commits should land on"}
		case o.base != "" || o.includeDirty:
			return usagef("--commit direct commits on the current branch: it takes neither --base nor --include-dirty")
		}
	}
	root, err := stateRoot(stdio, repo.Dir, cfg.StateDir)
	if err != nil {
		return err
	}
	id := store.NewRunID(time.Now())
	wt, err := repo.NewWorktree(ctx, id, prompt, o.base, o.includeDirty)
	if err != nil {
		return fmt.Errorf("create the task's worktree: %w", err)
	}
	s.Worktree = *wt
	s.DirtyLeftOut = dirty && !wt.DirtyIncluded
	if !cfg.Quiet {
		fmt.Fprintf(stdio.Err, "jlgcli: task %s on branch %s (worktree %s)\n", id, wt.Branch, relTo(repo.Dir, wt.Path))
		if s.DirtyLeftOut {
			fmt.Fprintf(stdio.Err, "jlgcli: your working tree has uncommitted changes; the task starts from %s without them (--include-dirty brings them in)\n", shortSHA(wt.Base))
		}
	}
	opts, _ := json.Marshal(s)
	run, err := store.Create(root, id, store.Meta{Command: "task", Backend: s.Tiers[0].Backend, Prompt: prompt, Options: opts, Cwd: repo.Dir})
	if err != nil {
		_ = wt.Remove(context.WithoutCancel(ctx))
		return fmt.Errorf("create run: %w", err)
	}
	defer run.Close()
	j := openJournal(stdio, root, run)
	defer j.close()
	res, err := s.run(ctx, stdio, cfg.Quiet, run, j.journal, prompt, tiers, planner, nil, true)
	if err != nil {
		return err
	}
	return reportTask(stdio, cfg.JSON, res)
}

func taskSettingsOf(cfg *config.Config, repoDir string) taskSettings {
	s := taskSettings{Repo: repoDir, Env: cfg.EnvList(), StallTimeoutMs: cfg.StallTimeout.Milliseconds(),
		MaxWaitMs: cfg.MaxWait.Milliseconds(), BudgetUSD: cfg.BudgetUSD, Prices: cfg.Prices, EscalateFrom: cfg.EscalateFrom,
		AntiGaming: cfg.AntiGaming, Similarity: cfg.LoopDetection.Similarity, SameErrors: cfg.LoopDetection.SameErrorCount,
		Embeddings: cfg.LoopDetection.Embeddings, Commit: cfg.Commit, Merge: cfg.Merge, Push: cfg.Push, PR: cfg.PR,
		Commands: cfg.Backends}
	s.TimeoutMs = cfg.Timeout.Milliseconds()
	if cfg.Sources["timeoutMs"] == "default" {
		s.TimeoutMs = engine.DefaultTaskTimeout.Milliseconds()
	}
	s.Checks = gateChecks(cfg.Checks)
	for _, t := range cfg.Tiers {
		s.Tiers = append(s.Tiers, tierSetting{Name: t.Name, Backend: t.Backend, Model: t.Model, Env: t.EnvList(), Attempts: t.Attempts})
	}
	if len(s.Tiers) == 0 {
		attempts := 3
		if cfg.Attempts > 0 {
			attempts = cfg.Attempts
		}
		s.Tiers = []tierSetting{{Name: cfg.Backend, Backend: cfg.Backend, Model: cfg.Model, Attempts: attempts}}
	}
	// Two tiers of the same name would be told apart nowhere.
	seen := map[string]int{}
	for i := range s.Tiers {
		seen[s.Tiers[i].Name]++
		if n := seen[s.Tiers[i].Name]; n > 1 {
			s.Tiers[i].Name = fmt.Sprintf("%s#%d", s.Tiers[i].Name, n)
		}
	}
	if p := cfg.Planner; p != nil {
		s.Planner = &tierSetting{Name: "planner", Backend: p.Backend, Model: p.Model, Env: p.EnvList(), Attempts: 1}
	}
	return s
}

// agents resolves the tiers' backends; a result that says why when one is
// unknown.
func (s taskSettings) agents(stdio *Stdio) ([]engine.Tier, *engine.Tier, *engine.TaskResult) {
	get := func(t tierSetting) (engine.Tier, *engine.TaskResult) {
		reg := registry(stdio, s.Commands, append(slices.Clip(s.Env), t.Env...))
		a, err := reg.Get(t.Backend)
		if err != nil {
			r := taskFailure(engine.Result{Status: engine.StatusBackendUnknown, ExitCode: engine.StatusBackendUnknown.ExitCode(),
				Backend: t.Backend, Details: fmt.Sprintf("tier %s: %v", t.Name, err)})
			return engine.Tier{}, &r
		}
		return engine.Tier{Name: t.Name, Backend: t.Backend, Model: t.Model, Env: t.Env, Attempts: t.Attempts, Agent: a}, nil
	}
	var tiers []engine.Tier
	for _, t := range s.Tiers {
		tr, bad := get(t)
		if bad != nil {
			return nil, nil, bad
		}
		tiers = append(tiers, tr)
	}
	var planner *engine.Tier
	if s.Planner != nil {
		p := *s.Planner
		if p.Backend == "" {
			p.Backend = s.Tiers[0].Backend
		}
		tr, bad := get(p)
		if bad != nil {
			return nil, nil, bad
		}
		planner = &tr
	}
	return tiers, planner, nil
}

// taskFailure is a task that could not start, as a result.
func taskFailure(r engine.Result) engine.TaskResult {
	return engine.TaskResult{Status: r.Status, ExitCode: r.ExitCode, Backend: r.Backend, Details: r.Details, Text: r.Text,
		Tiers: []engine.TierSummary{}, Attempts: []engine.Attempt{}, Detections: []engine.Detection{}, Flaky: []string{}, Commits: []string{}}
}

// eventTaskBaseline is the journal event that holds the gate's baseline.
const eventTaskBaseline = "gate-baseline"

// run runs (or resumes) a task on its journal, then ends it: the WIP commit
// of a failure, the worktree removed, the merge of a success, the report.
func (s taskSettings) run(ctx context.Context, stdio *Stdio, quiet bool, run *store.Run, j journal, prompt string,
	tiers []engine.Tier, planner *engine.Tier, resume *engine.TaskResume, checked bool) (engine.TaskResult, error) {
	wt := s.Worktree
	env := append(slices.Clip(s.Env), runTag(run.ID))

	// The baseline of the gate: how the checks fare before any change.
	baseline, err := s.baseline(ctx, stdio, quiet, run, j, env)
	if err != nil {
		return engine.TaskResult{}, err
	}
	loops := detect.LoopDetector{Similarity: s.Similarity, SameErrorCount: s.SameErrors}
	if e := s.Embeddings; e != nil {
		key := ""
		if e.APIKeyEnv != "" {
			key = stdio.getenv(e.APIKeyEnv)
		}
		loops.Embedder = detect.OpenAIEmbedder{BaseURL: e.URL, Model: e.Model, APIKey: key}
		loops.EmbeddingThreshold = e.Threshold
	}
	o := engine.TaskOptions{
		RunID: run.ID, Task: prompt, Tiers: tiers, Plan: s.Plan, Planner: planner,
		Workspace: worktreeSpace{&wt},
		Tester:    &taskTester{dir: wt.Path, env: env, checks: s.Checks, baseline: baseline, gaming: s.AntiGaming},
		Loops:     loops, Budget: s.BudgetUSD, Prices: cost.DefaultTable().Merge(s.Prices),
		Timeout: time.Duration(s.TimeoutMs) * time.Millisecond, EscalateFrom: s.EscalateFrom,
		StallTimeout: time.Duration(s.StallTimeoutMs) * time.Millisecond, MaxWait: time.Duration(s.MaxWaitMs) * time.Millisecond,
		Env: []string{runTag(run.ID)}, Journal: j, Resume: resume, Checked: checked,
	}
	var live *taskLine
	if !quiet {
		live = newTaskLine(stdio)
		o.Observer = live
	}
	res := engine.RunTask(ctx, o)
	if live != nil {
		live.Close()
	}
	res.Git = s.finish(ctx, stdio, quiet, run, &res)
	if resumable(res.Status) || res.Status == engine.StatusBudgetExceeded {
		fmt.Fprintf(stdio.Err, "jlgcli: task %s stopped (%s); continue it with: jlgcli resume %s\n", run.ID, res.Status, run.ID)
	}
	return res, nil
}

// baseline takes (or reads back) the gate's report before any change.
func (s taskSettings) baseline(ctx context.Context, stdio *Stdio, quiet bool, run *store.Run, j journal, env []string) (*gate.Report, error) {
	events, err := runEvents(stdio, run, true)
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		if ev.Type == eventTaskBaseline {
			var r gate.Report
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				return nil, fmt.Errorf("run %s: baseline: %w", run.ID, err)
			}
			return &r, nil
		}
	}
	if !quiet {
		fmt.Fprintf(stdio.Err, "jlgcli: running %d check(s) on the starting point for the baseline\n", len(s.Checks))
	}
	dir := s.Worktree.Path
	r := gate.BaselineReport(ctx, dir, env, s.Checks)
	if r == nil || r.Interrupted || ctx.Err() != nil {
		return nil, nil
	}
	data, _ := json.Marshal(r)
	if err := j.Record(engine.Event{Type: eventTaskBaseline, Time: time.Now(), Data: data}); err != nil {
		return nil, fmt.Errorf("record the baseline: %w", err)
	}
	return r, nil
}

// finish ends a task's git life: a failed task's work is committed as WIP,
// the worktree is removed, a successful task is squash-merged into its base
// branch when that is checked out and clean.
func (s taskSettings) finish(ctx context.Context, stdio *Stdio, quiet bool, run *store.Run, res *engine.TaskResult) *engine.GitInfo {
	ctx = context.WithoutCancel(ctx) // Ctrl-C must not leave the branch half done
	wt := s.Worktree
	info := &engine.GitInfo{Mode: "branch", Repo: s.Repo, Worktree: wt.Path, Branch: wt.Branch, Base: wt.Base,
		BaseBranch: wt.BaseBranch, DirtyIncluded: wt.DirtyIncluded, DirtyLeftOut: s.DirtyLeftOut,
		Refs: git.RefPrefix + run.ID + "/"}
	warn := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		info.Warnings = append(info.Warnings, msg)
		fmt.Fprintf(stdio.Err, "jlgcli: warning: %s\n", msg)
	}
	if res.Status != engine.StatusDone && len(res.Attempts) > 0 {
		msg := fmt.Sprintf("WIP: %s (needs manual review)\n\njlgcli task %s stopped: %s.\n%s\n", engine.Subject(res.Task), run.ID, res.Status, res.Details)
		if sha, ok, err := wt.Commit(ctx, msg); err != nil {
			warn("commit the partial work: %v (it is kept in %s)", err, wt.Path)
			return info
		} else if ok {
			info.WIP = sha
		}
	}
	if err := wt.Remove(ctx); err != nil {
		warn("remove the worktree %s: %v", wt.Path, err)
	} else {
		info.Removed = true
	}
	repo := &git.Repo{Dir: s.Repo}
	switch {
	case s.Commit == config.CommitDirect && (res.Status == engine.StatusDone || info.WIP != ""):
		// Seed 003's direct strategy: the commits, a failure's WIP too, land
		// on the current branch.
		info.Mode = config.CommitDirect
		info.Merge = fastForward(ctx, repo, wt)
	case res.Status == engine.StatusDone:
		info.Merge = s.merge(ctx, res)
	}
	if m := info.Merge; m != nil && m.Status == "refused" {
		warn("%s was not merged (%s); to merge it: %s", wt.Branch, m.Reason, m.Command)
	}
	if (s.Push || s.PR) && len(res.Attempts) > 0 {
		if rm, err := repo.Remote(ctx, wt.Branch); err != nil {
			warn("push: %v", err)
		} else if err := repo.Push(ctx, wt.Branch); err != nil {
			warn("%v", err)
		} else {
			info.Pushed, info.Remote = true, rm
			if !quiet {
				fmt.Fprintf(stdio.Err, "jlgcli: pushed %s to %s\n", wt.Branch, rm)
			}
		}
	}
	res.Git = info
	writeReports(stdio, run, *res)
	if s.PR && info.Pushed {
		if url, err := openPR(ctx, stdio, s.Repo, wt, *res, filepath.Join(run.Dir, "report.md")); err != nil {
			warn("pull request: %v", err)
		} else {
			info.PR = url
			writeReports(stdio, run, *res)
		}
	}
	return info
}

// fastForward lands a task branch's commits on the branch it started from.
func fastForward(ctx context.Context, repo *git.Repo, wt git.Worktree) *engine.MergeInfo {
	sha, err := repo.FastForward(ctx, wt.BaseBranch, wt.Branch)
	return mergeOutcome(&engine.MergeInfo{Into: wt.BaseBranch}, "fast-forwarded", sha, err)
}

// writeReports writes the task's final report into its run directory:
// report.json (the result) and report.md.
func writeReports(stdio *Stdio, run *store.Run, res engine.TaskResult) {
	data, err := json.MarshalIndent(res, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(run.Dir, "report.json"), append(data, '\n'), 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(run.Dir, "report.md"), []byte(taskreport.New(res).Markdown()), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stdio.Err, "jlgcli: warning: write the report: %v\n", err)
	}
}

// openPR opens a pull request of the task branch with gh, the report as its
// body, and returns its address.
func openPR(ctx context.Context, stdio *Stdio, dir string, wt git.Worktree, res engine.TaskResult, body string) (string, error) {
	env := stdio.Environ
	if env == nil {
		env = os.Environ()
	}
	gh, err := proc.LookPath("gh", env)
	if err != nil {
		return "", fmt.Errorf("gh is not installed; open it by hand from branch %s (the report is in %s)", wt.Branch, body)
	}
	args := []string{gh, "pr", "create", "--head", wt.Branch, "--title", "feat: " + engine.Subject(res.Task), "--body-file", body}
	if wt.BaseBranch != "" {
		args = append(args, "--base", wt.BaseBranch)
	}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := proc.Run(ctx, proc.Cmd{Argv: args, Dir: dir, Env: env, Stdout: &out, Stderr: &errb})
	if err != nil {
		return "", err
	}
	if r.ExitCode != 0 {
		return "", fmt.Errorf("gh pr create exited with status %d: %s", r.ExitCode, strings.TrimSpace(errb.String()))
	}
	url := strings.TrimSpace(out.String())
	if i := strings.LastIndexByte(url, '\n'); i >= 0 {
		url = url[i+1:]
	}
	return url, nil
}

// merge squash-merges a successful task into its base branch.
func (s taskSettings) merge(ctx context.Context, res *engine.TaskResult) *engine.MergeInfo {
	wt := s.Worktree
	m := &engine.MergeInfo{Into: wt.BaseBranch}
	if s.Merge == "none" {
		m.Status = "skipped"
		m.Command = fmt.Sprintf("git merge --squash %s && git commit -m %q", wt.Branch, "feat: "+engine.Subject(res.Task))
		return m
	}
	repo := &git.Repo{Dir: s.Repo}
	msg := fmt.Sprintf("feat: %s\n\n%s\n\nMade by jlgcli task %s on branch %s, which keeps each attempt's commit.\n",
		engine.Subject(res.Task), res.Summary, res.RunID, wt.Branch)
	sha, err := repo.SquashMerge(ctx, wt.BaseBranch, wt.Branch, msg)
	return mergeOutcome(m, "merged", sha, err)
}

// mergeOutcome fills m with how a merge (squash or fast-forward) into the
// base branch ended: done (status done, at commit sha), nothing to merge,
// or refused with why and, when git gave one, the command to merge by hand.
func mergeOutcome(m *engine.MergeInfo, done, sha string, err error) *engine.MergeInfo {
	var refused *git.MergeRefusedError
	switch {
	case err == nil:
		m.Status, m.Commit = done, sha
	case errors.As(err, &refused):
		m.Status, m.Reason, m.Command = "refused", string(refused.Reason)+": "+refused.Detail, refused.Command
	case errors.Is(err, git.ErrNothingToMerge):
		m.Status = "nothing"
	default:
		m.Status, m.Reason = "refused", err.Error()
	}
	return m
}

// worktreeSpace is a git worktree as the engine's Workspace.
type worktreeSpace struct{ *git.Worktree }

func (w worktreeSpace) Dir() string { return w.Path }

// taskTester is the gate of a task: gate.Test over the checks, against the
// baseline.
type taskTester struct {
	dir      string
	env      []string
	checks   []gate.Check
	baseline *gate.Report
	gaming   string
}

func (t *taskTester) Test(ctx context.Context, deleted []string) gate.Report {
	return gate.Test(ctx, t.dir, t.env, t.checks, gate.TestOptions{Baseline: t.baseline, DeletedTestFiles: deleted, Gaming: t.gaming})
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
		fmt.Fprintf(stdio.Err, "jlgcli: %s: %s\n", res.Status, res.Details)
	}
	if res.ExitCode == 0 {
		return nil
	}
	return &exitError{code: res.ExitCode}
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
		fmt.Fprintf(w, "  tier %s: %d attempt(s), %s, %s\n", t.Name, t.Attempts, cost.Phrase(t.CostUSD, t.CostKnown, t.CostEstimated), t.Outcome)
	}
	for _, d := range res.Detections {
		fmt.Fprintf(w, "  loop %s (attempts %s, tier %s): %s\n", d.Names(), joinInts(d.Attempts), d.Tier, d.Action)
	}
	g := res.Git
	if g == nil {
		return
	}
	switch {
	case g.Merge != nil && g.Merge.Status == "merged":
		fmt.Fprintf(w, "merged into %s as %s (branch %s keeps the attempts)\n", g.Merge.Into, shortSHA(g.Merge.Commit), g.Branch)
	case g.Merge != nil && g.Merge.Command != "":
		fmt.Fprintf(w, "branch %s passed the checks; not merged (%s). To merge:\n  %s\n", g.Branch, orText(g.Merge.Reason, g.Merge.Status), g.Merge.Command)
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

// relTo is p relative to dir when it is inside it.
func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

type taskLine = ui.TaskLine

func newTaskLine(stdio *Stdio) *taskLine { return ui.NewTaskLine(stdio.Err, stdio.ErrIsTerminal) }

// resumeTask continues a task run where it stopped: its worktree is checked
// out again, the tree is put back where the next attempt starts, and the
// engine goes on from the journal's state. A task stopped by a limit of its
// tiers (a loop, its attempts, its budget) gets a new turn of its current
// tier: resuming it is asking for more attempts.
func resumeTask(cmd *cobra.Command, stdio *Stdio, o *resumeOptions, root string, run *store.Run, events []engine.Event) error {
	ctx := cmd.Context()
	j, err := engine.ReplayTask(events)
	if err != nil {
		return fmt.Errorf("run %s: %w", run.ID, err)
	}
	if j.Stop != nil && j.Stop.Status == engine.StatusDone {
		fmt.Fprintf(stdio.Err, "jlgcli: task %s is already done; nothing to resume\n", run.ID)
		res, err := taskResult(stdio, run)
		if err != nil {
			return err
		}
		return reportTask(stdio, o.json, res)
	}
	var s taskSettings
	if err := json.Unmarshal(run.Meta.Options, &s); err != nil {
		return fmt.Errorf("run %s: its settings cannot be read: %w", run.ID, err)
	}
	set := cmd.Flags().Changed
	if set("max-iterations") {
		return &hintError{usagef("--max-iterations is a loop's limit; task %s has tiers with attempts", run.ID),
			"resuming a task stopped by its attempts already gives its current tier a new turn"}
	}
	if set("timeout") {
		s.TimeoutMs = o.timeout.Milliseconds()
	}
	if set("max-wait") {
		s.MaxWaitMs = o.maxWait.Milliseconds()
	}
	if set("budget") {
		s.BudgetUSD = o.budget
	}
	st := j.Resume.State
	var cp engine.TaskCheckpoint
	if run.ReadCheckpoint(&cp) == nil && cp.State.Attempts == st.Attempts && cp.State.ElapsedMs > st.ElapsedMs {
		st.ElapsedMs = cp.State.ElapsedMs
	}
	if j.Stop != nil {
		switch j.Stop.Status {
		case engine.StatusNoProgress, engine.StatusMaxIterations, engine.StatusBudgetExceeded:
			st.InTier, st.Detections, st.Nudge = 0, 0, ""
		}
	}
	if st.Start == "" {
		st.Start = s.Worktree.Base // nothing was recorded yet: the task's start
	}
	j.Resume.State = st
	tiers, planner, bad := s.agents(stdio)
	if bad != nil {
		return reportTask(stdio, o.json, *bad)
	}
	wt := s.Worktree
	if err := wt.Reopen(ctx); err != nil {
		return fmt.Errorf("run %s: check out its branch %s again: %w", run.ID, wt.Branch, err)
	}
	if !o.quiet {
		fmt.Fprintf(stdio.Err, "jlgcli: resuming task %s after %d attempts (%s used) in %s\n", run.ID, st.Attempts,
			(time.Duration(st.ElapsedMs) * time.Millisecond).Round(time.Second), relTo(s.Repo, wt.Path))
	}
	jl := openJournal(stdio, root, run)
	defer jl.close()
	res, err := s.run(ctx, stdio, o.quiet, run, jl.journal, run.Meta.Prompt, tiers, planner, &j.Resume, false)
	if err != nil {
		return err
	}
	return reportTask(stdio, o.json, res)
}

// tierName makes a tier's name of a --tier value: its characters outside
// [A-Za-z0-9._:-] become dashes (opencode's models hold slashes).
func tierName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:-", c) >= 0) {
			b[i] = '-'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

// showTask prints a task run: its result, and each attempt with the refs
// that keep the tree it started from and the one it left.
func showTask(stdio *Stdio, asJSON bool, run *store.Run) error {
	res, err := taskResult(stdio, run)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(stdio, res)
	}
	status := string(res.Status)
	if res.Status == engine.StatusRunning && !run.Live() {
		status += " (not live: killed; 'jlgcli resume " + run.ID + "' continues it)"
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", run.ID)
	fmt.Fprintf(tw, "command\ttask\n")
	fmt.Fprintf(tw, "task\t%s\n", engine.Subject(run.Meta.Prompt))
	fmt.Fprintf(tw, "status\t%s\n", status)
	if res.Details != "" {
		fmt.Fprintf(tw, "details\t%s\n", res.Details)
	}
	fmt.Fprintf(tw, "attempts\t%d\n", len(res.Attempts))
	fmt.Fprintf(tw, "cost\t%s of $%.2f\n", cost.Amount(res.CostUSD, res.CostKnown, res.CostEstimated), res.BudgetUSD)
	fmt.Fprintf(tw, "duration\t%s\n", (time.Duration(res.DurationMs) * time.Millisecond).Round(time.Second))
	var s taskSettings
	_ = json.Unmarshal(run.Meta.Options, &s)
	if g := res.Git; g != nil {
		fmt.Fprintf(tw, "branch\t%s\n", g.Branch)
		if g.Merge != nil {
			fmt.Fprintf(tw, "merge\t%s %s\n", g.Merge.Status, shortSHA(g.Merge.Commit))
		}
	} else if s.Worktree.Branch != "" {
		fmt.Fprintf(tw, "branch\t%s\n", s.Worktree.Branch)
		fmt.Fprintf(tw, "worktree\t%s\n", s.Worktree.Path)
	}
	fmt.Fprintf(tw, "directory\t%s\n", run.Dir)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(res.Attempts) == 0 {
		return nil
	}
	refs := git.RefPrefix + run.ID + "/"
	fmt.Fprintf(stdio.Out, "\nattempts (restore one with: git checkout %s<N>-result -- .)\n", refs)
	tw = tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tSTEP\tTIER\tGATE\tACTION\tCOST\tBEFORE\tAFTER")
	for _, a := range res.Attempts {
		step := "-"
		if a.Step > 0 {
			step = fmt.Sprint(a.Step)
		}
		action := a.Action
		if a.Detection != nil {
			action += " (" + a.Detection.Names() + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s%d\t%s%d-result\n", a.Number, step, a.Tier, a.Gate.Status, action, cost.Amount(a.CostUSD, a.CostKnown, a.CostEstimated),
			refs, a.Number, refs, a.Number)
	}
	return tw.Flush()
}
