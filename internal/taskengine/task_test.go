package taskengine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// ---------------------------------------------------------------------------
// Fakes of a task's world: the working tree, the gate, the agents, the clock
// and the journal, all in memory.

// fakeWS is a working tree as a map of file contents. Snapshots are copies
// named "snap-N"; a change is measured by comparing two maps.
type fakeWS struct {
	mu        sync.Mutex
	base      map[string]string // the task's base
	files     map[string]string // the tree now
	committed map[string]string // the tree of the branch's last commit
	snaps     map[string]map[string]string
	names     []string // the names Snapshot was given, in order
	restores  []string // the commits Restore was given, in order
	commits   []string // the messages of the commits made, in order
	reads     []string // the files ReadFiles read, as commit:path
}

func newWS(files map[string]string) *fakeWS {
	return &fakeWS{base: maps.Clone(files), files: maps.Clone(files), committed: maps.Clone(files),
		snaps: map[string]map[string]string{}}
}

func (w *fakeWS) Dir() string { return "/fake/worktree" }

func (w *fakeWS) Snapshot(_ context.Context, name string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := fmt.Sprintf("snap-%d", len(w.snaps)+1)
	w.snaps[id] = maps.Clone(w.files)
	w.names = append(w.names, name)
	return id, nil
}

func (w *fakeWS) Diff(context.Context) (git.Change, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fakeChange(w.base, w.files), nil
}

func (w *fakeWS) DiffFrom(_ context.Context, commit string) (git.Change, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	from, ok := w.snaps[commit]
	if !ok {
		return git.Change{}, fmt.Errorf("no commit %s", commit)
	}
	return fakeChange(from, w.files), nil
}

// Measure is Diff, DiffFrom of each of from, then Snapshot, one after the
// other.
func (w *fakeWS) Measure(ctx context.Context, name string, from ...string) (git.Measured, error) {
	var m git.Measured
	var err error
	if m.Change, err = w.Diff(ctx); err != nil {
		return m, err
	}
	for _, commit := range from {
		c, err := w.DiffFrom(ctx, commit)
		if err != nil {
			return m, err
		}
		m.From = append(m.From, c)
	}
	m.Snapshot, err = w.Snapshot(ctx, name)
	return m, err
}

func (w *fakeWS) ReadFiles(_ context.Context, commit string, paths []string) (map[string][]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	snap, ok := w.snaps[commit]
	if !ok {
		return nil, fmt.Errorf("no commit %s", commit)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		w.reads = append(w.reads, commit+":"+p)
		if c, ok := snap[p]; ok {
			out[p] = []byte(c)
		}
	}
	return out, nil
}

func (w *fakeWS) Restore(_ context.Context, commit string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	snap, ok := w.snaps[commit]
	if !ok {
		return fmt.Errorf("no commit %s", commit)
	}
	w.files = maps.Clone(snap)
	w.restores = append(w.restores, commit)
	return nil
}

func (w *fakeWS) Commit(_ context.Context, message string) (string, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if maps.Equal(w.files, w.committed) {
		return "", false, nil
	}
	w.committed = maps.Clone(w.files)
	w.commits = append(w.commits, message)
	return fmt.Sprintf("commit-%d", len(w.commits)), true, nil
}

// deleted marks a file removed in reply.write.
const deleted = "\x00deleted"

func (w *fakeWS) write(files map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, c := range files {
		if c == deleted {
			delete(w.files, p)
		} else {
			w.files[p] = c
		}
	}
}

func (w *fakeWS) now() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.files)
}

// fakeChange compares two trees: a git-like diff of the changed files (the
// whole old content removed, the new added), hashed.
func fakeChange(from, to map[string]string) git.Change {
	paths := slices.Sorted(maps.Keys(from))
	for p := range to {
		if _, ok := from[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var b strings.Builder
	c := git.Change{Files: []git.FileChange{}}
	for _, p := range paths {
		old, inOld := from[p]
		now, inNew := to[p]
		if inOld && inNew && old == now {
			continue
		}
		var oldLines, newLines []string
		if inOld {
			oldLines = strings.Split(old, "\n")
		}
		if inNew {
			newLines = strings.Split(now, "\n")
		}
		status, a, z := "M", "a/"+p, "b/"+p
		switch {
		case !inOld:
			status, a = "A", "/dev/null"
		case !inNew:
			status, z = "D", "/dev/null"
			if strings.HasSuffix(p, "_test.go") {
				c.DeletedTests = append(c.DeletedTests, p)
			}
		}
		// The lines removed and added, as a multiset: enough for similar
		// changes to look similar.
		removed, added := lineDiff(oldLines, newLines)
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- %s\n+++ %s\n@@ -1,%d +1,%d @@\n", p, p, a, z, len(removed), len(added))
		for _, l := range removed {
			b.WriteString("-" + l + "\n")
		}
		for _, l := range added {
			b.WriteString("+" + l + "\n")
		}
		c.Files = append(c.Files, git.FileChange{Path: p, Status: status, Added: len(added), Deleted: len(removed)})
	}
	if len(c.Files) == 0 {
		c.Empty, c.Hash = true, git.EmptyHash
		return c
	}
	c.Text = b.String()
	c.Size = int64(len(c.Text))
	sum := sha256.Sum256([]byte(c.Text))
	c.Hash = hex.EncodeToString(sum[:])
	return c
}

// lineDiff is the lines of old missing from now, and those of now missing
// from old, counted as multisets, in their order.
func lineDiff(old, now []string) (removed, added []string) {
	count := map[string]int{}
	for _, l := range now {
		count[l]++
	}
	for _, l := range old {
		if count[l] > 0 {
			count[l]--
		} else {
			removed = append(removed, l)
		}
	}
	count = map[string]int{}
	for _, l := range old {
		count[l]++
	}
	for _, l := range now {
		if count[l] > 0 {
			count[l]--
		} else {
			added = append(added, l)
		}
	}
	return removed, added
}

// fakeTester judges the tree's files; a done context gives the interrupted
// report the real gate gives.
type fakeTester struct {
	ws     *fakeWS
	judge  func(files map[string]string) gate.Report
	onTest func() // called at each run (e.g. to move a fake clock)

	mu      sync.Mutex
	runs    int
	deleted [][]string
}

func (f *fakeTester) Test(ctx context.Context, change git.Change) gate.Report {
	f.mu.Lock()
	f.runs++
	f.deleted = append(f.deleted, change.DeletedTests)
	f.mu.Unlock()
	if f.onTest != nil {
		f.onTest()
	}
	if ctx.Err() != nil {
		return gate.Report{Status: gate.StatusWarning, Recommendation: gate.RecommendFixRequired, Interrupted: true, Confidence: 0.5}
	}
	return f.judge(f.ws.now())
}

func passReport() gate.Report {
	return gate.Report{Status: gate.StatusPass, Recommendation: gate.RecommendPassToCommit, Confidence: 1,
		Counts: gate.Counts{Run: 1, Passed: 1},
		Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "test", Command: "go test ./...", Passed: true}}}}
}

// failReport is a failed test; its fingerprint depends on the message, so
// two failures are the same for the loop rules when their messages are.
func failReport(msg string) gate.Report {
	sum := sha256.Sum256([]byte(msg))
	return gate.Report{Status: gate.StatusFail, Recommendation: gate.RecommendFixRequired, Confidence: 1,
		Counts:       gate.Counts{Run: 1, Failed: 1},
		TestFailures: []gate.TestFailure{{Test: "TestAnswer", Error: msg, File: "a_test.go", Line: 7, Check: "test"}},
		Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "test", Command: "go test ./...", ExitCode: 1,
			Fingerprint: hex.EncodeToString(sum[:8])}}}}
}

// answer passes when a.go holds pass; otherwise it fails with errs[content],
// or one message for every other wrong answer.
func answer(pass string, errs map[string]string) func(map[string]string) gate.Report {
	return func(files map[string]string) gate.Report {
		c := files["a.go"]
		if c == pass {
			return passReport()
		}
		if e, ok := errs[c]; ok {
			return failReport(e)
		}
		return failReport("the answer is wrong")
	}
}

// reply is one scripted call of a fake developer: what it writes in the
// tree and what it answers.
type reply struct {
	write  map[string]string
	resp   agent.Response
	before func() // runs at the call, before the writes
}

func edit(path, content string) reply {
	return reply{write: map[string]string{path: content}, resp: agent.Response{Text: "wrote " + content}}
}

// devAgent is a developer (or planner) replying from a script and recording
// every request and the files it found.
type devAgent struct {
	avail   agent.Availability
	ws      *fakeWS
	replies []reply

	mu    sync.Mutex
	reqs  []agent.Request
	seen  []map[string]string
	extra int // calls beyond the script
}

func (a *devAgent) Name() string { return "fake" }

func (a *devAgent) Check(context.Context) agent.Availability {
	if a.avail.Status == "" {
		return agent.Availability{Status: agent.Available}
	}
	return a.avail
}

func (a *devAgent) Run(_ context.Context, req agent.Request) (agent.Response, error) {
	a.mu.Lock()
	n := len(a.reqs)
	a.reqs = append(a.reqs, req)
	if a.ws != nil {
		a.seen = append(a.seen, a.ws.now())
	}
	a.mu.Unlock()
	if n >= len(a.replies) {
		a.mu.Lock()
		a.extra++
		a.mu.Unlock()
		return agent.Response{Text: "nothing more to do"}, nil
	}
	r := a.replies[n]
	if r.before != nil {
		r.before()
	}
	if a.ws != nil {
		a.ws.write(r.write)
	}
	return r.resp, nil
}

