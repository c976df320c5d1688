package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ms "github.com/jlgcli/jlgcli/internal/modelserver"
)

// The Go task scenario with the real Claude Code: `jlgcli task` on a Go
// module whose test fails, with no --check (the detected default gate: go
// build, go vet, go test -json), and two claude tiers:
//
//   - tier fast (3 attempts) writes three different wrong versions of
//     Answer, each returning 41: three different diffs (so same-diff does
//     not fire) that fail TestAnswer the same way, while go test's own
//     output differs from run to run (times, elapsed seconds, a slow passing
//     test, a package "(cached)"). The rule same-error must fire at the 3rd
//     attempt and escalate: the tier looped, it did not merely spend its
//     attempts;
//   - tier smart writes the fix: pass, squash-merge into main.
const (
	goTaskPrompt  = "Make Answer return 42"
	goFailText    = "Answer() = 41, want 42"
	goTaskTimeout = "20m"
	goTaskGuard   = 25 * time.Minute
)

const goTaskConfig = `[[tiers]]
name = "fast"
backend = "claude"
model = "` + fastModel + `"
attempts = 3

[[tiers]]
name = "smart"
backend = "claude"
model = "` + smartModel + `"
`

var goTaskFiles = map[string]string{
	"jlgcli.toml": goTaskConfig,
	"go.mod":      "module example.com/answer\n\ngo 1.21\n",
	"answer.go":   "package answer\n\n// Answer is the answer.\nfunc Answer() int { return 0 }\n",
	"answer_test.go": `package answer

import (
	"testing"
	"time"
)

func TestAnswer(t *testing.T) {
	if got := Answer(); got != 42 {
		t.Fatalf("Answer() = %d, want 42", got)
	}
}

// TestSlow takes a varying time: its elapsed time differs at each run.
func TestSlow(t *testing.T) { time.Sleep(time.Duration(time.Now().UnixNano()%30) * time.Millisecond) }
`,
}

// goAttemptTurns is one attempt that writes code into answer.go.
func goAttemptTurns(code, reply string) []ms.Turn { return editTurns("answer.go", code, reply) }

