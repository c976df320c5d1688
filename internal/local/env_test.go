package local

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A task's spec is recorded with its environment's names only, and read
// back with the values given then; a name without a value is reported, and
// an entry recorded with its value (before values were left out) is kept.
func TestTaskSpecEnvRecordedWithoutValues(t *testing.T) {
	s := TaskSpec{Env: []string{"SECRET=hunter2", "URL=http://x=y"},
		Tiers:   []TierSpec{{Name: "one", Env: []string{"TIER_KEY=t1"}}, {Name: "two"}},
		Planner: &TierSpec{Name: "planner", Env: []string{"PLAN=p"}}}
	data, err := json.Marshal(s.Recorded())
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "http://x", "t1", `"p"`, "PLAN=p"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the record holds %q: %s", secret, data)
		}
	}
	if s.Env[0] != "SECRET=hunter2" || s.Tiers[0].Env[0] != "TIER_KEY=t1" || s.Planner.Env[0] != "PLAN=p" {
		t.Errorf("Recorded changed the spec itself: %+v", s)
	}
	var back TaskSpec
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"/SECRET": "s2", "/URL": "u2", "one/TIER_KEY": "t2"}
	missing := back.FillEnv(func(tier, name string) (string, bool) { v, ok := values[tier+"/"+name]; return v, ok })
	if want := []string{"PLAN"}; !reflect.DeepEqual(missing, want) {
		t.Errorf("missing %v, want %v", missing, want)
	}
	if want := []string{"SECRET=s2", "URL=u2"}; !reflect.DeepEqual(back.Env, want) {
		t.Errorf("Env %v, want %v", back.Env, want)
	}
	if want := []string{"TIER_KEY=t2"}; !reflect.DeepEqual(back.Tiers[0].Env, want) {
		t.Errorf("tier env %v, want %v", back.Tiers[0].Env, want)
	}
	old := LoopSpec{Env: []string{"OLD=kept"}}
	if missing := old.FillEnv(func(string, string) (string, bool) { return "", false }); len(missing) > 0 || old.Env[0] != "OLD=kept" {
		t.Errorf("an old record's value: %v, missing %v", old.Env, missing)
	}
}