func (a *devAgent) prompts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.reqs {
		out = append(out, r.Prompt)
	}
	return out
}

// fakeClock is a clock that only moves when told; Sleep moves it.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.t = c.t.Add(d)
	return nil
}

// taskJournal keeps a task's events and checkpoints in memory.
type taskJournal struct {
	mu     sync.Mutex
	events []engine.Event
	cps    []Checkpoint
}

func (j *taskJournal) Record(ev engine.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, ev)
	return nil
}

func (j *taskJournal) CheckpointTask(cp Checkpoint) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.cps = append(j.cps, cp)
	return nil
}

func (j *taskJournal) Output(int) io.WriteCloser { return nil }

func (j *taskJournal) all() []engine.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.events)
}

func (j *taskJournal) types() []string {
	var out []string
	for _, ev := range j.all() {
		out = append(out, ev.Type)
	}
	return out
}

// taskObs records what an Observer is told.
type taskObs struct {
	started, done []int
	phases        []string
}

func (o *taskObs) AttemptStarted(p Progress)      { o.started = append(o.started, p.Number) }
func (o *taskObs) Phase(_ Progress, phase string) { o.phases = append(o.phases, phase) }
func (o *taskObs) AttemptDone(_ Progress, a Attempt) {
	o.done = append(o.done, a.Number)
}

// ---------------------------------------------------------------------------
// The task's world, built for one test.

type tierSpec struct {
	name     string
	model    string
	attempts int
	replies  []reply
	avail    agent.Availability
}

type world struct {
	ws      *fakeWS
	tester  *fakeTester
	clock   *fakeClock
	journal *taskJournal
	obs     *taskObs
	agents  map[string]*devAgent // by tier name; "planner" for the planner
	opts    Options
}

var startFiles = map[string]string{"a.go": "original content", "a_test.go": "the test"}

func newWorld(task string, tiers []tierSpec, judge func(map[string]string) gate.Report) *world {
	w := &world{ws: newWS(startFiles), clock: newClock(), journal: &taskJournal{}, obs: &taskObs{}, agents: map[string]*devAgent{}}
	w.tester = &fakeTester{ws: w.ws, judge: judge}
	w.opts = Options{RunID: "run-1", Policy: Policy{Task: task}, Workspace: w.ws, Tester: w.tester, Loops: detect.LoopDetector{},
		Journal: w.journal, Observer: w.obs, Now: w.clock.Now, Sleep: w.clock.Sleep}
	for _, s := range tiers {
		a := &devAgent{ws: w.ws, replies: s.replies, avail: s.avail}
		w.agents[s.name] = a
		w.opts.Tiers = append(w.opts.Tiers, Tier{Name: s.name, Backend: "fake", Model: s.model, Attempts: s.attempts, Agent: a})
	}
	return w
}

// planner adds a planner tier replying text.
func (w *world) planner(text string, usage agent.Usage) *devAgent {
	a := &devAgent{replies: []reply{{resp: agent.Response{Text: text, Usage: usage}}}}
	w.agents["planner"] = a
	w.opts.Plan = true
	w.opts.Planner = &Tier{Name: "planner", Backend: "fake", Model: "planner-model", Attempts: 1, Agent: a}
	return a
}

func (w *world) run(ctx context.Context) Result { return Run(ctx, w.opts) }

// ---------------------------------------------------------------------------
// What a result is checked against.

type detWant struct {
	Rule     string // every rule that fired (Detection.Names)
	Attempts []int
	Tier     string
	Action   string
}

func actionsOf(r Result) []string {
	var out []string
	for _, a := range r.Attempts {
		out = append(out, a.Action)
	}
	return out
}

func tiersOf(r Result) []string {
	var out []string
	for _, a := range r.Attempts {
		out = append(out, a.Tier)
	}
	return out
}

func numbersOf(r Result) []int {
	var out []int
	for _, a := range r.Attempts {
		out = append(out, a.Number)
	}
	return out
}

func detectionsOf(r Result) []detWant {
	var out []detWant
	for _, d := range r.Detections {
		out = append(out, detWant{d.Names(), d.Attempts, d.Tier, d.Action})
	}
	return out
}

func snapNames(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprint(i), fmt.Sprint(i, "-result"))
	}
	return out
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

func mustNotContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Errorf("%s contains %q:\n%s", what, sub, s)
		}
	}
}

// checkReplay checks that the journal gives back the result Run
// returned: ResultOf is what `task --json` prints from a run directory.
func checkReplay(t *testing.T, events []engine.Event, res Result) {
	t.Helper()
	got, err := ResultOf(res.RunID, events)
	if err != nil {
		t.Fatalf("ResultOf: %v", err)
	}
	res.Git = nil // filled in by the caller
	// The journal is JSON: a gate report's empty lists come back as empty
	// slices where Run had nil ones (the JSON says [] for both).
	if diff := cmp.Diff(res, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ResultOf differs from Run's result (-run +replay):\n%s", diff)
	}
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Errorf("ResultOf's JSON differs from Run's:\n%s\n%s", a, b)
	}
}

// ---------------------------------------------------------------------------
// The scenarios.

