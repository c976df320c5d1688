package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// A task given secrets in its environment (--env, a tier's env) hands them
// to its agent and writes none of them anywhere in its run directory (meta,
// journal, checkpoint, reports); resuming it without their values is a
// usage error naming them and saying how to give them, and with them its
// agent gets the new values.
func TestTaskSecretsNeverWrittenAndGivenAgainOnResume(t *testing.T) {
	repo := gitRepo(t)
	state := t.TempDir()
	seen := filepath.Join(t.TempDir(), "seen")
	script := `cat >/dev/null; echo "$API_TOKEN $TIER_KEY" >> ` + seen + `; case "$API_TOKEN" in *3) echo 42 > answer.txt;; *) echo 43 > answer.txt;; esac`
	spec := TaskSpec{
		Tiers:    []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1, Env: []string{"TIER_KEY=tier-hunter2"}}},
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", script}}},
		Env:      []string{"API_TOKEN=tok-hunter2"},
		Repo:     repo, TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: "squash",
		Checks:  []gate.Check{{Name: "answer", Shell: "grep -qx 42 answer.txt"}},
		Sandbox: sandbox.Config{Mode: sandbox.Off},
	}
	res, err := StartTask(context.Background(), NewTask{Prompt: "Make the answer 42", Spec: spec, StateDir: state}, Parts{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status == engine.StatusDone || !Resumable(res.Status) {
		t.Fatalf("first run: %s (resumable %v): %s", res.Status, Resumable(res.Status), res.Details)
	}
	if got, _ := os.ReadFile(seen); string(got) != "tok-hunter2 tier-hunter2\n" {
		t.Errorf("the agent saw %q", got)
	}
	noSecret := func() {
		t.Helper()
		err := filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, secret := range []string{"hunter2", "hunter3"} {
				if strings.Contains(string(data), secret) {
					t.Errorf("%s holds %q", path, secret)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	noSecret()

	run, events := openLocked(t, state, res.RunID)
	none := Parts{EnvValue: func(string, string) (string, bool) { return "", false }}
	_, _, err = ResumeTask(context.Background(), state, run, events, Limits{}, none)
	if !exit.IsUsage(err) || !strings.Contains(err.Error(), "API_TOKEN, TIER_KEY") ||
		!strings.Contains(exit.HintOf(err), "jlgcli resume --env API_TOKEN=VALUE --env TIER_KEY=VALUE "+res.RunID) {
		t.Fatalf("resume without the values: %v (hint %q)", err, exit.HintOf(err))
	}

	values := map[string]string{"/API_TOKEN": "tok-hunter3", "fake/TIER_KEY": "tier-hunter3"}
	given := Parts{EnvValue: func(tier, name string) (string, bool) { v, ok := values[tier+"/"+name]; return v, ok }}
	back, done, err := ResumeTask(context.Background(), state, run, events, Limits{}, given)
	if err != nil || done || back.Status != engine.StatusDone {
		t.Fatalf("resume with the values: %s, done %v, %v: %s", back.Status, done, err, back.Details)
	}
	if got, _ := os.ReadFile(seen); !strings.HasSuffix(string(got), "tok-hunter3 tier-hunter3\n") {
		t.Errorf("the resumed agent saw %q", got)
	}
	noSecret()
}
