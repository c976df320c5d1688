package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// stubbornWorld is a pull request on a real Gitea whose CI fails ci/test
// at every head, with words that differ from head to head (so that the
// same-error rule across rounds cannot fire); the agent runs script, the
// local check wants fix.txt.
func stubbornWorld(t *testing.T, script string, maxRounds int) *prWorld {
	t.Helper()
	w := newPRWorld(t, pull.Green, 0, func(h giteatest.Head) giteatest.Verdict {
		return giteatest.Verdict{"ci/test": {State: gitea.StatusFailure, Description: "TestFlaky timed out at " + h.SHA[:10]}}
	})
	w.spec.Task.Tiers = []TierSpec{{Name: "fake", Backend: "fake", Attempts: 4}}
	w.spec.Task.Commands = map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", script + "; echo done"}}}
	w.spec.Task.Checks = []gate.Check{{Name: "fix", Shell: "test -f fix.txt"}}
	w.spec.Policy.MaxRounds = maxRounds
	return w
}

// roundTask is the result of the task run of a pull-request run's round.
func roundTask(t *testing.T, w *prWorld, runID string) taskengine.Result {
	t.Helper()
	run, err := store.Open(w.state, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	evs, _, err := Events(run)
	if err != nil {
		t.Fatal(err)
	}
	res, err := TaskResultOf(run, evs, w.parts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A round that pushes again the fix an earlier round pushed, while CI
// still fails (in other words each time), is a loop across rounds: the
// agent undoes its fix and makes it again, the local check passes, but
// the attempt repeats round 1's change: nudged once, then looping on the
// last tier, the round ends no-progress and the loop gives up (exit 8,
// needs-you) with one comment on the pull request and the needs-you hook
// event; nothing is pushed after round 1.
func TestPRRoundRepeatingAPushedChangeGivesUpOnGitea(t *testing.T) {
	w := stubbornWorld(t, `if [ -f fix.txt ]; then rm fix.txt; else echo retry > fix.txt; fi`, 5)
	told := filepath.Join(t.TempDir(), "events")
	w.parts.Hooks = &hooks.Dispatcher{Hooks: []hooks.Hook{{On: []string{"*"}, Command: []string{"sh", "-c", "cat >> " + told + "; echo >> " + told}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := w.start(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	said := strings.Join(w.said.snapshot(), "\n")
	if res.Status != engine.StatusNeedsYou || res.ExitCode != 8 || res.Comment == "" || len(res.Rounds) != 2 {
		t.Fatalf("%s (exit %d, comment %q) after %d rounds: %s\n%s", res.Status, res.ExitCode, res.Comment, len(res.Rounds), res.Reason, said)
	}
	first, second := res.Rounds[0], res.Rounds[1]
	if first.Pushed == "" || second.Pushed != "" || second.Status != string(engine.StatusNoProgress) {
		t.Fatalf("rounds %+v, want round 1 pushed, round 2 ended no-progress unpushed", res.Rounds)
	}
	if !strings.Contains(res.Reason, "round 2") || !strings.Contains(res.Reason, "no-progress") {
		t.Errorf("reason %q, want round 2's no-progress", res.Reason)
	}

	task := roundTask(t, w, second.RunID)
	var dets []string
	for _, d := range task.Detections {
		dets = append(dets, d.Rule+" "+d.Action+": "+d.Details)
		if d.Rule != detect.RuleSameDiff || len(d.Earlier) != 1 || !strings.HasSuffix(d.Earlier[0], "of round 1 (run "+first.RunID+")") {
			t.Errorf("detection %+v, want same-diff naming round 1's attempt", d.Detection)
		}
	}
	if got := strings.Join(dets, "\n"); len(task.Detections) != 2 || task.Detections[0].Action != taskengine.ActionNudge ||
		task.Detections[1].Action != taskengine.ActionStop || !strings.Contains(got, "attempt 2 made the same change as attempt 1 of round 1") {
		t.Errorf("round 2's detections:\n%s", got)
	}
	for _, a := range task.Attempts {
		if a.Commit != "" {
			t.Errorf("round 2's attempt %d was committed", a.Number)
		}
	}

	// One comment; the pull request's head is still round 1's.
	cs := w.comments(t)
	n := 0
	for _, cm := range cs {
		if strings.Contains(cm.Body, "jlgcli stopped working on this pull request") {
			n++
			if !strings.Contains(cm.Body, "round 2") {
				t.Errorf("the comment does not say which round looped:\n%s", cm.Body)
			}
		}
	}
	if n != 1 {
		t.Errorf("the pull request was told %d times why jlgcli gave up, want once", n)
	}
	c, err := w.srv.Client(w.srv.Admin)
	if err != nil {
		t.Fatal(err)
	}
	pr, _, err := c.GetPullRequest(w.repo.Owner, w.repo.Name, int64(w.number))
	if err != nil {
		t.Fatal(err)
	}
	if pr.Head.Sha != first.Pushed {
		t.Errorf("the pull request's head is %s, want round 1's %s", pr.Head.Sha, first.Pushed)
	}
	data, err := os.ReadFile(told)
	if err != nil {
		t.Fatal(err)
	}
	needs := 0
	for _, line := range strings.Split(string(data), "\n") {
		var e hooks.Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Command == "pr" && e.RunID == res.RunID && e.Event == hooks.RunNeedsAttention {
			needs++
		}
	}
	if needs != 1 {
		t.Errorf("the hooks were told %d times that the run needs you, want once:\n%s", needs, data)
	}
}

// The same pull request, its CI failing every head, with an agent that
// makes another change each round: no loop across rounds, and the rounds
// go on until --max-rounds.
func TestPRRoundsWithNewChangesGoOnOnGitea(t *testing.T) {
	w := stubbornWorld(t, `if [ ! -f fix.txt ]; then echo retry > fix.txt
elif [ ! -f timeout.cfg ]; then printf 'timeout = 30s\nretries = 5\n' > timeout.cfg
else printf 'Skip the flaky network tests under CI.\n' > SKIP.md; fi`, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := w.start(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusNeedsYou || len(res.Rounds) != 3 || !strings.Contains(res.Reason, "3 rounds made") {
		t.Fatalf("%s after %d rounds: %s\n%s", res.Status, len(res.Rounds), res.Reason, strings.Join(w.said.snapshot(), "\n"))
	}
	for _, r := range res.Rounds {
		if r.Pushed == "" || r.Status != string(engine.StatusDone) {
			t.Errorf("round %d: %s, pushed %q: want each round done and pushed", r.Round, r.Status, r.Pushed)
		}
		if task := roundTask(t, w, r.RunID); len(task.Detections) != 0 {
			t.Errorf("round %d found loops: %+v", r.Round, task.Detections)
		}
	}
}