func TestRunTask(t *testing.T) {
	const task = "Fix the answer"
	wrongMsg := map[string]string{"wrong answer": "TestAnswer: want 42, got 41"}
	tests := []struct {
		name  string
		tiers []tierSpec
		judge func(map[string]string) gate.Report
		setup func(w *world)

		status       engine.Status
		exit         int
		actions      []string
		attemptTiers []string
		detections   []detWant
		commits      []string
		snapshots    []string // the names of the snapshots, in order
		check        func(t *testing.T, w *world, r Result)
	}{
		{
			name: "same diff: nudge, then escalate from the base; tier 2 passes",
			tiers: []tierSpec{
				{name: "t1", model: "small", attempts: 5, replies: []reply{edit("a.go", "wrong answer"), edit("a.go", "wrong answer"), edit("a.go", "wrong answer")}},
				{name: "t2", model: "big", attempts: 3, replies: []reply{edit("a.go", "right answer")}},
			},
			judge:        answer("right answer", wrongMsg),
			status:       engine.StatusDone,
			exit:         0,
			actions:      []string{ActionRetry, ActionNudge, ActionEscalate, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1", "t2"},
			detections:   []detWant{{"same-diff", []int{1, 2}, "t1", ActionNudge}, {"same-diff, same-error", []int{1, 2, 3}, "t1", ActionEscalate}},
			commits:      []string{"feat: Fix the answer (tier t2, attempt 4)"},
			snapshots:    snapNames(4),
			check: func(t *testing.T, w *world, r Result) {
				p1, p2 := w.agents["t1"].prompts(), w.agents["t2"].prompts()
				mustContain(t, "tier 1's first prompt", p1[0], "## Task\n\nFix the answer", "as this step started")
				mustNotContain(t, "tier 1's first prompt", p1[0], "## Last check result", "Step back")
				mustContain(t, "tier 1's second prompt", p1[1], "previous attempt (attempt 1)", "want 42, got 41", "attempt 1 (tier t1, small): changed a.go")
				mustNotContain(t, "tier 1's second prompt", p1[1], "Step back")
				mustContain(t, "tier 1's third prompt", p1[2], "## Step back", "Step back: your attempts are going round in circles (same-diff", "want 42, got 41")
				mustContain(t, "tier 2's first prompt", p2[0], "You take over from tier t1", "set aside", "want 42, got 41",
					"attempt 3 (tier t1, small)", "loop: attempts 2 and 3 made the same change")
				mustNotContain(t, "tier 2's first prompt", p2[0], "Step back")
				// Tier 2 starts from the step's base (the snapshot before
				// attempt 1), not from tier 1's tree.
				if n := len(w.ws.restores); n == 0 || w.ws.restores[n-1] != "snap-1" {
					t.Errorf("restores %v: the last must be the step's base, snap-1", w.ws.restores)
				}
				if diff := cmp.Diff(startFiles, w.agents["t2"].seen[0]); diff != "" {
					t.Errorf("tier 2 started from (-want +got):\n%s", diff)
				}
				if want := []bool{false, false, true, false}; !cmp.Equal(want, nudgedOf(r)) {
					t.Errorf("nudged %v, want %v", nudgedOf(r), want)
				}
				if diff := cmp.Diff([]int{1, 2, 3, 1}, inTierOf(r)); diff != "" {
					t.Errorf("in-tier numbers (-want +got):\n%s", diff)
				}
				if r.Commits[0] != "commit-1" || r.Attempts[3].Commit != "commit-1" {
					t.Errorf("commits %v, attempt 4's %q", r.Commits, r.Attempts[3].Commit)
				}
				wantTiers := []TierSummary{
					{Name: "t1", Backend: "fake", Model: "small", Attempts: 3, Outcome: "loop"},
					{Name: "t2", Backend: "fake", Model: "big", Attempts: 1, Passed: 1, Outcome: "passed"},
				}
				if diff := cmp.Diff(wantTiers, r.Tiers); diff != "" {
					t.Errorf("tiers (-want +got):\n%s", diff)
				}
				mustContain(t, "summary", r.Summary, "done: tier t2 passed the checks at attempt 4 (4 attempts in all)")
				// Each attempt starts from the snapshot taken before it and
				// leaves the one taken after.
				for i, a := range r.Attempts {
					if a.Start != fmt.Sprintf("snap-%d", 2*i+1) || a.Result != fmt.Sprintf("snap-%d", 2*i+2) {
						t.Errorf("attempt %d: start %s result %s", a.Number, a.Start, a.Result)
					}
				}
			},
		},
		{
			name: "same diff: escalate from the last tree",
			tiers: []tierSpec{
				{name: "t1", attempts: 5, replies: []reply{edit("a.go", "wrong answer"), edit("a.go", "wrong answer"), edit("a.go", "wrong answer")}},
				{name: "t2", attempts: 3, replies: []reply{edit("a.go", "right answer")}},
			},
			judge:        answer("right answer", wrongMsg),
			setup:        func(w *world) { w.opts.EscalateFrom = EscalateFromLast },
			status:       engine.StatusDone,
			actions:      []string{ActionRetry, ActionNudge, ActionEscalate, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1", "t2"},
			detections:   []detWant{{"same-diff", []int{1, 2}, "t1", ActionNudge}, {"same-diff, same-error", []int{1, 2, 3}, "t1", ActionEscalate}},
			commits:      []string{"feat: Fix the answer (tier t2, attempt 4)"},
			snapshots:    snapNames(4),
			check: func(t *testing.T, w *world, r Result) {
				if got := w.agents["t2"].seen[0]["a.go"]; got != "wrong answer" {
					t.Errorf("tier 2 found a.go %q, want tier 1's last tree", got)
				}
				mustContain(t, "tier 2's first prompt", w.agents["t2"].prompts()[0],
					"You take over from tier t1", "holds its last attempt's changes (attempt 3)", "want 42, got 41")
			},
		},
		{
			name: "oscillation A→B→A",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				edit("a.go", "alpha approach one"), edit("a.go", "beta approach two"), edit("a.go", "alpha approach one"), edit("a.go", "right answer")}}},
			judge: answer("right answer", map[string]string{
				"alpha approach one": "TestAnswer: alpha overflows",
				"beta approach two":  "TestAnswer: beta is off by one"}),
			status:       engine.StatusDone,
			actions:      []string{ActionRetry, ActionRetry, ActionNudge, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1", "t1"},
			detections:   []detWant{{"oscillation", []int{1, 2, 3}, "t1", ActionNudge}},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 4)"},
			snapshots:    snapNames(4),
			check: func(t *testing.T, w *world, r Result) {
				mustContain(t, "the prompt after the oscillation", w.agents["t1"].prompts()[3],
					"Step back: your attempts are going round in circles (oscillation", "alpha overflows")
			},
		},
		{
			name: "same error three times with different diffs",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				edit("a.go", "first try"), edit("a.go", "second guess"), edit("a.go", "third idea"), edit("a.go", "right answer")}}},
			judge:        answer("right answer", nil),
			status:       engine.StatusDone,
			actions:      []string{ActionRetry, ActionRetry, ActionNudge, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1", "t1"},
			detections:   []detWant{{"same-error", []int{1, 2, 3}, "t1", ActionNudge}},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 4)"},
			snapshots:    snapNames(4),
			check: func(t *testing.T, w *world, r Result) {
				mustContain(t, "the prompt after the same error", w.agents["t1"].prompts()[3], "(same-error: attempts 1, 2 and 3 failed the gate the same way")
			},
		},
		{
			name: "no change twice",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				{resp: agent.Response{Text: "I see no problem"}}, {resp: agent.Response{Text: "still none"}}, edit("a.go", "right answer")}}},
			judge:        answer("right answer", nil),
			status:       engine.StatusDone,
			actions:      []string{ActionRetry, ActionNudge, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1"},
			detections:   []detWant{{"no-change", []int{1, 2}, "t1", ActionNudge}},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 3)"},
			snapshots:    snapNames(3),
			check: func(t *testing.T, w *world, r Result) {
				mustContain(t, "the second prompt", w.agents["t1"].prompts()[1], "attempt 1 (tier t1): no change")
				mustContain(t, "the third prompt", w.agents["t1"].prompts()[2], "(no-change: attempts 1 and 2 changed nothing)")
			},
		},
		{
			name: "two nearly identical changes in a row",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				edit("a.go", "original content\n"+block(1)), edit("a.go", "original content\n"+block(1)+"\n"+block(2)), edit("a.go", "right answer")}}},
			judge: answer("right answer", map[string]string{
				"original content\n" + block(1):                   "TestAnswer: compute gives 1",
				"original content\n" + block(1) + "\n" + block(2): "TestAnswer: compute gives 2"}),
			status:       engine.StatusDone,
			actions:      []string{ActionRetry, ActionNudge, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1"},
			detections:   []detWant{{"similar-diff", []int{1, 2}, "t1", ActionNudge}},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 3)"},
			snapshots:    snapNames(3),
			check: func(t *testing.T, w *world, r Result) {
				// The rule compares what each attempt itself changed.
				if d := r.Attempts[1].AttemptDiff; strings.Contains(d, "+"+strings.Split(block(1), "\n")[0]) {
					t.Errorf("attempt 2's own diff holds attempt 1's change:\n%s", d)
				}
				mustContain(t, "the detection", r.Detections[0].Details, "lexical similarity")
			},
		},
		{
			name: "the same fix in other forms (Go syntax trees): nudge, then escalate",
			tiers: []tierSpec{
				{name: "t1", attempts: 5, replies: []reply{
					edit("a.go", "package a\n\nfunc Answer(x int) int {\n\ta := x\n\tb := 1\n\treturn a + b\n}\n"),
					// the statements in another order, other names, a comment
					edit("a.go", "package a\n\n// Answer answers.\nfunc Answer(n int) int {\n\tone := 1\n\tv := n\n\treturn one + v\n}\n"),
					// the names of the first, parentheses
					edit("a.go", "package a\n\nfunc Answer(x int) int {\n\tb := 1\n\ta := x\n\treturn (b + a)\n}\n")}},
				{name: "t2", attempts: 3, replies: []reply{edit("a.go", "right answer")}},
			},
			judge:        answer("right answer", nil),
			status:       engine.StatusDone,
			actions:      []string{ActionRetry, ActionNudge, ActionEscalate, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1", "t2"},
			detections:   []detWant{{"same-fix", []int{1, 2}, "t1", ActionNudge}, {"same-fix, same-error", []int{1, 2, 3}, "t1", ActionEscalate}},
			commits:      []string{"feat: Fix the answer (tier t2, attempt 4)"},
			snapshots:    snapNames(4),
			check: func(t *testing.T, w *world, r Result) {
				mustContain(t, "the detection", r.Detections[0].Details, "attempts 1 and 2 made the same fix in another form",
					"in a.go, the declaration it changes is the same syntax tree", "func Answer")
				mustContain(t, "tier 1's third prompt", w.agents["t1"].prompts()[2], "Step back: your attempts are going round in circles (same-fix")
				mustContain(t, "tier 2's first prompt", w.agents["t2"].prompts()[0], "You take over from tier t1", "same-fix")
				// Each attempt's a.go is read once: attempt 2's tree, read
				// when it was checked, is kept for the check of attempt 3.
				if want := []string{"snap-2:a.go", "snap-4:a.go", "snap-6:a.go"}; !slices.Equal(w.ws.reads, want) {
					t.Errorf("files read %v, want %v", w.ws.reads, want)
				}
			},
		},
		{
			name: "a tier taking over is not looping for what the tier before did",
			tiers: []tierSpec{
				{name: "t1", attempts: 1, replies: []reply{edit("a.go", "wrong answer")}},
				{name: "t2", attempts: 3, replies: []reply{edit("a.go", "wrong answer"), edit("a.go", "right answer")}},
			},
			judge:        answer("right answer", wrongMsg),
			status:       engine.StatusDone,
			actions:      []string{ActionEscalate, ActionRetry, ActionPass},
			attemptTiers: []string{"t1", "t2", "t2"},
			commits:      []string{"feat: Fix the answer (tier t2, attempt 3)"},
			snapshots:    snapNames(3),
			check: func(t *testing.T, w *world, r Result) {
				if r.Attempts[0].Change.Hash != r.Attempts[1].Change.Hash {
					t.Errorf("the two tiers' changes should hash alike")
				}
			},
		},
		{
			name: "the last tier loops twice: no-progress",
			tiers: []tierSpec{{name: "solo", attempts: 5, replies: []reply{
				edit("a.go", "wrong answer"), edit("a.go", "wrong answer"), edit("a.go", "wrong answer")}}},
			judge:        answer("right answer", wrongMsg),
			status:       engine.StatusNoProgress,
			exit:         5,
			actions:      []string{ActionRetry, ActionNudge, ActionStop},
			attemptTiers: []string{"solo", "solo", "solo"},
			detections:   []detWant{{"same-diff", []int{1, 2}, "solo", ActionNudge}, {"same-diff, same-error", []int{1, 2, 3}, "solo", ActionStop}},
			snapshots:    snapNames(3),
			check: func(t *testing.T, w *world, r Result) {
				mustContain(t, "details", r.Details, "the last tier, solo, looped (same-diff, same-error) after 3 attempts")
				if got := w.ws.now()["a.go"]; got != "wrong answer" {
					t.Errorf("a.go is %q: the work was not kept", got)
				}
				if r.Tiers[0].Outcome != "loop" {
					t.Errorf("outcome %q", r.Tiers[0].Outcome)
				}
			},
		},
		{
			name: "tiers spend their attempts: escalate, then max-iterations; each tier builds on its own attempts",
			tiers: []tierSpec{
				{name: "t1", attempts: 2, replies: []reply{edit("a.go", "first try"), edit("a.go", "second guess")}},
				{name: "t2", attempts: 2, replies: []reply{edit("a.go", "third idea"), edit("b.go", "more work")}},
			},
			judge:        answer("right answer", nil),
			status:       engine.StatusMaxIterations,
			exit:         4,
			actions:      []string{ActionRetry, ActionEscalate, ActionRetry, ActionStop},
			attemptTiers: []string{"t1", "t1", "t2", "t2"},
			snapshots:    snapNames(4),
			check: func(t *testing.T, w *world, r Result) {
				t1, t2 := w.agents["t1"], w.agents["t2"]
				if got := t1.seen[1]["a.go"]; got != "first try" {
					t.Errorf("tier 1's 2nd attempt found a.go %q, want its 1st attempt's", got)
				}
				if got := t2.seen[0]["a.go"]; got != "original content" {
					t.Errorf("tier 2's 1st attempt found a.go %q, want the base's", got)
				}
				if got := t2.seen[1]["a.go"]; got != "third idea" {
					t.Errorf("tier 2's 2nd attempt found a.go %q, want its 1st attempt's (the tier goes on from its last tree)", got)
				}
				want := map[string]string{"a.go": "third idea", "a_test.go": "the test", "b.go": "more work"}
				if diff := cmp.Diff(want, w.ws.now()); diff != "" {
					t.Errorf("the work was not kept (-want +got):\n%s", diff)
				}
				mustContain(t, "details", r.Details, "the last tier, t2, spent its attempts after 2 attempts")
				if r.Tiers[0].Outcome != "spent" || r.Tiers[1].Outcome != "spent" {
					t.Errorf("outcomes %+v", r.Tiers)
				}
				mustContain(t, "tier 2's first prompt", t2.prompts()[0], "You take over from tier t1")
			},
		},
		{
			name: "budget: the ledger refuses an attempt the budget left cannot pay",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				{write: map[string]string{"a.go": "first try"}, resp: agent.Response{Text: "1", Usage: agent.Usage{CostUSD: 0.40, CostKnown: true}}},
				{write: map[string]string{"a.go": "second guess"}, resp: agent.Response{Text: "2", Usage: agent.Usage{CostUSD: 0.40, CostKnown: true}}},
				{write: map[string]string{"a.go": "right answer"}, resp: agent.Response{Text: "3", Usage: agent.Usage{CostUSD: 0.40, CostKnown: true}}},
			}}},
			judge:        answer("right answer", nil),
			setup:        func(w *world) { w.opts.BudgetUSD = 1.00 },
			status:       engine.StatusBudgetExceeded,
			exit:         7,
			actions:      []string{ActionRetry, ActionRetry},
			attemptTiers: []string{"t1", "t1"},
			snapshots:    snapNames(2),
			check: func(t *testing.T, w *world, r Result) {
				if n := len(w.agents["t1"].reqs); n != 2 {
					t.Errorf("%d calls, want 2", n)
				}
				mustContain(t, "details", r.Details, "$0.2000 left", "less than the mean cost", "$0.4000")
				if r.CostUSD != 0.80 || !r.CostKnown || r.CostEstimated || r.BudgetUSD != 1 {
					t.Errorf("cost %v known %v estimated %v budget %v", r.CostUSD, r.CostKnown, r.CostEstimated, r.BudgetUSD)
				}
			},
		},
		{
			name: "budget: one attempt spends more than the budget",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				{write: map[string]string{"a.go": "first try"}, resp: agent.Response{Text: "1", Usage: agent.Usage{CostUSD: 1.50, CostKnown: true}}},
				edit("a.go", "right answer"),
			}}},
			judge:        answer("right answer", nil),
			setup:        func(w *world) { w.opts.BudgetUSD = 1.00 },
			status:       engine.StatusBudgetExceeded,
			exit:         7,
			actions:      []string{ActionStop},
			attemptTiers: []string{"t1"},
			snapshots:    snapNames(1),
			check: func(t *testing.T, w *world, r Result) {
				if n := len(w.agents["t1"].reqs); n != 1 {
					t.Errorf("%d calls, want 1", n)
				}
				mustContain(t, "details", r.Details, "is spent ($1.5000) after 1 attempt")
			},
		},
		{
			name: "cost estimated from tokens",
			tiers: []tierSpec{{name: "t1", model: "m-test", attempts: 2, replies: []reply{
				{write: map[string]string{"a.go": "right answer"}, resp: agent.Response{Text: "done", Usage: agent.Usage{InputTokens: 1000, OutputTokens: 500}}},
			}}},
			judge:        answer("right answer", nil),
			setup:        func(w *world) { w.opts.Prices = cost.Table{"m-test": {InputPerMTok: 2, OutputPerMTok: 10}} },
			status:       engine.StatusDone,
			actions:      []string{ActionPass},
			attemptTiers: []string{"t1"},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 1)"},
			snapshots:    snapNames(1),
			check: func(t *testing.T, w *world, r Result) {
				want := cost.Price{InputPerMTok: 2, OutputPerMTok: 10}.Cost(1000, 500)
				a := r.Attempts[0]
				if a.CostUSD != want || !a.CostEstimated || !a.CostKnown {
					t.Errorf("attempt cost %v estimated %v known %v, want %v estimated", a.CostUSD, a.CostEstimated, a.CostKnown, want)
				}
				if r.CostUSD != want || !r.CostEstimated || !r.CostKnown || !r.Tiers[0].CostEstimated {
					t.Errorf("task cost %v estimated %v known %v tier %+v", r.CostUSD, r.CostEstimated, r.CostKnown, r.Tiers[0])
				}
				if want != 0.007 {
					t.Errorf("price %v, want $0.007", want)
				}
				if r.InputTokens != 1000 || r.OutputTokens != 500 {
					t.Errorf("tokens %d %d", r.InputTokens, r.OutputTokens)
				}
				mustContain(t, "summary", r.Summary, "; ~$0.0070")
			},
		},
		{
			name: "cost unknown without a price",
			tiers: []tierSpec{{name: "t1", model: "unpriced", attempts: 2, replies: []reply{
				{write: map[string]string{"a.go": "right answer"}, resp: agent.Response{Text: "done", Usage: agent.Usage{InputTokens: 1000, OutputTokens: 500}}},
			}}},
			judge:        answer("right answer", nil),
			status:       engine.StatusDone,
			actions:      []string{ActionPass},
			attemptTiers: []string{"t1"},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 1)"},
			snapshots:    snapNames(1),
			check: func(t *testing.T, w *world, r Result) {
				a := r.Attempts[0]
				if a.CostUSD != 0 || a.CostEstimated || a.CostKnown || r.CostKnown || r.CostEstimated {
					t.Errorf("attempt %+v, task known %v estimated %v", a, r.CostKnown, r.CostEstimated)
				}
			},
		},
		{
			name: "timeout during a call: the gate is cut, the attempt not recorded",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				edit("a.go", "first try"), edit("a.go", "second guess"), edit("a.go", "right answer")}}},
			judge: answer("right answer", nil),
			setup: func(w *world) {
				w.opts.Timeout = 10 * time.Minute
				for i := range w.agents["t1"].replies {
					w.agents["t1"].replies[i].before = func() { w.clock.Advance(6 * time.Minute) }
				}
			},
			status:       engine.StatusTimeout,
			exit:         75,
			actions:      []string{ActionRetry},
			attemptTiers: []string{"t1"},
			snapshots:    append(snapNames(1), "2", "2-result"),
			check: func(t *testing.T, w *world, r Result) {
				mustContain(t, "details", r.Details, "global timeout of 10m0s reached while the checks judged attempt 2")
				if r.DurationMs != millis.Of(12*time.Minute) {
					t.Errorf("duration %d", r.DurationMs)
				}
			},
		},
		{
			name: "timeout between attempts",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				edit("a.go", "first try"), edit("a.go", "second guess"), edit("a.go", "right answer")}}},
			judge: answer("right answer", nil),
			setup: func(w *world) {
				w.opts.Timeout = 10 * time.Minute
				for i := range w.agents["t1"].replies {
					w.agents["t1"].replies[i].before = func() { w.clock.Advance(4 * time.Minute) }
				}
				w.tester.onTest = func() { w.clock.Advance(time.Minute) }
			},
			status:       engine.StatusTimeout,
			exit:         75,
			actions:      []string{ActionRetry, ActionRetry},
			attemptTiers: []string{"t1", "t1"},
			snapshots:    snapNames(2),
			check: func(t *testing.T, w *world, r Result) {
				mustContain(t, "details", r.Details, "global timeout of 10m0s reached after 2 attempts")
				if n := len(w.agents["t1"].reqs); n != 2 {
					t.Errorf("%d calls", n)
				}
				if r.Attempts[0].DurationMs != millis.Of(5*time.Minute) {
					t.Errorf("attempt 1 took %dms", r.Attempts[0].DurationMs)
				}
			},
		},
		{
			name: "timeout: the agent was stopped by the deadline",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				{resp: agent.Response{ExitCode: 143, Failure: &agent.Failure{Kind: agent.FailTimeout, Message: "stopped"}}}}}},
			judge:     answer("right answer", nil),
			setup:     func(w *world) { w.opts.Timeout = 10 * time.Minute },
			status:    engine.StatusTimeout,
			exit:      75,
			snapshots: []string{"1"},
			check: func(t *testing.T, w *world, r Result) {
				if r.Failure == nil || r.Failure.Kind != agent.FailTimeout {
					t.Errorf("failure %+v", r.Failure)
				}
			},
		},
		{
			name: "rate limit without a reset time: wait what is left of max-wait, then call again",
			tiers: []tierSpec{{name: "t1", attempts: 2, replies: []reply{
				{resp: agent.Response{ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailRateLimit, Message: "429 slow down"}}},
				edit("a.go", "right answer"),
			}}},
			judge:        answer("right answer", nil),
			setup:        func(w *world) { w.opts.MaxWait = 2 * time.Second },
			status:       engine.StatusDone,
			actions:      []string{ActionPass},
			attemptTiers: []string{"t1"},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 1)"},
			snapshots:    snapNames(1),
			check: func(t *testing.T, w *world, r Result) {
				if diff := cmp.Diff([]time.Duration{2 * time.Second}, w.clock.sleeps); diff != "" {
					t.Errorf("sleeps (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "rate limit within max-wait: wait, then call again",
			tiers: []tierSpec{{name: "t1", attempts: 2, replies: []reply{
				{resp: agent.Response{ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailRateLimit, Message: "429 slow down",
					ResetAt: time.Date(2026, 1, 2, 10, 5, 0, 0, time.UTC)}}},
				edit("a.go", "right answer"),
			}}},
			judge: answer("right answer", nil),
			setup: func(w *world) {
				w.opts.MaxWait = time.Hour
				w.opts.Timeout = 10 * time.Minute // the wait does not count
			},
			status:       engine.StatusDone,
			actions:      []string{ActionPass},
			attemptTiers: []string{"t1"},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 1)"},
			snapshots:    snapNames(1),
			check: func(t *testing.T, w *world, r Result) {
				if diff := cmp.Diff([]time.Duration{5*time.Minute + time.Second}, w.clock.sleeps); diff != "" {
					t.Errorf("sleeps (-want +got):\n%s", diff)
				}
				p := w.agents["t1"].prompts()
				if len(p) != 2 || p[0] != p[1] {
					t.Errorf("%d calls; the call made again must have the same prompt", len(p))
				}
				if r.DurationMs != 0 {
					t.Errorf("duration %dms: waiting is not active time", r.DurationMs)
				}
				if !slices.Contains(w.journal.types(), engine.EventWait) {
					t.Errorf("no wait event: %v", w.journal.types())
				}
				// A journal that ends at the wait (the task was killed while
				// waiting) still knows the time waited, against --max-wait.
				events := w.journal.all()
				i := slices.IndexFunc(events, func(ev engine.Event) bool { return ev.Type == engine.EventWait })
				j, err := Replay(events[:i+1])
				if err != nil || j.Resume.State.WaitedMs != millis.Of(5*time.Minute+time.Second) {
					t.Errorf("replayed waited %d (%v)", j.Resume.State.WaitedMs, err)
				}
			},
		},
		{
			name: "rate limit without max-wait: rate-limited",
			tiers: []tierSpec{{name: "t1", attempts: 2, replies: []reply{
				{resp: agent.Response{ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailRateLimit, Message: "429 slow down",
					ResetAt: time.Date(2026, 1, 2, 10, 5, 0, 0, time.UTC)}}},
				edit("a.go", "right answer"),
			}}},
			judge:     answer("right answer", nil),
			status:    engine.StatusRateLimited,
			exit:      69,
			snapshots: []string{"1"},
			check: func(t *testing.T, w *world, r Result) {
				if len(w.clock.sleeps) != 0 || len(w.agents["t1"].reqs) != 1 {
					t.Errorf("sleeps %v, %d calls", w.clock.sleeps, len(w.agents["t1"].reqs))
				}
				if r.Failure == nil || r.Failure.Kind != agent.FailRateLimit {
					t.Errorf("failure %+v", r.Failure)
				}
				mustContain(t, "details", r.Details, "tier t1: rate limited: 429 slow down", "resets at 2026-01-02T10:05:00Z")
			},
		},
		{
			name: "a tier's backend is missing: nothing is called",
			tiers: []tierSpec{
				{name: "t1", attempts: 2, replies: []reply{edit("a.go", "right answer")}},
				{name: "t2", attempts: 2, avail: agent.Availability{Status: agent.Missing, Details: "command not found: big"}},
			},
			judge:  answer("right answer", nil),
			status: engine.StatusBackendMissing,
			exit:   2,
			check: func(t *testing.T, w *world, r Result) {
				if len(w.agents["t1"].reqs)+len(w.agents["t2"].reqs) != 0 {
					t.Errorf("an agent was called")
				}
				mustContain(t, "details", r.Details, "tier t2: command not found: big")
			},
		},
		{
			name:  "the planner's backend is unauthenticated",
			tiers: []tierSpec{{name: "t1", attempts: 2, replies: []reply{edit("a.go", "right answer")}}},
			judge: answer("right answer", nil),
			setup: func(w *world) {
				w.planner(`{"steps": ["a"]}`, agent.Usage{}).avail = agent.Availability{Status: agent.Unauthenticated, Details: "log in"}
			},
			status: engine.StatusBackendUnauthenticated,
			exit:   6,
			check: func(t *testing.T, w *world, r Result) {
				if len(w.agents["t1"].reqs)+len(w.agents["planner"].reqs) != 0 {
					t.Errorf("an agent was called")
				}
			},
		},
		{
			name:  "the planner spends the budget",
			tiers: []tierSpec{{name: "t1", attempts: 2, replies: []reply{edit("a.go", "right answer")}}},
			judge: answer("right answer", nil),
			setup: func(w *world) {
				w.opts.BudgetUSD = 1
				w.planner(`{"steps": ["a"]}`, agent.Usage{CostUSD: 2, CostKnown: true})
			},
			status: engine.StatusBudgetExceeded,
			exit:   7,
			check: func(t *testing.T, w *world, r Result) {
				if len(w.agents["t1"].reqs) != 0 {
					t.Errorf("a developer was called")
				}
				mustContain(t, "details", r.Details, "spent by the planner ($2.0000)")
				if r.CostUSD != 2 || len(r.Plan) != 1 {
					t.Errorf("cost %v plan %v", r.CostUSD, r.Plan)
				}
			},
		},
		{
			name:         "the checks pass without a change: done, nothing to commit",
			tiers:        []tierSpec{{name: "t1", attempts: 2, replies: []reply{{resp: agent.Response{Text: "it already works"}}}}},
			judge:        func(map[string]string) gate.Report { return passReport() },
			status:       engine.StatusDone,
			actions:      []string{ActionPass},
			attemptTiers: []string{"t1"},
			snapshots:    snapNames(1),
			check: func(t *testing.T, w *world, r Result) {
				if r.Commits == nil || len(r.Commits) != 0 || r.Attempts[0].Commit != "" {
					t.Errorf("commits %#v, attempt's %q", r.Commits, r.Attempts[0].Commit)
				}
				if r.Text != "it already works" {
					t.Errorf("text %q", r.Text)
				}
			},
		},
		{
			name:   "no tier",
			judge:  answer("right answer", nil),
			status: engine.StatusError,
			exit:   1,
		},
		{
			name: "plan: two steps, each developed and committed",
			tiers: []tierSpec{{name: "t1", attempts: 3, replies: []reply{
				edit("a.go", "right answer"), edit("b.go", "bad b"), edit("b.go", "good b")}}},
			judge: func(files map[string]string) gate.Report {
				switch {
				case files["a.go"] != "right answer":
					return failReport("TestAnswer: wrong")
				case files["b.go"] == "bad b":
					return failReport("TestB: bad b")
				}
				return passReport()
			},
			setup: func(w *world) {
				w.opts.Task = "Build it"
				w.planner("Here is the plan:\n```json\n{\"steps\": [\"a\", \"b\"]}\n```\n", agent.Usage{CostUSD: 0.01, CostKnown: true})
			},
			status:       engine.StatusDone,
			actions:      []string{ActionPass, ActionRetry, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1"},
			commits:      []string{"feat: Build it (step 1/2, tier t1, attempt 1)", "feat: Build it (step 2/2, tier t1, attempt 3)"},
			snapshots:    snapNames(3),
			check: func(t *testing.T, w *world, r Result) {
				if diff := cmp.Diff([]string{"a", "b"}, r.Plan); diff != "" {
					t.Errorf("plan (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]int{1, 2, 2}, stepsOf(r)); diff != "" {
					t.Errorf("steps (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]int{1, 1, 2}, inTierOf(r)); diff != "" {
					t.Errorf("in-tier (-want +got):\n%s", diff)
				}
				pp := w.agents["planner"].prompts()
				if len(pp) != 1 {
					t.Fatalf("%d planner calls", len(pp))
				}
				mustContain(t, "the planner's prompt", pp[0], "planner", "Build it", `{"steps": [`)
				p := w.agents["t1"].prompts()
				mustContain(t, "step 1's prompt", p[0], "1. [now] a\n2. [todo] b", "Work on step 1 only")
				mustContain(t, "step 2's prompt", p[1], "1. [done] a\n2. [now] b", "Work on step 2 only", "as this step started")
				mustNotContain(t, "step 2's prompt", p[1], "## What was tried")
				mustContain(t, "step 2's second prompt", p[2], "1. [done] a\n2. [now] b", "TestB: bad b", "previous attempt (attempt 2)")
				// Step 2 starts from step 1's work.
				if got := w.agents["t1"].seen[1]["a.go"]; got != "right answer" {
					t.Errorf("step 2 found a.go %q", got)
				}
				if r.CostUSD != 0.01 || !r.CostKnown {
					t.Errorf("cost %v known %v: the planner's call counts", r.CostUSD, r.CostKnown)
				}
				if diff := cmp.Diff([]string{"commit-1", "commit-2"}, r.Commits); diff != "" {
					t.Errorf("commits (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "plan: no change in step 2 is measured from where the step started",
			tiers: []tierSpec{{name: "t1", attempts: 5, replies: []reply{
				edit("a.go", "right answer"),
				{resp: agent.Response{Text: "nothing to do"}}, {resp: agent.Response{Text: "really nothing"}},
				edit("b.go", "good b")}}},
			setup: func(w *world) {
				w.planner(`{"steps": ["a", "b"]}`, agent.Usage{})
				// The checks want b.go once step 2 is under way.
				step2 := false
				w.agents["t1"].replies[1].before = func() { step2 = true }
				w.tester.judge = func(files map[string]string) gate.Report {
					switch {
					case files["a.go"] != "right answer":
						return failReport("TestAnswer: wrong")
					case step2 && files["b.go"] != "good b":
						return failReport("TestB: b is missing")
					}
					return passReport()
				}
			},
			status:       engine.StatusDone,
			actions:      []string{ActionPass, ActionRetry, ActionNudge, ActionPass},
			attemptTiers: []string{"t1", "t1", "t1", "t1"},
			detections:   []detWant{{"no-change", []int{2, 3}, "t1", ActionNudge}},
			commits:      []string{"feat: Fix the answer (step 1/2, tier t1, attempt 1)", "feat: Fix the answer (step 2/2, tier t1, attempt 4)"},
			snapshots:    snapNames(4),
			check: func(t *testing.T, w *world, r Result) {
				if r.Detections[0].Step != 2 {
					t.Errorf("detection at step %d", r.Detections[0].Step)
				}
				if a := r.Attempts[1]; !a.Unchanged || a.Change.Empty {
					t.Errorf("attempt 2: unchanged %v, empty against the base %v", a.Unchanged, a.Change.Empty)
				}
			},
		},
		{
			name:         "plan by the first tier; a reply without JSON makes one step",
			tiers:        []tierSpec{{name: "t1", attempts: 3, replies: []reply{{resp: agent.Response{Text: "I would just fix it."}}, edit("a.go", "right answer")}}},
			judge:        answer("right answer", nil),
			setup:        func(w *world) { w.opts.Plan = true },
			status:       engine.StatusDone,
			actions:      []string{ActionPass},
			attemptTiers: []string{"t1"},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 1)"},
			snapshots:    snapNames(1),
			check: func(t *testing.T, w *world, r Result) {
				if diff := cmp.Diff([]string{task}, r.Plan); diff != "" {
					t.Errorf("plan (-want +got):\n%s", diff)
				}
				p := w.agents["t1"].prompts()
				mustContain(t, "the first call", p[0], "You are the planner")
				mustContain(t, "the second call", p[1], "You are the developer", "1. [now] Fix the answer")
			},
		},
		{
			name: "a deleted test file is passed to the gate",
			tiers: []tierSpec{{name: "t1", attempts: 1, replies: []reply{
				{write: map[string]string{"a_test.go": deleted, "a.go": "right answer"}, resp: agent.Response{Text: "removed the test"}}}}},
			judge:        answer("right answer", nil),
			status:       engine.StatusDone,
			actions:      []string{ActionPass},
			attemptTiers: []string{"t1"},
			commits:      []string{"feat: Fix the answer (tier t1, attempt 1)"},
			snapshots:    snapNames(1),
			check: func(t *testing.T, w *world, r Result) {
				if diff := cmp.Diff([][]string{{"a_test.go"}}, w.tester.deleted); diff != "" {
					t.Errorf("deleted tests (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"a_test.go"}, r.Attempts[0].Change.DeletedTests); diff != "" {
					t.Errorf("change (-want +got):\n%s", diff)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(task, tt.tiers, tt.judge)
			if tt.setup != nil {
				tt.setup(w)
			}
			r := w.run(context.Background())
			if r.Status != tt.status || r.ExitCode != tt.exit {
				t.Fatalf("status %s exit %d, want %s %d (details %q)", r.Status, r.ExitCode, tt.status, tt.exit, r.Details)
			}
			if tt.status != engine.StatusDone && r.Details == "" {
				t.Errorf("a task that is not done must say why")
			}
			if diff := cmp.Diff(tt.actions, actionsOf(r)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.attemptTiers, tiersOf(r)); diff != "" {
				t.Errorf("tiers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.detections, detectionsOf(r)); diff != "" {
				t.Errorf("detections (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.commits, w.ws.commits); diff != "" {
				t.Errorf("commits (-want +got):\n%s", diff)
			}
			if len(r.Commits) != len(tt.commits) {
				t.Errorf("result commits %v", r.Commits)
			}
			// Each attempt's agent found the tree of the snapshot taken
			// before it (where the engine says it started).
			for _, s := range tt.tiers {
				var as []Attempt
				for _, a := range r.Attempts {
					if a.Tier == s.name {
						as = append(as, a)
					}
				}
				seen := w.agents[s.name].seen
				if w.opts.Plan && w.opts.Planner == nil && s.name == w.opts.Tiers[0].Name && len(seen) > 0 {
					seen = seen[1:] // the planning call
				}
				if len(seen) != len(as) {
					continue // calls made again (rate limits) or cut short
				}
				for i, a := range as {
					if diff := cmp.Diff(w.ws.snaps[a.Start], seen[i]); diff != "" {
						t.Errorf("attempt %d found a tree other than its start %s (-start +found):\n%s", a.Number, a.Start, diff)
					}
				}
			}
			if diff := cmp.Diff(tt.snapshots, w.ws.names); diff != "" {
				t.Errorf("snapshots (-want +got):\n%s", diff)
			}
			// Numbers are contiguous; every recorded attempt was observed.
			if want := seq(len(r.Attempts)); !cmp.Equal(want, numbersOf(r)) {
				t.Errorf("attempt numbers %v", numbersOf(r))
			}
			if r.Iterations != len(r.Attempts) {
				t.Errorf("iterations %d for %d attempts", r.Iterations, len(r.Attempts))
			}
			if !cmp.Equal(numbersOf(r), w.obs.done, cmpopts.EquateEmpty()) {
				t.Errorf("observer told of attempts %v, result has %v", w.obs.done, numbersOf(r))
			}
			for name, a := range w.agents {
				if a.extra > 0 {
					t.Errorf("agent %s was called %d times beyond its script", name, a.extra)
				}
			}
			if tt.check != nil {
				tt.check(t, w, r)
			}
			checkReplay(t, w.journal.all(), r)
			// The last checkpoint has the final status.
			if cps := w.journal.cps; len(cps) == 0 || engine.Status(cps[len(cps)-1].Status) != r.Status || cps[len(cps)-1].Iterations != len(r.Attempts) {
				t.Errorf("last checkpoint %+v", cps[len(cps)-1])
			}
		})
	}
}

// block is a few lines of code differing from another block only by n.
func block(n int) string {
	return fmt.Sprintf("func compute%[1]d(alpha, beta, gamma int) int {\n"+
		"\ttotal := alpha*beta + gamma*delta - epsilon/zeta\n"+
		"\tfor index := range items { total += weight(items[index], factor) }\n"+
		"\treturn normalize(total, lower, upper) + offset(%[1]d)\n}", n)
}

func seq(n int) []int {
	var out []int
	for i := 1; i <= n; i++ {
		out = append(out, i)
	}
	return out
}

func nudgedOf(r Result) []bool {
	var out []bool
	for _, a := range r.Attempts {
		out = append(out, a.Nudged)
	}
	return out
}

func inTierOf(r Result) []int {
	var out []int
	for _, a := range r.Attempts {
		out = append(out, a.InTier)
	}
	return out
}

func stepsOf(r Result) []int {
	var out []int
	for _, a := range r.Attempts {
		out = append(out, a.Step)
	}
	return out
}

// An interrupted call is not an attempt: the journal resumes the task, whose
// attempts go on from the last recorded one.
func TestRunTaskInterruptedThenResumed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 5}}, answer("right answer", nil))
	a := w.agents["t1"]
	a.replies = []reply{
		edit("a.go", "first try"),
		// Ctrl-C during the call: the CLI is stopped as the context ends.
		{before: cancel, resp: agent.Response{ExitCode: 143, Failure: &agent.Failure{Kind: agent.FailTimeout, Message: "stopped"}}},
		edit("a.go", "second guess"),
		edit("a.go", "right answer"),
	}
	r1 := w.run(ctx)
	if r1.Status != engine.StatusInterrupted || r1.ExitCode != 130 {
		t.Fatalf("status %s exit %d (%s)", r1.Status, r1.ExitCode, r1.Details)
	}
	if diff := cmp.Diff([]int{1}, numbersOf(r1)); diff != "" {
		t.Errorf("the interrupted attempt was recorded (-want +got):\n%s", diff)
	}
	mustContain(t, "details", r1.Details, "interrupted during attempt 2")
	checkReplay(t, w.journal.all(), r1)

	j, err := Replay(w.journal.all())
	if err != nil {
		t.Fatal(err)
	}
	if j.Stop == nil || j.Stop.Status != engine.StatusInterrupted || j.Resume.State.Attempts != 1 || len(j.Resume.Attempts) != 1 {
		t.Fatalf("replayed %+v", j)
	}
	w.opts.Resume = &j.Resume
	r2 := w.run(context.Background())
	if r2.Status != engine.StatusDone {
		t.Fatalf("resumed: status %s (%s)", r2.Status, r2.Details)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, numbersOf(r2)); diff != "" {
		t.Errorf("attempt numbers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, inTierOf(r2)); diff != "" {
		t.Errorf("in-tier numbers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ActionRetry, ActionRetry, ActionPass}, actionsOf(r2)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"feat: Fix the answer (tier t1, attempt 3)"}, w.ws.commits); diff != "" {
		t.Errorf("commits (-want +got):\n%s", diff)
	}
	// The attempt cut short is made again, with the same history.
	p := a.prompts()
	if len(p) != 4 || p[1] != p[2] {
		t.Errorf("%d calls; the attempt made again must have the prompt of the one cut short", len(p))
	}
	mustContain(t, "the resumed prompt", p[2], "previous attempt (attempt 1)", "attempt 1 (tier t1): changed a.go")
	if diff := cmp.Diff([]string{engine.EventStart, EventAttempt, engine.EventStop, engine.EventResume, EventAttempt, EventAttempt, engine.EventStop}, w.journal.types()); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
	checkReplay(t, w.journal.all(), r2)
	if r2.Iterations != 3 {
		t.Errorf("iterations %d", r2.Iterations)
	}
}

// A resumed task keeps its plan and the step it was at: the planner is not
// asked again.
func TestRunTaskResumeKeepsThePlan(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorld("Build it", []tierSpec{{name: "t1", attempts: 3}}, answer("right answer", nil))
	pl := w.planner(`{"steps": ["a", "b"]}`, agent.Usage{CostUSD: 0.05, CostKnown: true})
	a := w.agents["t1"]
	a.replies = []reply{
		edit("a.go", "right answer"),
		{before: cancel, resp: agent.Response{ExitCode: 143, Failure: &agent.Failure{Kind: agent.FailTimeout, Message: "stopped"}}},
		edit("b.go", "b"),
	}
	if r := w.run(ctx); r.Status != engine.StatusInterrupted || len(r.Attempts) != 1 {
		t.Fatalf("status %s, %d attempts", r.Status, len(r.Attempts))
	}
	j, err := Replay(w.journal.all())
	if err != nil {
		t.Fatal(err)
	}
	if !j.Resume.Planned || j.Resume.State.Step != 1 {
		t.Fatalf("replayed planned %v step %d", j.Resume.Planned, j.Resume.State.Step)
	}
	w.opts.Resume = &j.Resume
	r := w.run(context.Background())
	if r.Status != engine.StatusDone {
		t.Fatalf("status %s (%s)", r.Status, r.Details)
	}
	if len(pl.reqs) != 1 {
		t.Errorf("the planner was called %d times", len(pl.reqs))
	}
	if diff := cmp.Diff([]string{"a", "b"}, r.Plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2}, stepsOf(r)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	// The resumed step's attempt is the task's attempt 2, as its refs and report number it.
	if diff := cmp.Diff([]string{"feat: Build it (step 1/2, tier t1, attempt 1)", "feat: Build it (step 2/2, tier t1, attempt 2)"}, w.ws.commits); diff != "" {
		t.Errorf("commits (-want +got):\n%s", diff)
	}
	if r.CostUSD != 0.05 {
		t.Errorf("cost %v: the planner's call counts once", r.CostUSD)
	}
	mustContain(t, "the resumed prompt", a.prompts()[2], "1. [done] a\n2. [now] b")
	checkReplay(t, w.journal.all(), r)
}

// The tree an interrupted call left half-edited is not the previous
// attempt's: the attempt made again on resume starts from that attempt's
// result, as every attempt of a tier does.
func TestRunTaskResumeStartsFromThePreviousAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 5}}, answer("right answer", nil))
	a := w.agents["t1"]
	a.replies = []reply{
		edit("a.go", "first try"),
		{before: cancel, write: map[string]string{"a.go": "half an edit"}, resp: agent.Response{ExitCode: 143, Failure: &agent.Failure{Kind: agent.FailTimeout, Message: "stopped"}}},
		edit("b.go", "more"),
	}
	if r := w.run(ctx); r.Status != engine.StatusInterrupted {
		t.Fatalf("status %s", r.Status)
	}
	j, err := Replay(w.journal.all())
	if err != nil {
		t.Fatal(err)
	}
	w.opts.Resume = &j.Resume
	w.run(context.Background())
	if len(a.seen) < 3 {
		t.Fatalf("%d calls", len(a.seen))
	}
	if got := a.seen[2]["a.go"]; got != "first try" {
		t.Errorf("the resumed attempt found a.go %q, want attempt 1's %q", got, "first try")
	}
}

// Replaying the journal of a task still running (or killed) gives status
// running and exit code -1.
func TestTaskResultOfLiveTask(t *testing.T) {
	w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 3, replies: []reply{edit("a.go", "first try"), edit("a.go", "right answer")}}},
		answer("right answer", nil))
	w.run(context.Background())
	events := w.journal.all()
	// Cut the journal after the first attempt.
	i := slices.IndexFunc(events, func(ev engine.Event) bool { return ev.Type == EventAttempt })
	r, err := ResultOf("run-1", events[:i+1])
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != engine.StatusRunning || r.ExitCode != -1 || r.Iterations != 1 || r.Summary != "" {
		t.Errorf("live result: status %s exit %d iterations %d summary %q", r.Status, r.ExitCode, r.Iterations, r.Summary)
	}
	if _, err := ResultOf("run-1", []engine.Event{{Type: EventAttempt, Data: json.RawMessage(`{`)}}); err == nil {
		t.Errorf("a broken event must be an error")
	}
}

