package local

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// PRSpec is a pull request worked until a target (pull.Policy.Target):
// what jlgcli pr and task --until record in the run's meta.json. It holds
// no token: the forge's is read from the environment at each start and
// resume (forge.Token).
type PRSpec struct {
	// Task says how each round's attempts are made (tiers, checks,
	// sandbox, budget); its Worktree is unused.
	Task TaskSpec `json:"task"`
	// Number is the pull request's; Remote the git remote its branch is
	// on; Forge the [forge] settings it was opened with.
	Number int            `json:"number"`
	Remote string         `json:"remote"`
	Forge  forge.Settings `json:"forge"`
	Policy pull.Policy    `json:"policy"`
	// From is the task run that opened the pull request, "" for one taken
	// over (jlgcli pr).
	From string `json:"from,omitempty"`
}

// Round is the spec of a round of the pull-request loop made with s: its
// commits stay on its task branch, which the loop pushes onto the pull
// request's own; nothing is merged, pushed or opened by the task itself.
func (s TaskSpec) Round() TaskSpec {
	s.Merge, s.Push, s.PR, s.Commit, s.ViaPR = git.MergeNone, false, false, git.CommitBranch, true
	return s
}

// FillEnv gives the round's spec its environment's values again.
func (s *PRSpec) FillEnv(value EnvValue) []string { return s.Task.FillEnv(value) }

// The journal events of a pull-request run.
const (
	// EventPRStart opens the run's journal (PRStartData).
	EventPRStart = "pr-start"
	// EventPRLook is a look at the pull request and what was decided of
	// it, with the loop's memory after it (PRLookData).
	EventPRLook = "pr-look"
	// EventPRRound is a round begun: journaled before its task run exists
	// (PRRoundData); EventPRRoundEnd says how it ended.
	EventPRRound    = "pr-round"
	EventPRRoundEnd = "pr-round-end"
	// EventPRMerge is a merge asked of the forge (PRMergeData).
	EventPRMerge = "pr-merge"
	// EventPREnd is the run's end (PREndData).
	EventPREnd = "pr-end"
)

// PRStartData is the payload of pr-start.
type PRStartData struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	// Title is the pull request's title as the forge gave it when the run
	// began (anyone who can edit the pull request wrote it).
	Title  string      `json:"title,omitempty"`
	Branch string      `json:"branch"`
	Base   string      `json:"base"`
	Forge  forge.Kind  `json:"forge"`
	Repo   string      `json:"repo"`
	Self   string      `json:"self"`
	Target pull.Target `json:"target"`
}

// PRLookData is the payload of pr-look.
type PRLookData struct {
	Action pull.Action `json:"action"`
	Memory pull.Memory `json:"memory"`
	// Checks are the checks at the head, as seen, for show.
	Checks   []forge.Check  `json:"checks,omitempty"`
	Decision forge.Decision `json:"decision,omitempty"`
}

// PRRoundData is the payload of pr-round.
type PRRoundData struct {
	Round int `json:"round"`
	// RunID is the round's task run; "" for a round that only merges the
	// base, which merged cleanly.
	RunID string `json:"runId"`
	// Head is the pull request's head the round starts from, the lease of
	// its push.
	Head     string   `json:"head"`
	Blockers []string `json:"blockers"`
	// Start, for a conflict with the base, is the merge of the base into
	// Head the round starts from instead (with its conflict markers in
	// Conflicts when it did not merge cleanly); MergedBase the base's
	// commit merged.
	Start      string   `json:"start,omitempty"`
	MergedBase string   `json:"mergedBase,omitempty"`
	Conflicts  []string `json:"conflicts,omitempty"`
	// Threads are the review threads the round addresses (without their
	// comments): answered and resolved once it is pushed, by a resume too.
	Threads []forge.Thread `json:"threads,omitempty"`
	// Before is the loop's memory before the look that began the round:
	// a round a kill kept from being made was not acted on, and its
	// blockers are looked at again.
	Before pull.Memory `json:"memoryBefore"`
}

// mergeMessage is the message of the merge of a pull request's base into
// its branch.
func mergeMessage(pr forge.PR) string {
	return fmt.Sprintf("Merge %s into %s\n\nMade by jlgcli: the pull request #%d conflicted with its base.", pr.Base, pr.Head, pr.Number)
}

// mergeBase prepares round rd for the conflict b with the pull request's
// base: the base, fetched, is merged into the head without a working tree;
// the round starts from that merge (its conflict markers for the agent to
// resolve). A merge that is clean and the only blocker needs no agent: the
// round pushes it as it is (alone).
func (w *prWatch) mergeBase(ctx context.Context, rd *PRRoundData, pr forge.PR, b pull.Blocker, alone bool) error {
	base, err := w.repo.FetchBranch(ctx, w.spec.Remote, b.Base)
	if err != nil {
		return err
	}
	start, conflicts, err := w.repo.MergeBase(ctx, rd.Head, base, mergeMessage(pr))
	if err != nil {
		return err
	}
	rd.Start, rd.MergedBase, rd.Conflicts = start, base, conflicts
	if len(conflicts) == 0 && alone {
		rd.RunID = ""
	}
	if len(conflicts) > 0 {
		w.p.progress("pull request #%d: merged %s (%s) into its head: conflicts in %s", w.spec.Number, b.Base, git.ShortSHA(base), strings.Join(conflicts, ", "))
	} else {
		w.p.progress("pull request #%d: merged %s (%s) into its head cleanly", w.spec.Number, b.Base, git.ShortSHA(base))
	}
	return nil
}

// PRRoundEndData is the payload of pr-round-end.
type PRRoundEndData struct {
	Round  int    `json:"round"`
	RunID  string `json:"runId"`
	Status string `json:"status"`
	// Pushed is the head pushed ("" when none was); Rejected says the
	// forge's branch had moved under the lease.
	Pushed   string  `json:"pushed,omitempty"`
	Rejected bool    `json:"rejected,omitempty"`
	Replied  int     `json:"replied,omitempty"`
	CostUSD  float64 `json:"costUsd"`
	// CostKnown: the round's agents reported what they cost.
	CostKnown bool   `json:"costKnown,omitempty"`
	Details   string `json:"details,omitempty"`
	// NotMade is a round a stop kept from being made: what it was to act
	// on is looked at again.
	NotMade bool `json:"notMade,omitempty"`
}

