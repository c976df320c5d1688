package local

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/exit"
)

// A task's spec from the configuration: its tiers in order (two of one name
// told apart), the planner and the reviewer with their own environment, and
// a configuration without [[tiers]] gets one tier of its backend and model.
func TestTaskSpecOfConfig(t *testing.T) {
	cfg := &config.Config{Backend: "claude", Model: "opus", Attempts: 4,
		Env: map[string]string{"API_TOKEN": "tok-secret"},
		Tiers: []config.Tier{{Name: "cheap", Backend: "codex", Model: "mini", Attempts: 2, Env: map[string]string{"TIER_KEY": "tier-secret"}},
			{Name: "cheap", Backend: "claude", Attempts: 1}},
		Planner: &config.Tier{Name: "planner", Backend: "gemini", Env: map[string]string{"PLAN_KEY": "plan-secret"}},
		Review:  &config.Tier{Name: "review", Backend: "claude", Model: "sonnet", Env: map[string]string{"REVIEW_KEY": "review-secret"}},
		Checks:  []config.Check{{Name: "test", Run: []string{"go", "test"}}, {Name: "lint", Shell: "make lint"}}}
	s := TaskSpecOf(cfg, "/repo")
	if s.Repo != "/repo" || len(s.Checks) != 2 || s.Checks[1].Shell != "make lint" || !reflect.DeepEqual(s.Checks[0].Argv, []string{"go", "test"}) {
		t.Errorf("repo %q, checks %+v", s.Repo, s.Checks)
	}
	want := []TierSpec{{Name: "cheap", Backend: "codex", Model: "mini", Env: []string{"TIER_KEY=tier-secret"}, Attempts: 2},
		{Name: "cheap#2", Backend: "claude", Env: []string{}, Attempts: 1}}
	if !reflect.DeepEqual(s.Tiers, want) {
		t.Errorf("tiers\n%+v, want\n%+v", s.Tiers, want)
	}
	if p := s.Planner; p == nil || p.Name != "planner" || p.Backend != "gemini" || p.Attempts != 1 || !reflect.DeepEqual(p.Env, []string{"PLAN_KEY=plan-secret"}) {
		t.Errorf("planner %+v", p)
	}
	if r := s.Reviewer; r == nil || r.Name != "review" || r.Backend != "claude" || r.Model != "sonnet" || r.Attempts != 1 ||
		!reflect.DeepEqual(r.Env, []string{"REVIEW_KEY=review-secret"}) {
		t.Errorf("reviewer %+v", r)
	}
	if !reflect.DeepEqual(s.Env, []string{"API_TOKEN=tok-secret"}) {
		t.Errorf("env %v", s.Env)
	}

	cfg.Tiers, cfg.Planner, cfg.Review = nil, nil, nil
	s = TaskSpecOf(cfg, "/repo")
	if want := []TierSpec{{Name: "claude", Backend: "claude", Model: "opus", Attempts: 4}}; !reflect.DeepEqual(s.Tiers, want) || s.Planner != nil || s.Reviewer != nil {
		t.Errorf("without [[tiers]]: %+v, planner %v, reviewer %v", s.Tiers, s.Planner, s.Reviewer)
	}
	cfg.Attempts = 0
	if s = TaskSpecOf(cfg, "/repo"); s.Tiers[0].Attempts != config.DefaultAttempts {
		t.Errorf("attempts without --attempts: %d, want %d", s.Tiers[0].Attempts, config.DefaultAttempts)
	}
}

// What meta.json keeps of a spec made from a configuration with secrets in
// every environment (the run's, a tier's, the planner's, the reviewer's)
// holds their names and no value; read back, the values are given again
// and those that have none are named, and resuming without them is a usage
// error that says how to give them.
func TestTaskSpecRecordedKeepsNoSecret(t *testing.T) {
	cfg := &config.Config{Backend: "claude", Env: map[string]string{"API_TOKEN": "tok-secret"},
		Tiers:   []config.Tier{{Name: "one", Backend: "codex", Attempts: 1, Env: map[string]string{"TIER_KEY": "tier-secret"}}},
		Planner: &config.Tier{Backend: "codex", Env: map[string]string{"PLAN_KEY": "plan-secret"}},
		Review:  &config.Tier{Backend: "claude", Env: map[string]string{"REVIEW_KEY": "review-secret"}}}
	s := TaskSpecOf(cfg, "/repo")
	batch := BatchSpec{Tasks: []BatchTask{{Spec: s}}}
	for name, v := range map[string]any{"task": s.Recorded(), "batch": batch.Recorded()} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"tok-secret", "tier-secret", "plan-secret", "review-secret"} {
			if strings.Contains(string(data), secret) {
				t.Errorf("the %s record holds %q: %s", name, secret, data)
			}
		}
		for _, key := range []string{"API_TOKEN", "TIER_KEY", "PLAN_KEY", "REVIEW_KEY"} {
			if !strings.Contains(string(data), `"`+key+`"`) {
				t.Errorf("the %s record lost the name %s: %s", name, key, data)
			}
		}
	}
	if s.Reviewer.Env[0] != "REVIEW_KEY=review-secret" || batch.Tasks[0].Spec.Reviewer.Env[0] != "REVIEW_KEY=review-secret" {
		t.Errorf("Recorded changed the spec itself: %v", s.Reviewer.Env)
	}

	data, _ := json.Marshal(batch.Recorded())
	var back BatchSpec
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"/API_TOKEN": "tok2", "one/TIER_KEY": "tier2", "review/REVIEW_KEY": "review2"}
	missing := back.FillEnv(func(tier, name string) (string, bool) { v, ok := values[tier+"/"+name]; return v, ok })
	if want := []string{"PLAN_KEY"}; !reflect.DeepEqual(missing, want) {
		t.Errorf("missing %v, want %v", missing, want)
	}
	got := back.Tasks[0].Spec
	if got.Env[0] != "API_TOKEN=tok2" || got.Tiers[0].Env[0] != "TIER_KEY=tier2" || got.Reviewer.Env[0] != "REVIEW_KEY=review2" || len(got.Planner.Env) != 0 {
		t.Errorf("filled: env %v, tier %v, reviewer %v, planner %v", got.Env, got.Tiers[0].Env, got.Reviewer.Env, got.Planner.Env)
	}

	err := MissingEnv("20260101-000000-abcd", missing)
	if !exit.IsUsage(err) {
		t.Errorf("MissingEnv is no usage error (exit %d): %v", exit.Usage, err)
	}
	if !strings.Contains(err.Error(), "PLAN_KEY") || !strings.Contains(exit.HintOf(err), "jlgcli resume --env PLAN_KEY=VALUE 20260101-000000-abcd") {
		t.Errorf("MissingEnv: %v (hint %q)", err, exit.HintOf(err))
	}
}