// TestTaskClaudeGoSameError runs `jlgcli task` with the default gate of a Go
// module through two claude tiers: the first fails the same test the same
// way three times with different code, which the rule same-error finds and
// escalates; the second fixes it.
func TestTaskClaudeGoSameError(t *testing.T) {
	if testing.Short() && os.Getenv(ms.RequireAgentsEnv) != "1" {
		t.Skip("the conformance tests run the real agent CLIs; skipped with -short")
	}
	b := backendNamed(t, "claude")
	ms.RequireAgent(t, b.name)
	t.Parallel()

	var script ms.Script
	script = append(script, goAttemptTurns("package answer\n\n// Answer is the answer.\nfunc Answer() int { return 41 }\n", "Answer returns 41.")...)
	script = append(script, goAttemptTurns("package answer\n\n// Answer computes the answer from a base.\nfunc Answer() int {\n\tbase := 40\n\treturn base + 1\n}\n", "Answer computes it now.")...)
	script = append(script, goAttemptTurns("package answer\n\nconst half = 82\n\n// Answer halves a constant.\nfunc Answer() int { return half / 2 }\n", "Answer halves 82.")...)
	script = append(script, goAttemptTurns("package answer\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n", "Fixed: Answer returns 42.")...)

	o := jlgcli(t, b, call{
		guard:  goTaskGuard,
		setup:  func(t *testing.T, work string) { initialRepo(t, work, goTaskFiles) },
		script: func(string) ms.Script { return script },
		args: func(string) []string {
			return []string{"task", "--json", "--timeout", goTaskTimeout, "--stall-timeout", "5m", goTaskPrompt}
		},
	})
	var r taskResult
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("stdout is not one task result object: %v", err)
	}
	var gates struct {
		Attempts []struct {
			Gate struct {
				Checks []struct {
					Command string `json:"command"`
				} `json:"checks"`
				TestFailures []struct {
					Test  string `json:"test"`
					Error string `json:"error"`
				} `json:"test_failures"`
			} `json:"gate"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &gates); err != nil {
		t.Fatal(err)
	}
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	if turns := o.srv.TurnRequests(); len(turns) != 4*turnsPerAttempt || o.srv.Remaining() != 0 {
		t.Errorf("%d model requests, %d turns left; want %d and 0", len(turns), o.srv.Remaining(), 4*turnsPerAttempt)
	}
	if len(r.Attempts) != 4 {
		t.Fatalf("%d attempts, want 4 (3 of tier fast, 1 of tier smart)", len(r.Attempts))
	}
	// The default gate ran go test -json, and each of fast's attempts failed
	// TestAnswer the same way.
	for i := range 3 {
		g := gates.Attempts[i].Gate
		var cmds []string
		for _, c := range g.Checks {
			cmds = append(cmds, c.Command)
		}
		if !strings.Contains(strings.Join(cmds, "\n"), "go test -json ./...") {
			t.Errorf("attempt %d: checks %q, want the default gate's go test -json", i+1, cmds)
		}
		if len(g.TestFailures) != 1 || g.TestFailures[0].Test != "TestAnswer" || g.TestFailures[0].Error != goFailText {
			t.Errorf("attempt %d: test failures %+v, want TestAnswer: %s", i+1, g.TestFailures, goFailText)
		}
	}
	a3, a4 := r.Attempts[2], r.Attempts[3]
	for _, a := range r.Attempts[:2] {
		if a.Detection != nil {
			t.Errorf("attempt %d: detection %s %v, want none", a.Number, a.Detection.Rule, a.Detection.Attempts)
		}
	}
	switch d := a3.Detection; {
	case d == nil:
		t.Errorf("attempt 3: no detection, want same-error (the tier escalated because its attempts were spent, not because it looped)")
	case d.Rule != "same-error" || len(d.Attempts) != 3 || d.Attempts[0] != 1 || d.Attempts[2] != 3:
		t.Errorf("attempt 3: detection %s %v, want same-error [1 2 3]", d.Rule, d.Attempts)
	}
	if a3.Tier != "fast" || a3.Action != "escalate" || a3.Gate.Status != "fail" {
		t.Errorf("attempt 3: tier %q action %q gate %q; want fast escalate fail", a3.Tier, a3.Action, a3.Gate.Status)
	}
	if len(r.Detections) != 1 || r.Detections[0].Rule != "same-error" || r.Detections[0].Tier != "fast" || r.Detections[0].Action != "escalate" {
		t.Errorf("detections %+v, want one same-error of tier fast, escalate", r.Detections)
	}
	if len(r.Tiers) != 2 || r.Tiers[0].Outcome != "loop" || r.Tiers[0].Attempts != 3 || r.Tiers[1].Outcome != "passed" {
		t.Errorf("tiers %+v, want fast: 3 attempts, loop; smart: passed", r.Tiers)
	}
	if a4.Tier != "smart" || a4.Action != "pass" || a4.Gate.Status != "pass" || !strings.Contains(a4.Prompt, goFailText) {
		t.Errorf("attempt 4: tier %q action %q gate %q, prompt holds fast's failure: %v; want smart pass pass, true",
			a4.Tier, a4.Action, a4.Gate.Status, strings.Contains(a4.Prompt, goFailText))
	}
	if g := r.Git; g == nil || g.Merge == nil || g.Merge.Status != "merged" {
		t.Errorf("git %+v: want merged", r.Git)
	}
	if got, err := os.ReadFile(filepath.Join(o.work, "answer.go")); err != nil || !strings.Contains(string(got), "return 42") {
		t.Errorf("answer.go in the user's tree = %q, %v; want the fix", got, err)
	}
}