// PRMergeData is the payload of pr-merge.
type PRMergeData struct {
	Head   string `json:"head"`
	Commit string `json:"commit,omitempty"`
	Error  string `json:"error,omitempty"`
}

// PREndData is the payload of pr-end.
type PREndData struct {
	Status   engine.Status `json:"status"`
	ExitCode int           `json:"exitCode"`
	Reason   string        `json:"reason,omitempty"`
	// Comment is the address of the comment that told the pull request
	// why the loop gave up.
	Comment string `json:"comment,omitempty"`
}

// PRResult is what became of a pull-request run: its pull request, each
// round, the last decision, and how it ended.
type PRResult struct {
	RunID  string `json:"runId"`
	Number int    `json:"number"`
	URL    string `json:"url"`
	// Title is the pull request's title when the run began; Branch its
	// head branch, Base the branch it merges into.
	Title  string      `json:"title,omitempty"`
	Branch string      `json:"branch"`
	Base   string      `json:"base,omitempty"`
	Target pull.Target `json:"target"`
	// From is the task run that opened the pull request ("" for one
	// taken over with jlgcli pr).
	From     string        `json:"from,omitempty"`
	Status   engine.Status `json:"status"`
	ExitCode int           `json:"exitCode"`
	Reason   string        `json:"reason,omitempty"`
	Head     string        `json:"head,omitempty"`
	Looks    int           `json:"looks"`
	// Last is the last decision; Checks the checks it saw.
	Last   *pull.Action  `json:"last,omitempty"`
	Checks []forge.Check `json:"checks,omitempty"`
	// Rounds are the rounds that ended; Current the round begun and not
	// ended (its task run under way, or cut by a kill).
	Rounds  []PRRound    `json:"rounds,omitempty"`
	Current *PRRoundData `json:"current,omitempty"`
	Merged  string       `json:"merged,omitempty"`
	// CostUSD is what the rounds cost (the task that opened the pull
	// request counts its own); CostKnown whether any round's agents said.
	CostUSD    float64         `json:"costUsd"`
	CostKnown  bool            `json:"costKnown"`
	DurationMs millis.Duration `json:"durationMs"`
	Comment    string          `json:"comment,omitempty"`
}

// PRRound is a round that ended: how (its pr-round-end), and what it was
// begun for (its pr-round's head and blockers).
type PRRound struct {
	PRRoundEndData
	Head     string   `json:"head,omitempty"`
	Blockers []string `json:"blockers,omitempty"`
}

// Resumable tells whether resume goes on with the run: one running (its
// process killed), stopped or ended by an error; one done, that gave up
// (needs-you) or spent its budget is told again, and only jlgcli pr takes
// its pull request up again.
func (r PRResult) Resumable() bool {
	return r.Status == store.Running || prResumable(r.Status)
}

// prLog is a pull-request run's journal read back.
type prLog struct {
	start   *PRStartData
	memory  pull.Memory
	last    *PRLookData
	looks   int
	rounds  []PRRoundEndData
	begun   map[int]PRRoundData // each round begun, by number
	open    *PRRoundData        // a round begun and not ended
	merged  string
	end     *PREndData
	spent   float64
	started time.Time
	lastAt  time.Time
}

func readPRLog(events []engine.Event) (prLog, error) {
	var l prLog
	for _, ev := range events {
		if l.started.IsZero() {
			l.started = ev.Time
		}
		l.lastAt = ev.Time
		var err error
		switch ev.Type {
		case EventPRStart:
			l.start = &PRStartData{}
			err = json.Unmarshal(ev.Data, l.start)
		case EventPRLook:
			var d PRLookData
			if err = json.Unmarshal(ev.Data, &d); err == nil {
				l.memory, l.last, l.looks = d.Memory, &d, l.looks+1
			}
		case EventPRRound:
			var d PRRoundData
			if err = json.Unmarshal(ev.Data, &d); err == nil {
				l.open = &d
				if l.begun == nil {
					l.begun = map[int]PRRoundData{}
				}
				l.begun[d.Round] = d
			}
		case EventPRRoundEnd:
			var d PRRoundEndData
			if err = json.Unmarshal(ev.Data, &d); err == nil {
				if d.NotMade && l.open != nil {
					l.memory = l.open.Before
				}
				l.rounds, l.open, l.spent = append(l.rounds, d), nil, l.spent+d.CostUSD
				if d.Pushed != "" {
					l.memory = l.memory.PushedAt(d.Pushed, ev.Time)
				}
			}
		case EventPRMerge:
			var d PRMergeData
			if err = json.Unmarshal(ev.Data, &d); err == nil && d.Commit != "" {
				l.merged = d.Commit
			}
		case EventPREnd:
			l.end = &PREndData{}
			err = json.Unmarshal(ev.Data, l.end)
		case engine.EventResume:
			l.end = nil // a stop it went on from
		}
		if err != nil {
			return l, fmt.Errorf("journal event %s: %w", ev.Type, err)
		}
	}
	return l, nil
}

