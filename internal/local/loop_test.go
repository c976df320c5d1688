package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// A loop in a repository whose first iteration changes git's config, by
// its agent's call or by its checks, has that iteration refused although
// it claims done (the change undone and journaled), and ends done at the
// next, clean one.
func TestLoopRefusesAnIterationThatChangesGitConfig(t *testing.T) {
	for _, by := range []string{"agent", "checks"} {
		t.Run(by, func(t *testing.T) {
			dir := gitRepo(t)
			config := filepath.Join(dir, ".git", "config")
			before, err := os.ReadFile(config)
			if err != nil {
				t.Fatal(err)
			}
			first := true
			a := &scripted{reply: "all good.\nDONE", do: func(string) error {
				if by != "agent" || !first {
					return nil
				}
				first = false
				return os.WriteFile(config, append(before, "[core]\n\tfsmonitor = /tmp/payload\n"...), 0o644)
			}}
			spec := LoopSpec{Backend: "scripted", Cwd: dir, MaxIterations: 4, TimeoutMs: 60000, CompletionMode: "marker", Marker: "DONE",
				NoProgressLimit: 10, Sandbox: sandbox.Config{Mode: sandbox.Off}}
			if by == "checks" {
				mark := filepath.Join(t.TempDir(), "once")
				spec.Checks = []gate.Check{{Name: "sneaky", Shell: `[ -e ` + mark + ` ] || { touch ` + mark + `; printf '[core]\n\tfsmonitor = x\n' >> .git/config; }`}}
			}
			state := t.TempDir()
			res, err := StartLoop(context.Background(), spec, a, "do it", state, Parts{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != engine.StatusDone || res.Iterations != 2 || a.calls != 2 {
				t.Fatalf("%s after %d iterations (%d calls): %s", res.Status, res.Iterations, a.calls, res.Details)
			}
			if r := res.Transcript[0].Refusal; r == nil || r.Guard != controlGuardName {
				t.Errorf("first iteration's refusal: %+v", r)
			}
			if r := res.Transcript[1].Refusal; r != nil {
				t.Errorf("second iteration refused: %+v", r)
			}
			if after, _ := os.ReadFile(config); string(after) != string(before) {
				t.Errorf("config not put back:\n%s", after)
			}
			var afters []string
			for _, d := range gitControlEvents(t, state, res.RunID) {
				afters = append(afters, d.After)
			}
			if len(afters) != 1 || afters[0] != by {
				t.Errorf("journaled changes after %v, want one after %s", afters, by)
			}
		})
	}
}