// The checkpoint is refreshed while a call runs (and the race detector sees
// the heartbeat goroutine against the task).
func TestRunTaskHeartbeat(t *testing.T) {
	w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 1}}, answer("right answer", nil))
	w.agents["t1"].replies = []reply{{before: func() { time.Sleep(30 * time.Millisecond) }, write: map[string]string{"a.go": "right answer"}}}
	w.opts.HeartbeatEvery = time.Millisecond
	r := w.run(context.Background())
	if r.Status != engine.StatusDone {
		t.Fatalf("status %s", r.Status)
	}
	w.journal.mu.Lock()
	defer w.journal.mu.Unlock()
	running := 0
	for _, cp := range w.journal.cps {
		if engine.Status(cp.Status) == engine.StatusRunning && cp.Iterations == 0 {
			running++
		}
	}
	if running == 0 {
		t.Errorf("no checkpoint during the call")
	}
}

// An agent that cannot be called at all stops the task with the status of
// its error.
func TestRunTaskAgentError(t *testing.T) {
	w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 1}}, answer("right answer", nil))
	w.opts.Tiers[0].Agent = errAgent{err: fmt.Errorf("exec: %w", agent.ErrPromptTooLong)}
	r := w.run(context.Background())
	if r.Status != engine.StatusBackendUnsupported || r.ExitCode != 64 || len(r.Attempts) != 0 {
		t.Errorf("status %s exit %d attempts %d", r.Status, r.ExitCode, len(r.Attempts))
	}
}