// PRResultOf is the result of the pull-request run whose journal is
// events.
func PRResultOf(run *store.Run, events []engine.Event) (PRResult, error) {
	l, err := readPRLog(events)
	if err != nil {
		return PRResult{}, fmt.Errorf("run %s: %w", run.ID, err)
	}
	var s PRSpec
	_ = json.Unmarshal(run.Meta.Options, &s)
	r := PRResult{RunID: run.ID, Number: s.Number, Target: s.Policy.Target, From: s.From, Status: store.Running, Looks: l.looks,
		Current: l.open, Merged: l.merged, CostUSD: l.spent, Head: l.memory.Head}
	for _, e := range l.rounds {
		b := l.begun[e.Round]
		r.Rounds = append(r.Rounds, PRRound{PRRoundEndData: e, Head: b.Head, Blockers: b.Blockers})
		r.CostKnown = r.CostKnown || e.CostKnown
	}
	if l.start != nil {
		r.URL, r.Branch, r.Base, r.Title = l.start.URL, l.start.Branch, l.start.Base, l.start.Title
		if r.Number == 0 {
			r.Number = l.start.Number
		}
		if r.Target == "" {
			r.Target = l.start.Target
		}
	}
	if l.last != nil {
		a := l.last.Action
		r.Last, r.Checks = &a, l.last.Checks
	}
	if !l.started.IsZero() {
		r.DurationMs = millis.Of(l.lastAt.Sub(l.started))
	}
	if l.end != nil {
		r.Status, r.ExitCode, r.Reason, r.Comment = l.end.Status, l.end.ExitCode, l.end.Reason, l.end.Comment
	} // else running, or killed: show says which (its lock)
	return r, nil
}

// NewPR is a pull request to work: the number of one open on the forge of
// Spec.Remote, and what its change is for (Prompt: the task that made it;
// "": the pull request's title and body).
type NewPR struct {
	Spec   PRSpec
	Prompt string
	Repo   *git.Repo
	// ID is the run's id; "": a new one.
	ID       string
	StateDir string
}

