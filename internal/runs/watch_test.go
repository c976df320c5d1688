package runs

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/sheet"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// A watch's configuration, sent as JSON in its workflow's input, plans a
// sheet on a worker as the submitter would plan it here: the same task
// spec from the user file, the project file and the flags; its hooks are
// left out.
func TestWatchLayersPlanAsHere(t *testing.T) {
	user := "[backends.fake]\ncommand = [\"sh\", \"agent.sh\"]\nprompt = \"stdin\"\n[[hooks]]\non = [\"*\"]\ncommand = [\"true\"]\n"
	project := "budgetUsd = 3\n[[checks]]\nname = \"unit\"\nrun = [\"go\", \"test\"]\n[[tiers]]\nname = \"cheap\"\nbackend = \"fake\"\nattempts = 2\n"
	getenv, dir, _ := world(t, user, project)
	jobs, attempts := 3, 4
	lc, err := LoadConfig(getenv, dir, &config.Layer{Name: "flag", Jobs: &jobs, Attempts: &attempts})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(temporal.WatchConfig{Layers: watchLayers(lc)})
	if err != nil {
		t.Fatal(err)
	}
	var sent temporal.WatchConfig
	if err := json.Unmarshal(data, &sent); err != nil {
		t.Fatal(err)
	}
	n := len(sent.Layers)
	there := Config{Base: sent.Layers[:n-1], Flags: sent.Layers[n-1]}
	if there.Config, err = there.Resolve(there.Flags); err != nil {
		t.Fatal(err)
	}
	if len(there.Hooks) != 0 || len(lc.Hooks) != 1 {
		t.Errorf("hooks sent %v (here %v), want none", there.Hooks, lc.Hooks)
	}
	s := sheet.Sheet{ID: "issue-1", File: "issue #1", Title: "t", Body: "b", Depends: []string{}}
	plan := func(c Config) local.BatchSpec {
		t.Helper()
		p, err := PlanBatch(c, Batch{Sheets: []sheet.Sheet{s}}, local.Parts{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Spec
	}
	here, onWorker := plan(lc), plan(there)
	if diff := cmp.Diff(here, onWorker); diff != "" {
		t.Errorf("the worker plans otherwise (-here +worker):\n%s", diff)
	}
	ts := onWorker.Tasks[0].Spec
	if onWorker.Jobs != 3 || ts.BudgetUSD != 3 || len(ts.Checks) != 1 || ts.Tiers[0].Name != "cheap" || ts.Tiers[0].Attempts != 4 {
		t.Errorf("planned %+v, jobs %d", ts, onWorker.Jobs)
	}
}
