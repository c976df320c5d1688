package sheet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestApply(t *testing.T) {
	def := Settings{Backend: "claude", Model: "opus", Attempts: 3, Checks: []string{"go test ./..."}, Timeout: 30 * time.Minute}
	tiered := Settings{Tiers: []string{"claude:haiku", "claude:opus"}, Attempts: 3}
	for _, tt := range []struct {
		name  string
		front string
		def   Settings
		want  Settings
	}{
		{"nothing set: the defaults", "", def, def},
		{"keys set to what the default is are still set", "attempts: 3\n", def, def},
		{"each key", "attempts: 1\nbudget: 0.25\nchecks: [make test]\ntimeout: 5m\n", def,
			Settings{Backend: "claude", Model: "opus", Attempts: 1, Checks: []string{"make test"}, Timeout: 5 * time.Minute}},
		{"tiers replace backend and model", "tiers: [codex, 'claude:sonnet']\n", def,
			Settings{Tiers: []string{"codex", "claude:sonnet"}, Attempts: 3, Checks: []string{"go test ./..."}, Timeout: 30 * time.Minute}},
		{"a backend drops the default model", "backend: codex\n", def,
			Settings{Backend: "codex", Attempts: 3, Checks: []string{"go test ./..."}, Timeout: 30 * time.Minute}},
		{"a model keeps the default backend", "model: sonnet\n", def,
			Settings{Backend: "claude", Model: "sonnet", Attempts: 3, Checks: []string{"go test ./..."}, Timeout: 30 * time.Minute}},
		{"a backend replaces the default tiers", "backend: gemini\nmodel: gemini-2.5-pro\n", tiered,
			Settings{Backend: "gemini", Model: "gemini-2.5-pro", Attempts: 3}},
		{"a model replaces the default tiers, on the configured backend", "model: sonnet\n", tiered,
			Settings{Model: "sonnet", Attempts: 3}},
		{"tiers replace the default tiers", "tiers: codex\n", tiered, Settings{Tiers: []string{"codex"}, Attempts: 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := "# x\n"
			if tt.front != "" {
				data = "---\n" + tt.front + "---\n" + data
			}
			s, _, err := Parse("x.md", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			got := s.Apply(tt.def)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("settings (-want +got):\n%s", d)
			}
			// Apply shares no list with the defaults or the sheet.
			if len(got.Checks) > 0 {
				got.Checks[0] = "changed"
			}
			if len(got.Tiers) > 0 {
				got.Tiers[0] = "changed"
			}
			if tt.def.Checks != nil && tt.def.Checks[0] == "changed" || tt.def.Tiers != nil && tt.def.Tiers[0] == "changed" ||
				s.Tiers != nil && s.Tiers[0] == "changed" || s.Checks != nil && s.Checks[0] == "changed" {
				t.Error("Apply shares a list")
			}
		})
	}
}