// OpenForge opens the forge of spec's remote in repo, its token read
// from p's environment.
func OpenForge(ctx context.Context, repo *git.Repo, spec PRSpec, p Parts) (forge.Forge, error) {
	url, err := repo.RemoteURL(ctx, spec.Remote)
	if err != nil {
		return nil, exit.Usagef("add a remote, or name one with --remote", "the pull request's remote %q: %v", spec.Remote, err)
	}
	f, err := forge.Open(ctx, url, spec.Forge, forge.Options{Getenv: p.getenv})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// StartPR creates a pull-request run and works the pull request until its
// target, or until it gives up, is stopped or runs out of budget.
func StartPR(ctx context.Context, n NewPR, f forge.Forge, p Parts) (PRResult, error) {
	s := n.Spec
	s.Policy = s.Policy.WithDefaults()
	pr, err := f.PR(ctx, s.Number)
	if err != nil {
		return PRResult{}, prError(s, f, err)
	}
	if pr.HeadRepo != "" && pr.HeadRepo != f.Repo().String() {
		return PRResult{}, exit.Usagef("work it from its own repository", "pull request #%d comes from %s, a fork: jlgcli pushes only to %s", pr.Number, pr.HeadRepo, f.Repo())
	}
	if pr.State != forge.StateOpen {
		return PRResult{}, exit.Usagef("", "pull request #%d is %s", pr.Number, pr.State)
	}
	self, err := f.Self(ctx)
	if err != nil {
		return PRResult{}, prError(s, f, err)
	}
	s.Policy.Self = self
	if n.Prompt == "" {
		n.Prompt = strings.TrimSpace(pr.Title + "\n\n" + pr.Body)
	}
	root, err := StateRoot(p, n.Repo.Dir, n.StateDir)
	if err != nil {
		return PRResult{}, err
	}
	s.Task.Repo = n.Repo.Dir
	id := cmp.Or(n.ID, store.NewRunID(time.Now()))
	release, err := claimPR(root, f.Repo(), pr.Number, id)
	if err != nil {
		return PRResult{}, err
	}
	defer release()
	rec := s
	rec.Task = s.Task.Recorded()
	opts, _ := json.Marshal(rec)
	run, err := store.Create(root, id, store.Meta{Command: "pr", Backend: s.Task.Tiers[0].Backend, Prompt: n.Prompt, Options: opts, Cwd: n.Repo.Dir, Parent: s.From})
	if err != nil {
		return PRResult{}, fmt.Errorf("create run: %w", err)
	}
	defer run.Close()
	j := openJournal(p, root, run)
	defer j.close()
	w := &prWatch{spec: s, prompt: n.Prompt, repo: n.Repo, f: f, run: run, j: j, p: p, root: root}
	if err := w.record(EventPRStart, PRStartData{Number: pr.Number, URL: pr.URL, Title: pr.Title, Branch: pr.Head, Base: pr.Base, Forge: f.Kind(),
		Repo: f.Repo().String(), Self: self, Target: s.Policy.Target}); err != nil {
		return PRResult{}, err
	}
	j.hooks.recorded(engine.Event{Type: engine.EventStart})
	p.progress("working pull request #%d (%s) until %s: run %s", pr.Number, pr.URL, s.Policy.Target, id)
	return w.work(ctx, prLog{start: &PRStartData{Number: pr.Number, URL: pr.URL, Branch: pr.Head, Base: pr.Base}, started: time.Now()})
}

// claimPR claims pull request number of repo for run id among the
// jlgcli of state root root: two runs working one pull request would each
// pay for a round at the same head and answer the same threads. The claim
// is a locked file, lost with the process that holds it.
func claimPR(root string, repo forge.Repo, number int, id string) (release func(), err error) {
	name := strings.NewReplacer("/", "_", ":", "_").Replace(fmt.Sprintf("%s_%s_%s_%d", repo.Host, repo.Owner, repo.Name, number))
	release, other, err := store.Claim(filepath.Join(root, "claims", "pr-"+name), id)
	switch {
	case err != nil:
		return nil, fmt.Errorf("claim pull request #%d: %w", number, err)
	case release == nil:
		return nil, exit.Usagef("wait for it to end, or stop it: jlgcli stop "+other, "pull request #%d of %s is already worked by run %s", number, repo, other)
	}
	return release, nil
}

// prError is err of a first read of spec's pull request, as the user is
// told it: a token refused or a pull request the forge does not know are
// the user's to fix (exit 64), nothing made.
func prError(spec PRSpec, f forge.Forge, err error) error {
	err = fmt.Errorf("pull request #%d: %w", spec.Number, err)
	switch {
	case errors.Is(err, forge.ErrUnauthorized):
		where := "the token's variable (forge.tokenEnv)"
		if spec.Forge.TokenEnv != "" {
			where = spec.Forge.TokenEnv
		}
		return exit.NewUsage(err, "check the token in "+where+": it must be valid for this forge")
	case errors.Is(err, forge.ErrNotFound):
		return exit.Usagef("give the number of one of its pull requests (git remote "+spec.Remote+")", "%s has no pull request #%d (or the token cannot see it)", f.Repo(), spec.Number)
	}
	return err
}

// ResumePR goes on working the pull request of run where its journal
// stops: a round in flight is resumed (or made) first.
func ResumePR(ctx context.Context, root string, run *store.Run, events []engine.Event, p Parts) (PRResult, bool, error) {
	l, err := readPRLog(events)
	if err != nil {
		return PRResult{}, false, fmt.Errorf("run %s: %w", run.ID, err)
	}
	if l.start == nil || (l.end != nil && !prResumable(l.end.Status)) {
		res, err := PRResultOf(run, events)
		return res, true, err
	}
	var s PRSpec
	if err := settings(run, &s, p); err != nil {
		return PRResult{}, false, err
	}
	repo, err := OpenRepo(ctx, run.Meta.Cwd)
	if err != nil {
		return PRResult{}, false, err
	}
	f, err := OpenForge(ctx, repo, s, p)
	if err != nil {
		return PRResult{}, false, err
	}
	release, err := claimPR(root, f.Repo(), s.Number, run.ID)
	if err != nil {
		return PRResult{}, false, err
	}
	defer release()
	j := openJournal(p, root, run)
	defer j.close()
	w := &prWatch{spec: s, prompt: run.Meta.Prompt, repo: repo, f: f, run: run, j: j, p: p, root: root, rounds: l.rounds}
	if err := w.record(engine.EventResume, nil); err != nil {
		return PRResult{}, false, err
	}
	p.progress("resuming the work on pull request #%d (%s) until %s after %s", s.Number, l.start.URL, s.Policy.Target, plural.N(len(l.rounds), "round"))
	res, err := w.work(ctx, l)
	return res, false, err
}

// prResumable tells whether a pull-request run that ended with status goes
// on when resumed: one stopped (Ctrl-C, jlgcli stop, a round's time
// limit or rate limit) or ended by an error (the forge unreachable, a push
// that failed); one done, that gave up or spent its budget is told again.
func prResumable(status engine.Status) bool {
	return status == engine.StatusError || Resumable(status)
}

// prWatch is one pull-request run at work.
type prWatch struct {
	spec   PRSpec
	prompt string
	repo   *git.Repo
	f      forge.Forge
	run    *store.Run
	j      journal
	p      Parts
	root   string
	// said is the last wait told to the user, not to repeat it.
	said string
	// rounds are the rounds ended so far.
	rounds []PRRoundEndData
	// fetchFails counts the fetches that failed in a row (retry).
	fetchFails int
}

// prior is what a round follows: the runs that made the pull request's
// change so far (the task that opened it, the rounds before), their
// attempts told as its history and counted in its budget, the changes
// they pushed (which the round may not make again), and what the pull
// request needs now.
func (w *prWatch) prior(needs string) *taskengine.Prior {
	p := &taskengine.Prior{RunID: w.spec.From, Needs: needs, Attempts: []taskengine.Attempt{}}
	type made struct {
		id     string
		round  int
		pushed bool
	}
	runs := []made{{id: w.spec.From, pushed: true}} // its change opened the pull request
	for _, r := range w.rounds {
		runs = append(runs, made{id: r.RunID, round: r.Round, pushed: r.Pushed != ""})
	}
	for _, r := range runs {
		id := r.id
		if id == "" {
			continue
		}
		run, err := store.Open(w.root, id)
		if err != nil {
			continue // a round never made
		}
		evs, _, err := Events(run)
		var res taskengine.Result
		if err == nil {
			res, err = TaskResultOf(run, evs, w.p)
		}
		run.Close()
		if err != nil {
			w.p.warn("pull request #%d: the history of run %s: %v", w.spec.Number, id, err)
			continue
		}
		before := taskengine.PriorOf(res, "", nil)
		p.RunID = id
		p.Attempts = append(p.Attempts, before.Attempts...)
		if c, ok := taskengine.PushedOf(res, r.round); ok && r.pushed {
			p.Pushed = append(p.Pushed, c)
		}
		p.CostUSD += res.CostUSD
		p.CostKnown = p.CostKnown || res.CostKnown
		p.CostEstimated = p.CostEstimated || res.CostEstimated
		p.DurationMs += res.DurationMs
	}
	return p
}

func (w *prWatch) record(typ string, data any) error {
	ev := engine.Event{Type: typ, Time: time.Now().UTC()}
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		ev.Data = b
	}
	return w.j.Record(ev)
}

// maxForgeErrors is how many looks in a row may fail before the run stops
// (resumable): a forge down for longer is not waited out.
const maxForgeErrors = 8