type errAgent struct{ err error }

func (errAgent) Name() string { return "err" }
func (errAgent) Check(context.Context) agent.Availability {
	return agent.Availability{Status: agent.Available}
}
func (e errAgent) Run(context.Context, agent.Request) (agent.Response, error) {
	return agent.Response{}, e.err
}

func TestParsePlan(t *testing.T) {
	many := make([]string, MaxPlanSteps+1)
	for i := range many {
		many[i] = fmt.Sprintf("step %d", i+1)
	}
	manyJSON, _ := json.Marshal(map[string]any{"steps": many})
	tests := []struct {
		name  string
		reply string
		want  []string
		err   string // a substring of the error; "" for none
	}{
		{name: "bare object", reply: `{"steps": ["a", "b"]}`, want: []string{"a", "b"}},
		{name: "fenced JSON with prose", reply: "Here is my plan:\n```json\n{\"steps\": [\"read the code\", \"fix it\"]}\n```\nGood luck.",
			want: []string{"read the code", "fix it"}},
		{name: "bare array", reply: `Steps: ["one", "two", "three"]`, want: []string{"one", "two", "three"}},
		{name: "objects with title", reply: `{"steps": [{"title": "Add the type", "description": "in model.go"}, {"title": "Use it"}]}`,
			want: []string{"Add the type: in model.go", "Use it"}},
		{name: "objects with step", reply: `{"steps": [{"step": "first"}]}`, want: []string{"first"}},
		{name: "the last plan wins", reply: `Draft: {"steps": ["old"]} Final: {"steps": ["new 1", "new 2"]}`, want: []string{"new 1", "new 2"}},
		{name: "nested in another object", reply: `{"plan": {"steps": ["x"]}}`, want: []string{"x"}},
		{name: "blank steps dropped", reply: `{"steps": ["a", "  ", "b "]}`, want: []string{"a", "b"}},
		{name: "no JSON", reply: "I would first read the code, then fix it.", err: "no {\"steps\""},
		{name: "empty steps", reply: `{"steps": []}`, err: "no {\"steps\""},
		{name: "only blank steps", reply: `{"steps": [" "]}`, err: "no step"},
		{name: "steps of numbers", reply: `{"steps": [1, 2]}`, err: "no {\"steps\""},
		{name: "objects without text", reply: `{"steps": [{"n": 1}]}`, err: "no {\"steps\""},
		{name: "too many steps", reply: string(manyJSON), err: fmt.Sprintf("%d steps, more than %d", MaxPlanSteps+1, MaxPlanSteps)},
		{name: "exactly the maximum", reply: string(must(json.Marshal(map[string]any{"steps": many[:MaxPlanSteps]}))), want: many[:MaxPlanSteps]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePlan(tt.reply)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q (steps %q)", err, tt.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestDefaultCommitMessage(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		task  string
		a     Attempt
		steps int
		want  string
	}{
		{"Fix the answer", Attempt{Tier: "t1", Number: 1, InTier: 1}, 1, "feat: Fix the answer (tier t1, attempt 1)"},
		// The attempt's number in the task, as its refs and the report
		// have it: a tier that took over, a turn that a resume gave.
		{"Fix the answer", Attempt{Tier: "t2", Number: 4, InTier: 1}, 1, "feat: Fix the answer (tier t2, attempt 4)"},
		{"Fix the answer", Attempt{Tier: "t1", Number: 3, InTier: 1}, 1, "feat: Fix the answer (tier t1, attempt 3)"},
		{"Fix the answer", Attempt{Tier: "t1", Number: 2, InTier: 2, Step: 1}, 2, "feat: Fix the answer (step 1/2, tier t1, attempt 2)"},
		{"  Fix it\n\nwith details  ", Attempt{Tier: "t1", Number: 1, InTier: 1}, 1, "feat: Fix it (tier t1, attempt 1)"},
		{long, Attempt{Tier: "t1", Number: 1, InTier: 1}, 1, "feat: " + strings.Repeat("x", 44) + "… (tier t1, attempt 1)"},
		{"Add rate limiting to every endpoint of the public API, with a burst allowance per client", Attempt{Tier: "fast", Number: 2, InTier: 2}, 1,
			"feat: Add rate limiting to every endpoint of the… (tier fast, attempt 2)"},
		{"", Attempt{Tier: "t1", Number: 1, InTier: 1}, 1, "feat: task (tier t1, attempt 1)"},
	}
	for _, tt := range tests {
		if got := DefaultCommitMessage(tt.task, tt.a, tt.steps); got != tt.want {
			t.Errorf("DefaultCommitMessage(%q) = %q, want %q", tt.task, got, tt.want)
		}
	}
}

// A commit's subject line fits in git's 72 columns, its task cut at the
// end of a word with an ellipsis, never within a word (unless one word
// does not fit), whatever stands before and after it.
func TestSubjectLine(t *testing.T) {
	task := "Make the relative times round to the nearest unit instead of truncating them, as the docs say"
	for _, c := range []struct {
		prefix, task, suffix, want string
	}{
		{"feat: ", "Fix the answer", "", "feat: Fix the answer"},
		{"feat: ", task, "", "feat: Make the relative times round to the nearest unit instead of…"},
		{"WIP: ", task, " (needs manual review)", "WIP: Make the relative times round to the nearest… (needs manual review)"},
		{"", "# A heading, then a comma-laden, long, long, long, long, long, long, long list", "", "A heading, then a comma-laden, long, long, long, long, long, long, long…"},
		{"feat: ", strings.Repeat("ü", 90), "", "feat: " + strings.Repeat("ü", 65) + "…"},
		{"", "", "", "task"},
	} {
		got := SubjectLine(c.prefix, c.task, c.suffix)
		if got != c.want {
			t.Errorf("SubjectLine(%q, %q, %q)\n got %q\nwant %q", c.prefix, c.task, c.suffix, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > SubjectWidth {
			t.Errorf("%q: %d characters, more than %d", got, n, SubjectWidth)
		}
	}
	if got := Subject(task); got != "Make the relative times round to the nearest unit instead of truncating…" {
		t.Errorf("Subject = %q", got)
	}
}

// The fake tree behaves as the engine expects of a git worktree.
func TestFakeWorkspace(t *testing.T) {
	ctx := context.Background()
	w := newWS(startFiles)
	if c, _ := w.Diff(ctx); !c.Empty || c.Hash != git.EmptyHash {
		t.Errorf("a fresh tree has a change: %+v", c)
	}
	s, _ := w.Snapshot(ctx, "1")
	w.write(map[string]string{"a.go": "x"})
	c1, _ := w.Diff(ctx)
	w.write(map[string]string{"a.go": "y"})
	w.write(map[string]string{"a.go": "x"})
	c2, _ := w.Diff(ctx)
	if c1.Empty || c1.Hash != c2.Hash {
		t.Errorf("the same change hashes differently")
	}
	if err := w.Restore(ctx, s); err != nil {
		t.Fatal(err)
	}
	if c, _ := w.Diff(ctx); !c.Empty {
		t.Errorf("restore left %+v", c)
	}
	if _, err := w.DiffFrom(ctx, "nope"); err == nil {
		t.Errorf("DiffFrom an unknown commit")
	}
}

// ctxWS is a workspace whose git fails when Ctrl-C has cancelled the
// context, as git does when jlgcli stops it.
type ctxWS struct {
	*fakeWS
	cancel func() // called at the first snapshot
}

func (w *ctxWS) Snapshot(ctx context.Context, name string) (string, error) {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("git update-ref: %w", err)
	}
	return w.fakeWS.Snapshot(ctx, name)
}

// Ctrl-C that stops git while an attempt saves its starting point is an
// interruption, resumable, not an error.
func TestInterruptDuringSnapshotIsAnInterruption(t *testing.T) {
	w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 2, replies: []reply{edit("a.go", "right answer")}}}, answer("right answer", nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.opts.Workspace = &ctxWS{fakeWS: w.ws, cancel: cancel}
	r := w.run(ctx)
	if r.Status != engine.StatusInterrupted || r.ExitCode != 130 || !strings.Contains(r.Details, "interrupted during attempt 1") {
		t.Fatalf("%s (%d): %s", r.Status, r.ExitCode, r.Details)
	}
}

// A task killed once its passing attempt was recorded, before its stop was,
// is done on resume: no attempt is made on top of the change that passed,
// with or without a plan.
func TestRunTaskResumeAfterThePassingAttempt(t *testing.T) {
	for _, plan := range []bool{false, true} {
		t.Run(fmt.Sprintf("plan=%v", plan), func(t *testing.T) {
			w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 3}}, answer("right answer", nil))
			if plan {
				w.planner(`{"steps": ["a", "b"]}`, agent.Usage{})
			}
			a := w.agents["t1"]
			a.replies = []reply{edit("a.go", "first try"), edit("a.go", "right answer"), edit("b.go", "b")}
			first := w.run(context.Background())
			if first.Status != engine.StatusDone {
				t.Fatalf("first run: %s (%s)", first.Status, first.Details)
			}
			events := w.journal.all()
			if events[len(events)-1].Type != engine.EventStop {
				t.Fatalf("journal ends with %s", events[len(events)-1].Type)
			}
			j, err := Replay(events[:len(events)-1]) // killed before the stop
			if err != nil {
				t.Fatal(err)
			}
			calls := len(a.prompts())
			w.journal = &taskJournal{}
			w.opts.Journal = w.journal
			w.opts.Resume = &j.Resume
			r := w.run(context.Background())
			if r.Status != engine.StatusDone || r.ExitCode != 0 {
				t.Fatalf("resumed: status %s exit %d (%s)", r.Status, r.ExitCode, r.Details)
			}
			if n := len(a.prompts()); n != calls {
				t.Errorf("the resume called the developer %d more times", n-calls)
			}
			if diff := cmp.Diff(numbersOf(first), numbersOf(r)); diff != "" {
				t.Errorf("attempts (-first +resumed):\n%s", diff)
			}
			if r.Summary != first.Summary || r.Text != first.Text {
				t.Errorf("resumed summary %q text %q; first run %q %q", r.Summary, r.Text, first.Summary, first.Text)
			}
		})
	}
}
