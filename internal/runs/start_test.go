package runs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/sheet"
)

// notices records what a run says.
type notices struct{ msgs []string }

func (n *notices) Progress(string)   {}
func (n *notices) Notice(msg string) { n.msgs = append(n.msgs, msg) }
func (n *notices) Warn(msg string)   { n.msgs = append(n.msgs, msg) }

func getenvOf(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// world is a user's home with a configuration file, a project directory
// with its own, and the configuration files read counted.
func world(t *testing.T, userTOML, projectTOML string) (getenv func(string) string, dir string, loads *int) {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "jlgcli"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "jlgcli", "config.toml"), []byte(userTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, config.ProjectFile), []byte(projectTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	load := loadFile
	loadFile = func(path string) (*config.Layer, error) { n++; return load(path) }
	t.Cleanup(func() { loadFile = load })
	return getenvOf(map[string]string{"XDG_CONFIG_HOME": home}), dir, &n
}

func sheetOf(t *testing.T, file, text string) sheet.Sheet {
	t.Helper()
	s, _, err := sheet.Parse(file, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// A batch of two sheets reads the configuration files once, for the
// batch, and resolves each sheet over them: the project's settings reach
// every task.
func TestPlanBatchReadsTheFilesOnce(t *testing.T) {
	getenv, dir, loads := world(t, "model = \"gpt-5\"\n", "backend = \"codex\"\njobs = 3\n")
	c, err := LoadConfig(getenv, dir, &config.Layer{Name: "flag"})
	if err != nil {
		t.Fatal(err)
	}
	if *loads != 2 {
		t.Fatalf("LoadConfig read %d files, want 2 (the user's, the project's)", *loads)
	}
	b := Batch{Sheets: []sheet.Sheet{sheetOf(t, "a.md", "# a\n"), sheetOf(t, "b.md", "---\ndepends: [a]\n---\n# b\n")}, Repo: dir}
	plan, err := PlanBatch(c, b, local.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	if *loads != 2 {
		t.Errorf("the batch read %d configuration files, want the 2 that LoadConfig read", *loads)
	}
	if plan.Spec.Jobs != 3 || len(plan.Spec.Tasks) != 2 {
		t.Fatalf("spec: %d jobs, %d tasks; want 3 jobs (the project's), 2 tasks", plan.Spec.Jobs, len(plan.Spec.Tasks))
	}
	for _, task := range plan.Spec.Tasks {
		tr := task.Spec.Tiers
		if len(tr) != 1 || tr[0].Backend != "codex" || tr[0].Model != "gpt-5" {
			t.Errorf("task %s: tiers %+v; want one tier of codex (project file), model gpt-5 (user file)", task.ID, tr)
		}
	}
	if want := [][]string{{"a"}, {"b"}}; len(plan.Levels) != 2 || plan.Levels[0][0] != "a" || plan.Levels[1][0] != "b" {
		t.Errorf("levels %v, want %v", plan.Levels, want)
	}
}

// A sheet's budget is its task's, over the batch's --task-budget, which
// the sheets without one take; neither: the configuration's.
func TestPlanBatchSheetBudgetWinsOverTaskBudget(t *testing.T) {
	getenv, dir, _ := world(t, "", "budgetUsd = 3\n")
	for _, tt := range []struct {
		name       string
		taskBudget *float64
		wantA      float64 // the sheet that sets budget: 0.25
		wantB      float64 // the sheet that does not
	}{
		{"--task-budget", ptr(2.0), 0.25, 2},
		{"--task-budget 0: none", ptr(0.0), 0.25, 0},
		{"no flag: the project file's", nil, 0.25, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			flags := &config.Layer{Name: "flag", Backend: ptr("claude"), BudgetUSD: tt.taskBudget}
			c, err := LoadConfig(getenv, dir, flags)
			if err != nil {
				t.Fatal(err)
			}
			b := Batch{Sheets: []sheet.Sheet{sheetOf(t, "a.md", "---\nbudget: 0.25\n---\n# a\n"), sheetOf(t, "b.md", "# b\n")}, Repo: dir}
			plan, err := PlanBatch(c, b, local.Parts{})
			if err != nil {
				t.Fatal(err)
			}
			a, bb := plan.Spec.Tasks[0].Spec, plan.Spec.Tasks[1].Spec
			if a.BudgetUSD != tt.wantA || bb.BudgetUSD != tt.wantB {
				t.Errorf("budgets a=%g b=%g, want a=%g b=%g", a.BudgetUSD, bb.BudgetUSD, tt.wantA, tt.wantB)
			}
			// The decision is made with the spec's budget as is.
			if p := a.Policy("task a"); p.BudgetUSD != tt.wantA {
				t.Errorf("policy budget %g, want %g", p.BudgetUSD, tt.wantA)
			}
		})
	}
}

// With no backend configured and none of the built-ins installed, Pick
// returns the result that says so (backend-missing, exit 2) and no agent.
func TestPickNoneInstalled(t *testing.T) {
	cfg, err := config.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	say := &notices{}
	res, a := Pick(cfg, local.Parts{Environ: []string{"PATH=" + t.TempDir()}, Say: say})
	if a != nil {
		t.Fatalf("picked %s with no agent installed", a.Name())
	}
	if res.Status != engine.StatusBackendMissing || res.ExitCode != exit.BackendMissing {
		t.Errorf("status %s exit %d, want %s exit %d", res.Status, res.ExitCode, engine.StatusBackendMissing, exit.BackendMissing)
	}
	if res.Details == "" || res.Text != res.Details {
		t.Errorf("details %q text %q: want the reason in both", res.Details, res.Text)
	}
	if len(say.msgs) > 0 {
		t.Errorf("said %q; a pick that fails says nothing (its result does)", say.msgs)
	}
}

// installed is a PATH holding an executable named name.
func installed(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + dir
}

// A batch whose sheets name no backend picks the first installed built-in
// once, says so once, and gives it to every task.
func TestPlanBatchPicksOnce(t *testing.T) {
	getenv, dir, _ := world(t, "", "")
	c, err := LoadConfig(getenv, dir, &config.Layer{Name: "flag"})
	if err != nil {
		t.Fatal(err)
	}
	last := agent.Builtins[len(agent.Builtins)-1]
	say := &notices{}
	b := Batch{Sheets: []sheet.Sheet{sheetOf(t, "a.md", "# a\n"), sheetOf(t, "b.md", "# b\n")}, Repo: dir}
	plan, err := PlanBatch(c, b, local.Parts{Environ: []string{installed(t, last)}, Say: say})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range plan.Spec.Tasks {
		if tr := task.Spec.Tiers; tr[0].Backend != last || tr[0].Name != last {
			t.Errorf("task %s: tier %+v, want %s", task.ID, tr[0], last)
		}
	}
	if len(say.msgs) != 1 {
		t.Errorf("said %q, want the one notice of the pick", say.msgs)
	}
}

// A batch that needs a backend picked when none is installed is a
// *PickError naming the first sheet that needed it.
func TestPlanBatchNoneInstalled(t *testing.T) {
	getenv, dir, _ := world(t, "", "")
	c, err := LoadConfig(getenv, dir, &config.Layer{Name: "flag"})
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{Sheets: []sheet.Sheet{sheetOf(t, "a.md", "---\nbackend: claude\n---\n# a\n"), sheetOf(t, "b.md", "# b\n")}, Repo: dir}
	_, err = PlanBatch(c, b, local.Parts{Environ: []string{"PATH=" + t.TempDir()}})
	var pe *PickError
	if !errors.As(err, &pe) {
		t.Fatalf("err %v, want a *PickError", err)
	}
	if pe.File != "b.md" || pe.Result.Status != engine.StatusBackendMissing || pe.Result.ExitCode != exit.BackendMissing {
		t.Errorf("pick error of %s: %s exit %d; want b.md, backend-missing exit 2", pe.File, pe.Result.Status, pe.Result.ExitCode)
	}
}

// A dependency on no sheet of the batch is a usage error (exit 64).
func TestPlanBatchUnknownDependency(t *testing.T) {
	getenv, dir, _ := world(t, "", "backend = \"claude\"\n")
	c, err := LoadConfig(getenv, dir, &config.Layer{Name: "flag"})
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{Sheets: []sheet.Sheet{sheetOf(t, "a.md", "---\ndepends: [nope]\n---\n# a\n")}, Repo: dir}
	if _, err := PlanBatch(c, b, local.Parts{}); !exit.IsUsage(err) {
		t.Errorf("err %v, want a usage error", err)
	}
}

// A sheet's review is its task's reviewer, over the configuration's;
// review: none takes the configured one away; the other sheets keep it.
func TestPlanBatchSheetReview(t *testing.T) {
	getenv, dir, _ := world(t, "", "backend = \"claude\"\n[review]\nbackend = \"codex\"\nmodel = \"gpt-5\"\n")
	c, err := LoadConfig(getenv, dir, &config.Layer{Name: "flag"})
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{Sheets: []sheet.Sheet{sheetOf(t, "a.md", "# a\n"), sheetOf(t, "b.md", "---\nreview: gemini:pro\n---\n# b\n"),
		sheetOf(t, "c.md", "---\nreview: none\n---\n# c\n")}, Repo: dir}
	plan, err := PlanBatch(c, b, local.Parts{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, task := range plan.Spec.Tasks {
		if r := task.Spec.Reviewer; r != nil {
			got[task.ID] = r.Name + "=" + r.Backend + ":" + r.Model
		} else {
			got[task.ID] = "none"
		}
	}
	want := map[string]string{"a": "review=codex:gpt-5", "b": "review=gemini:pro", "c": "none"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reviewers (-want +got):\n%s", diff)
	}
}