// work is the loop: look, decide, act, until an end.
func (w *prWatch) work(ctx context.Context, l prLog) (PRResult, error) {
	ctx, unwatch := watchStop(ctx, w.run)
	defer unwatch()
	w.checkpoint(store.Running, l.spent)
	m := l.memory.Restarted()
	spent := l.spent
	if l.open != nil {
		// A round the killed jlgcli began: its task run goes on, or is made.
		end, err := w.round(ctx, *l.open, nil, m)
		if err != nil {
			return w.end(ctx, engine.StatusError, err.Error(), nil)
		}
		if end.NotMade {
			m = l.open.Before
		}
		spent += end.CostUSD
		if end.Pushed != "" {
			m = m.PushedAt(end.Pushed, time.Now())
		}
		if st := engine.Status(end.Status); st != engine.StatusDone {
			return w.roundFailed(ctx, end)
		}
	}
	failures := 0
	for {
		if err := ctx.Err(); err != nil {
			return w.stopped(ctx)
		}
		o, err := w.look(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return w.stopped(ctx)
			}
			if errors.Is(err, forge.ErrUnauthorized) {
				return w.end(ctx, engine.StatusError, fmt.Sprintf("%v: renew it, then jlgcli resume %s goes on", err, w.run.ID), nil)
			}
			if failures++; failures >= maxForgeErrors {
				return w.end(ctx, engine.StatusError, fmt.Sprintf("the forge did not answer %d times in a row: %v (jlgcli resume %s goes on)", failures, err, w.run.ID), nil)
			}
			// Backed off: a forge down for a while is not hammered.
			pol := w.spec.Policy.WithDefaults()
			wait := min(pol.Poll.Duration()<<failures, pol.MaxPoll.Duration())
			w.p.warn("pull request #%d: %v (looking again in %s)", w.spec.Number, err, wait)
			if engine.Sleep(ctx, wait) != nil {
				return w.stopped(ctx)
			}
			continue
		}
		failures = 0
		act, next := pull.Decide(w.spec.Policy, o, m)
		if act.Do == pull.Attempt {
			// Built on the head as the forge's git has it: a push that came
			// after the look is looked at first.
			head, err := w.repo.FetchBranch(ctx, w.spec.Remote, o.PR.Head)
			if err != nil {
				if err := w.retry(ctx, err); err != nil {
					return w.retried(ctx, err)
				}
				continue
			}
			w.fetchFails = 0
			if head != o.PR.HeadSHA {
				// The forge's word lags its git (a push it has not
				// processed yet): looked at again after a wait, not at once.
				if engine.Sleep(ctx, w.spec.Policy.WithDefaults().Poll.Duration()) != nil {
					return w.stopped(ctx)
				}
				continue
			}
		}
		if err := w.record(EventPRLook, PRLookData{Action: act, Memory: next, Checks: o.Checks.Checks, Decision: o.Reviews.Decision}); err != nil {
			return PRResult{}, err
		}
		before := m
		m = next
		switch act.Do {
		case pull.Done:
			if o.PR.State == forge.StateOpen {
				why, err := w.weakensTests(ctx, o.PR)
				if err != nil {
					if w.retry(ctx, err) != nil {
						return w.stopped(ctx)
					}
					continue
				}
				if why != "" {
					return w.end(ctx, engine.StatusNeedsYou, why, nil)
				}
			}
			w.p.progress("pull request #%d: %s", w.spec.Number, act.Reason)
			return w.end(ctx, engine.StatusDone, act.Reason, nil)
		case pull.GiveUp:
			return w.end(ctx, engine.StatusNeedsYou, act.Reason, act.Blockers)
		case pull.Wait:
			if say := strings.Join(act.Waiting, ", "); say != w.said {
				w.said = say
				w.p.progress("pull request #%d: waiting for %s", w.spec.Number, say)
			}
			if engine.Sleep(ctx, act.After.Duration()) != nil {
				return w.stopped(ctx)
			}
		case pull.Rerun:
			for _, c := range act.Checks {
				if err := w.f.Rerun(ctx, c); err == nil {
					w.p.progress("pull request #%d: check %q failed; asked the forge to run it again", w.spec.Number, c.Name)
				} else if !errors.Is(err, forge.ErrUnsupported) {
					w.p.warn("pull request #%d: re-run %q: %v", w.spec.Number, c.Name, err)
				}
			}
		case pull.Merge:
			why, err := w.weakensTests(ctx, o.PR)
			if err != nil {
				if err := w.retry(ctx, err); err != nil {
					return w.retried(ctx, err)
				}
				continue
			}
			if why != "" {
				return w.end(ctx, engine.StatusNeedsYou, why, nil)
			}
			sha, err := w.f.Merge(ctx, w.spec.Number, forge.MergeOptions{Method: w.spec.Policy.WithDefaults().Method, SHA: act.Head})
			d := PRMergeData{Head: act.Head, Commit: sha}
			if err != nil {
				d.Error = err.Error()
				w.p.warn("pull request #%d: merge: %v", w.spec.Number, err)
			} else {
				w.p.progress("pull request #%d: merged", w.spec.Number)
			}
			if err := w.record(EventPRMerge, d); err != nil {
				return PRResult{}, err
			}
			if err != nil && engine.Sleep(ctx, w.spec.Policy.WithDefaults().Poll.Duration()) != nil {
				return w.stopped(ctx)
			}
		case pull.Attempt:
			// The task's budget holds across rounds: each round's task counts
			// the runs before it (prior), and stops before an attempt it
			// cannot pay for.
			rd := PRRoundData{Round: m.Rounds, RunID: store.NewRunID(time.Now()), Head: act.Head, Before: before}
			for _, b := range act.Blockers {
				rd.Blockers = append(rd.Blockers, b.String())
				if b.Thread != nil {
					rd.Threads = append(rd.Threads, journaledThread(*b.Thread))
				}
				if b.Kind == pull.Conflict {
					if err := w.mergeBase(ctx, &rd, o.PR, b, len(act.Blockers) == 1); err != nil {
						return w.end(ctx, engine.StatusError, err.Error(), nil)
					}
				}
			}
			if err := w.record(EventPRRound, rd); err != nil {
				return PRResult{}, err
			}
			end, err := w.round(ctx, rd, &roundInput{obs: o, act: act}, m)
			if err != nil {
				return w.end(ctx, engine.StatusError, err.Error(), nil)
			}
			spent += end.CostUSD
			w.checkpoint(store.Running, spent)
			if end.Pushed != "" {
				m = m.PushedAt(end.Pushed, time.Now())
			}
			if engine.Status(end.Status) != engine.StatusDone {
				return w.roundFailed(ctx, end)
			}
		}
	}
}

// roundInput is what a round is made of when it is begun here (nil when a
// resume goes on with one the journal holds).
type roundInput struct {
	obs pull.Observation
	act pull.Action
}

// look reads the pull request, the checks at its head, its reviews and
// threads.
func (w *prWatch) look(ctx context.Context) (pull.Observation, error) {
	o, err := Look(ctx, w.f, w.spec.Number)
	if err == nil && o.PR.State == forge.StateOpen && o.PR.Mergeable == forge.Mergeable {
		w.checkMerge(ctx, &o)
	}
	return o, err
}

// checkMerge checks, with git, a forge's word that the pull request of o
// merges into its base: a forge answers from what it computed when it
// last looked (Gitea says "mergeable" for a while after the base moved
// under it), and a conflict it has not seen yet is no green. The base and
// head are fetched and merged without a working tree; a conflict makes
// the pull request conflicting with the base as fetched, and a head the
// forge's git does not hold yet leaves its word in doubt (unknown).
func (w *prWatch) checkMerge(ctx context.Context, o *pull.Observation) {
	base, err := w.repo.FetchBranch(ctx, w.spec.Remote, o.PR.Base)
	if err != nil {
		return // the forge's word, then: a fetch that fails is no conflict
	}
	head, err := w.repo.FetchBranch(ctx, w.spec.Remote, o.PR.Head)
	if err != nil || head != o.PR.HeadSHA {
		o.PR.Mergeable = forge.MergeUnknown
		return
	}
	if conflicts, err := w.repo.Conflicts(ctx, head, base); err == nil && len(conflicts) > 0 {
		o.PR.Mergeable, o.PR.BaseSHA = forge.Conflicting, base
	}
}

// Look reads pull request number of f, the checks at its head, its
// reviews and threads, as seen now: what pull.Decide decides on.
func Look(ctx context.Context, f forge.Forge, number int) (pull.Observation, error) {
	o := pull.Observation{At: time.Now()}
	var err error
	if o.PR, err = f.PR(ctx, number); err != nil {
		return o, err
	}
	if o.PR.State != forge.StateOpen {
		return o, nil
	}
	if o.Checks, err = f.Checks(ctx, o.PR.HeadSHA, o.PR.Base); err != nil {
		return o, err
	}
	if o.Reviews, err = f.Reviews(ctx, number); err != nil {
		return o, err
	}
	o.Threads, err = f.Threads(ctx, number)
	return o, err
}

// round makes round rd: a task run on the pull request's head told what
// the pull request needs, then its commits pushed to the same branch on
// the lease of that head, then a reply on each thread it addressed. in is
// nil when a resume goes on with a round the journal holds: its task run
// is resumed, or made anew when it was never created.
func (w *prWatch) round(ctx context.Context, rd PRRoundData, in *roundInput, m pull.Memory) (PRRoundEndData, error) {
	end := PRRoundEndData{Round: rd.Round, RunID: rd.RunID}
	var res taskengine.Result
	if rd.RunID == "" {
		// The base merged cleanly and nothing else blocks: the merge is
		// the round.
		return w.push(ctx, rd, in, rd.Start, end, "merged "+git.ShortSHA(rd.MergedBase)+" of the base cleanly")
	}
	child, err := store.Open(w.root, rd.RunID)
	switch {
	case err == nil:
		// Made by the killed jlgcli: resumed to its end.
		evs, err := lockedEvents(child)
		if err != nil {
			child.Close()
			return end, err
		}
		res, _, err = ResumeTask(ctx, w.root, child, evs, Limits{}, w.p)
		child.Close()
		if err != nil {
			return end, err
		}
	default:
		if in == nil {
			// Journaled, never made: look again (the memory says nothing
			// was done of it).
			end.Status, end.Details, end.NotMade = string(engine.StatusDone), "not made before the stop; looked at again", true
			w.rounds = append(w.rounds, end)
			return end, w.record(EventPRRoundEnd, end)
		}
		needs := pull.Needs{PR: in.obs.PR, Target: w.spec.Policy.Target, Self: w.spec.Policy.Self, Blockers: in.act.Blockers, Failures: map[string]forge.Failure{}}
		for _, b := range in.act.Blockers {
			if b.Check != nil {
				if f, err := w.f.Failure(ctx, *b.Check); err == nil {
					needs.Failures[b.Check.Name] = f
				}
			}
		}
		spec := w.spec.Task.Round()
		w.p.progress("pull request #%d: round %d on %s: %s", w.spec.Number, rd.Round, git.ShortSHA(rd.Head), strings.Join(rd.Blockers, "; "))
		needs.Conflicted = rd.Conflicts
		res, err = StartTask(ctx, NewTask{Prompt: w.prompt, Spec: spec, Repo: w.repo, Base: cmp.Or(rd.Start, rd.Head), StateDir: w.root, ID: rd.RunID, Parent: w.run.ID, Prior: w.prior(needs.Prompt())}, w.p)
		if err != nil {
			return end, err
		}
	}
	end.Status, end.CostUSD, end.CostKnown, end.Details = string(res.Status), res.CostUSD, res.CostKnown, res.Details
	if res.Status != engine.StatusDone {
		w.rounds = append(w.rounds, end)
		return end, w.record(EventPRRoundEnd, end)
	}
	tip := ""
	if res.Git != nil && res.Git.Branch != "" {
		tip, _ = w.repo.ResolveCommit(ctx, "refs/heads/"+res.Git.Branch)
	}
	start := cmp.Or(rd.Start, rd.Head)
	switch {
	case tip != "" && tip != start && rd.MergedBase != "":
		// The round's commits on the merge, as one merge of the base.
		if tip, err = w.repo.MergeOf(ctx, tip, rd.Head, rd.MergedBase, mergeMessage(w.prOf(ctx, in))); err != nil {
			return end, err
		}
	case tip == start && rd.Start != "" && len(rd.Conflicts) == 0:
		tip = rd.Start // nothing else to change: the clean merge is the round's
	case tip == "" || tip == start:
		end.Details = "the attempt changed nothing"
		w.rounds = append(w.rounds, end)
		return end, w.record(EventPRRoundEnd, end)
	}
	return w.push(ctx, rd, in, tip, end, "")
}

// push pushes tip, a round's result, to the pull request's branch on the
// lease of the head the round started from, then answers and resolves each
// thread it addressed; details says what the round did when no task did.
func (w *prWatch) push(ctx context.Context, rd PRRoundData, in *roundInput, tip string, end PRRoundEndData, details string) (PRRoundEndData, error) {
	if details != "" {
		end.Status, end.Details = string(engine.StatusDone), details
	}
	defer func() { w.rounds = append(w.rounds, end) }()
	branch := w.prOf(ctx, in).Head
	var err error
	if at, ferr := w.repo.FetchBranch(ctx, w.spec.Remote, branch); ferr != nil || at != tip {
		err = w.repo.PushLeased(ctx, tip, w.spec.Remote, branch, rd.Head)
	} // else: pushed before a kill, its end not journaled: not again
	switch {
	case errors.Is(err, git.ErrPushRejected):
		end.Rejected, end.Details = true, "the branch moved on the forge meanwhile: the next look builds on it"
		w.p.warn("pull request #%d: %s", w.spec.Number, end.Details)
	case err != nil:
		return end, err
	default:
		end.Pushed = tip
		w.p.progress("pull request #%d: pushed %s to %s", w.spec.Number, git.ShortSHA(tip), branch)
		end.Replied = w.answer(ctx, rd, tip)
	}
	return end, w.record(EventPRRoundEnd, end)
}

// weakensTests is why the pull request's whole change may not be called
// green, approved or merged by jlgcli ("" when it may): it deletes test
// files of its base, or removes or alters lines of them (what a task's
// gate refuses), whoever made it — the task, a round, a collaborator's
// push, or the pull request taken over as it was. Each round is judged
// against its start; this judges the pull request against its base. A
// task meant to change tests (--edit-tests) is not held to it.
func (w *prWatch) weakensTests(ctx context.Context, pr forge.PR) (string, error) {
	if w.spec.Task.EditTests {
		return "", nil
	}
	base, err := w.repo.FetchBranch(ctx, w.spec.Remote, pr.Base)
	if err != nil {
		return "", err
	}
	head, err := w.repo.FetchBranch(ctx, w.spec.Remote, pr.Head)
	if err != nil {
		return "", err
	}
	c, err := w.repo.TestsWeakened(ctx, base, head)
	if err != nil {
		return "", fmt.Errorf("judge its tests against %s: %w", pr.Base, err)
	}
	w.fetchFails = 0
	return TestsWeakenedReason(c, pr.Base), nil
}

// TestsWeakenedReason is why a pull request whose whole change against
// base is c may not be called done ("" when it may): the test files it
// deletes, those it removes or alters lines of.
func TestsWeakenedReason(c git.Change, base string) string {
	var what []string
	if len(c.DeletedTests) > 0 {
		what = append(what, "deletes "+strings.Join(c.DeletedTests, ", "))
	}
	for _, t := range c.WeakenedTests {
		what = append(what, fmt.Sprintf("removes or alters %s of %s", plural.N(t.Count, "line"), t.Path))
	}
	if len(what) == 0 {
		return ""
	}
	return fmt.Sprintf("the pull request %s against %s: a change that weakens tests is not called done by jlgcli (a person decides; --edit-tests when the task is meant to change tests)", strings.Join(what, "; "), base)
}

// errRetriesSpent is a step that failed maxForgeErrors times in a row.
var errRetriesSpent = errors.New("failed again and again")

// retry says why the step failed (a fetch that did not go through) and
// waits a poll before the next look: ctx's error when it ends meanwhile,
// errRetriesSpent (wrapping err) after maxForgeErrors failures in a row.
func (w *prWatch) retry(ctx context.Context, err error) error {
	if w.fetchFails++; w.fetchFails >= maxForgeErrors {
		return fmt.Errorf("%w (%d times): %v; jlgcli resume %s goes on", errRetriesSpent, w.fetchFails, err, w.run.ID)
	}
	w.p.warn("pull request #%d: %v (looking again)", w.spec.Number, err)
	return engine.Sleep(ctx, w.spec.Policy.WithDefaults().Poll.Duration())
}

// retried ends the run after a retry that did not wait: retries spent (an
// error, resumable) or stopped.
func (w *prWatch) retried(ctx context.Context, err error) (PRResult, error) {
	if errors.Is(err, errRetriesSpent) {
		return w.end(ctx, engine.StatusError, err.Error(), nil)
	}
	return w.stopped(ctx)
}

// answer replies on each thread round rd addressed, naming tip, the
// commit it pushed, and resolves it; a thread that has the loop's reply
// naming tip already (a resume after a kill in between) is not answered
// twice. It returns how many threads are answered.
func (w *prWatch) answer(ctx context.Context, rd PRRoundData, tip string) int {
	if len(rd.Threads) == 0 {
		return 0
	}
	answered := map[string]bool{}
	if now, err := w.f.Threads(ctx, w.spec.Number); err == nil {
		for _, t := range now {
			for _, c := range t.Comments {
				if c.Author == w.spec.Policy.Self && strings.Contains(c.Body, tip) {
					answered[t.ID] = true
				}
			}
		}
	}
	n := 0
	for _, t := range rd.Threads {
		if !answered[t.ID] {
			body := fmt.Sprintf("Addressed in %s (jlgcli run %s, round %d).", tip, rd.RunID, rd.Round)
			if _, err := w.f.Reply(ctx, w.spec.Number, t, body); err != nil {
				w.p.warn("pull request #%d: reply on %s: %v", w.spec.Number, t.Path, err)
				continue
			}
		}
		if err := w.f.Resolve(ctx, w.spec.Number, t); err != nil {
			w.p.warn("pull request #%d: resolve the thread on %s: %v", w.spec.Number, t.Path, err)
		}
		n++
	}
	return n
}

// prOf is the pull request as the round's look saw it; read again for a
// round a resume goes on with.
func (w *prWatch) prOf(ctx context.Context, in *roundInput) forge.PR {
	if in != nil {
		return in.obs.PR
	}
	pr, err := w.f.PR(ctx, w.spec.Number)
	if err != nil {
		w.p.warn("pull request #%d: %v", w.spec.Number, err)
	}
	return pr
}

// roundFailed ends the run after a round whose task did not end done.
func (w *prWatch) roundFailed(ctx context.Context, end PRRoundEndData) (PRResult, error) {
	st, reason := RoundFailed(end)
	return w.end(ctx, st, reason, nil)
}

// RoundFailed is how a pull-request run ends after round end, whose task
// did not end done, and why: stopped (resumable) when the task was, out of
// budget when it spent it, else needs-you.
func RoundFailed(end PRRoundEndData) (engine.Status, string) {
	st := engine.Status(end.Status)
	if Resumable(st) && st != engine.StatusMaxIterations && st != engine.StatusNoProgress {
		return st, fmt.Sprintf("round %d (task %s) stopped: %s", end.Round, end.RunID, end.Details)
	}
	if st == engine.StatusBudgetExceeded {
		return st, fmt.Sprintf("round %d (task %s) spent the budget", end.Round, end.RunID)
	}
	return engine.StatusNeedsYou, fmt.Sprintf("round %d (task %s) ended %s: %s", end.Round, end.RunID, st, oneLine(end.Details))
}

// journaledThread is thread t as a round's journal keeps it, to answer it
// once the round pushed: where it is, and its first comment's id and
// author (GitHub answers a thread in reply to its first comment), not the
// words or the hunk.
func journaledThread(t forge.Thread) forge.Thread {
	if len(t.Comments) > 0 {
		t.Comments = []forge.Comment{{ID: t.Comments[0].ID, Author: t.Comments[0].Author}}
	}
	t.DiffHunk = ""
	return t
}

// ConflictReason is why a round for blockers is not made on Temporal
// workers, when one of them is a conflict with the base ("" when none
// is): the workflow does not merge the base yet (here, mergeBase does).
func ConflictReason(blockers []pull.Blocker) string {
	for _, b := range blockers {
		if b.Kind == pull.Conflict {
			return fmt.Sprintf("the branch conflicts with %s: merge or rebase it by hand (jlgcli does not resolve a pull request's conflict with its base yet)", b.Base)
		}
	}
	return ""
}

// TellsPR reports whether a pull-request run that ends with status tells
// the pull request why, in one comment (GiveUpComment).
func TellsPR(status engine.Status) bool {
	return status == engine.StatusNeedsYou || status == engine.StatusBudgetExceeded
}

// GiveUpComment is the one comment that tells pull request number why run
// runID stopped working on it (reason) and what is still in the way.
func GiveUpComment(runID string, number int, target pull.Target, reason string, blockers []pull.Blocker) string {
	var b strings.Builder
	fmt.Fprintf(&b, "jlgcli stopped working on this pull request (run `%s`): %s.\n", runID, strings.TrimSuffix(reason, "."))
	if len(blockers) > 0 {
		b.WriteString("\nStill in the way:\n")
		for _, bl := range blockers {
			fmt.Fprintf(&b, "- %s\n", bl.String())
		}
	}
	fmt.Fprintf(&b, "\nOnce a person has seen to it, `jlgcli pr %d --until %s` takes it up again.\n", number, target)
	return b.String()
}

// stopped ends a run stopped by Ctrl-C or jlgcli stop: resumable.
func (w *prWatch) stopped(ctx context.Context) (PRResult, error) {
	return w.end(context.WithoutCancel(ctx), engine.StatusInterrupted, "stopped while it worked the pull request: jlgcli resume "+w.run.ID+" goes on", nil)
}

// end ends the run with status: a loop that gave up tells the pull
// request why, once, and the hooks that it needs a person.
func (w *prWatch) end(ctx context.Context, status engine.Status, reason string, blockers []pull.Blocker) (PRResult, error) {
	ctx = context.WithoutCancel(ctx)
	d := PREndData{Status: status, ExitCode: status.ExitCode(), Reason: reason}
	if TellsPR(status) {
		body := GiveUpComment(w.run.ID, w.spec.Number, w.spec.Policy.Target, reason, blockers)
		if c, err := w.f.Comment(ctx, w.spec.Number, body); err != nil {
			w.p.warn("pull request #%d: comment: %v", w.spec.Number, err)
		} else {
			d.Comment = c.URL
		}
	}
	if err := w.record(EventPREnd, d); err != nil {
		return PRResult{}, err
	}
	evs, _, err := Events(w.run)
	if err != nil {
		return PRResult{}, err
	}
	res, err := PRResultOf(w.run, evs)
	if err != nil {
		return PRResult{}, err
	}
	w.checkpoint(string(status), res.CostUSD)
	if status == engine.StatusInterrupted || status == engine.StatusError {
		w.p.notice("pull request #%d: %s", w.spec.Number, reason)
	}
	w.j.hooks.prEnded(res)
	return res, nil
}

// prEnded tells the hooks that a pull-request run ended with res
// (run.ended), and that it needs a person when it gave up
// (run.needs-attention).
func (h hookRun) prEnded(res PRResult) {
	needs := ""
	if res.Status == engine.StatusNeedsYou {
		needs = fmt.Sprintf("pull request #%d: %s", res.Number, res.Reason)
	}
	e := hooks.Event{Status: string(res.Status), ExitCode: hooks.Int(res.ExitCode), Details: res.Reason, DurationMs: hooks.Millis(res.DurationMs)}
	h.ended(e, needs)
}

// checkpoint writes the run's progress, for runs and the index.
func (w *prWatch) checkpoint(status string, spent float64) {
	known := spent > 0
	for _, r := range w.rounds {
		known = known || r.CostKnown
	}
	p := store.Progress{Status: status, CostUSD: spent, CostKnown: known, Heartbeat: time.Now().UTC(), Iterations: len(w.rounds)}
	if !w.run.Meta.StartedAt.IsZero() {
		p.DurationMs = millis.Of(time.Since(w.run.Meta.StartedAt))
	}
	if err := w.j.checkpoint(struct {
		store.Progress
	}{p}, p); err != nil {
		w.p.warn("checkpoint: %v", err)
	}
}
