package cost

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
)

func TestLookup(t *testing.T) {
	tab := DefaultTable()
	for _, c := range []struct {
		backend, model string
		key            string // "" unknown
	}{
		// Claude: full names, dated, aliases, other spellings.
		{"claude", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude", "claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"claude", "sonnet", "claude-sonnet-4-5"},
		{"claude", "Sonnet", "claude-sonnet-4-5"},
		{"claude", "sonnet[1m]", "claude-sonnet-4-5"},
		{"claude", "opus", "claude-opus-4-5"},
		{"claude", "opusplan", "claude-opus-4-5"},
		{"claude", "haiku", "claude-haiku-4-5"},
		{"claude", "claude-opus-4-1-20250805", "claude-opus-4-1"},
		{"claude", "claude-opus-4-20250514", "claude-opus-4"},
		{"claude", "claude-opus-4-0", "claude-opus-4-0"},
		{"claude", "claude-opus-4-5-20251101", "claude-opus-4-5"},
		{"claude", "claude-3-5-haiku-latest", "claude-3-5-haiku"},
		{"claude", "claude-3-7-sonnet-20250219", "claude-3-7-sonnet"},
		{"copilot", "claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"opencode", "anthropic/claude-haiku-4-5", "claude-haiku-4-5"},
		{"opencode", "openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"claude", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
		{"claude", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5"},
		// A minor version the table lacks: the family's latest price, not
		// the older major version's.
		{"claude", "claude-opus-4-7", "claude-opus-4-5"},
		{"claude", "claude-sonnet-5", "claude-sonnet-4-5"},
		// OpenAI.
		{"codex", "gpt-5", "gpt-5"},
		{"codex", "gpt-5-codex", "gpt-5"},
		{"codex", "gpt-5.1-codex-max", "gpt-5-1"},
		{"codex", "gpt-5.1-codex-mini", "gpt-5-1-codex-mini"},
		{"codex", "gpt-5.2", "gpt-5-2"},
		{"codex", "gpt-5.2-codex", "gpt-5-2"},
		{"codex", "gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{"codex", "gpt-5-2025-08-07", "gpt-5"},
		{"codex", "GPT-4o", "gpt-4o"},
		{"codex", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"codex", "gpt-4.1-nano", "gpt-4-1-nano"},
		{"codex", "o3", "o3"},
		{"codex", "o3-2025-04-16", "o3"},
		{"codex", "o4-mini", "o4-mini"},
		{"codex", "o1-preview", "o1"},
		{"codex", "codex-mini-latest", "codex-mini"},
		{"codex", "ft:gpt-4o-mini:acme::abc123", "gpt-4o-mini"},
		// Google, DeepSeek.
		{"gemini", "gemini-2.5-pro", "gemini-2-5-pro"},
		{"gemini", "gemini-2.5-flash", "gemini-2-5-flash"},
		{"gemini", "gemini-2.5-flash-lite", "gemini-2-5-flash-lite"},
		{"gemini", "gemini-2.5-pro-preview-06-05", "gemini-2-5-pro"},
		{"gemini", "gemini-3-pro-preview", "gemini-3-pro"},
		{"opencode", "deepseek/deepseek-chat", "deepseek-chat"},
		{"opencode", "deepseek-reasoner", "deepseek-reasoner"},
		{"opencode", "deepseek-v3.2", "deepseek-chat"},
		// Backend defaults.
		{"claude", "", "claude-sonnet-4-5"},
		{"claude", "default", "claude-sonnet-4-5"},
		{"codex", "", "gpt-5"},
		{"gemini", "", "gemini-2-5-pro"},
		{"copilot", "", "claude-sonnet-4-5"},
		// Unknown.
		{"opencode", "", ""},
		{"mycmd", "", ""},
		{"codex", "gpt-5.9", ""},
		{"opencode", "ollama/qwen3-coder", ""},
		{"codex", "o10", ""},
		{"gemini", "gemini-9-ultra", ""},
	} {
		key, p, ok := tab.Match(c.backend, c.model)
		if key != c.key || ok != (c.key != "") {
			t.Errorf("Match(%q, %q) = %q, %v; want %q", c.backend, c.model, key, ok, c.key)
			continue
		}
		if ok && p != tab[c.key] {
			t.Errorf("Match(%q, %q): price %v, want %v", c.backend, c.model, p, tab[c.key])
		}
		if lp, lok := tab.Lookup(c.backend, c.model); lp != p || lok != ok {
			t.Errorf("Lookup(%q, %q) = %v, %v; Match gave %v, %v", c.backend, c.model, lp, lok, p, ok)
		}
	}
}

func TestDefaultTable(t *testing.T) {
	tab := DefaultTable()
	for k, p := range tab {
		if NormalizeModel(k) != k {
			t.Errorf("key %q is not normalized (%q)", k, NormalizeModel(k))
		}
		if !(p.InputPerMTok > 0) || !(p.OutputPerMTok >= p.InputPerMTok) {
			t.Errorf("%q: implausible price %+v", k, p)
		}
	}
	for a, k := range aliases {
		if _, ok := tab[k]; !ok {
			t.Errorf("alias %q stands for %q, not in the table", a, k)
		}
	}
	for b, m := range DefaultModels {
		if !agent.IsBuiltin(b) {
			t.Errorf("default model for %q, not a built-in backend", b)
		}
		if _, ok := tab.Lookup(b, m); !ok {
			t.Errorf("default model %q of %q has no price", m, b)
		}
	}
	// Spot checks of list prices.
	for k, want := range map[string]Price{
		"claude-sonnet-4-5": {3, 15}, "claude-opus-4-5": {5, 25}, "claude-opus-4-1": {15, 75}, "claude-haiku-4-5": {1, 5},
		"gpt-5": {1.25, 10}, "gpt-5-mini": {0.25, 2}, "gpt-4o": {2.5, 10}, "o3": {2, 8},
		"gemini-2-5-pro": {1.25, 10}, "gemini-2-5-flash": {0.30, 2.50}, "deepseek-chat": {0.28, 0.42},
	} {
		if tab[k] != want {
			t.Errorf("%s: %v, want %v", k, tab[k], want)
		}
	}
	// DefaultTable returns a fresh table.
	tab["gpt-5"] = Price{}
	if DefaultTable()["gpt-5"] == (Price{}) {
		t.Error("DefaultTable shares its map")
	}
}

func TestNormalizeModel(t *testing.T) {
	for in, want := range map[string]string{
		" Claude-Sonnet-4.5 ":                "claude-sonnet-4-5",
		"anthropic/claude-opus-4-5":          "claude-opus-4-5",
		"openrouter/google/gemini-2.5-pro":   "gemini-2-5-pro",
		"meta-llama/llama-3.3-70b:free":      "llama-3-3-70b",
		"claude-sonnet-4-5@20250929":         "claude-sonnet-4-5-20250929",
		"sonnet[1m]":                         "sonnet",
		"ft:gpt-4o-mini-2024-07-18:org::id":  "gpt-4o-mini-2024-07-18",
		"us.anthropic.claude-haiku-4-5-v1:0": "us-anthropic-claude-haiku-4-5-v1",
		"gpt_4o":                             "gpt-4o",
		"":                                   "",
	} {
		if got := NormalizeModel(in); got != want {
			t.Errorf("NormalizeModel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOverrides(t *testing.T) {
	over, err := ParseTable(map[string]map[string]float64{
		"claude-sonnet-4.5": {"input": 2, "output": 10},    // replaces claude-sonnet-4-5
		"gpt-5.9":           {"input": 5, "output": 30},    // a model the defaults lack
		"opencode":          {"input": 0, "output": 0},     // a backend: local models
		"codex":             {"input": 1.75, "output": 14}, // codex without a model
	})
	if err != nil {
		t.Fatal(err)
	}
	tab := DefaultTable().Merge(over)
	for _, c := range []struct {
		backend, model string
		want           Price
	}{
		{"claude", "sonnet", Price{2, 10}},
		{"claude", "claude-sonnet-4-5-20250929", Price{2, 10}},
		{"claude", "", Price{2, 10}},
		{"codex", "gpt-5.9", Price{5, 30}},
		{"codex", "gpt-5.9-codex", Price{5, 30}},
		{"codex", "", Price{1.75, 14}},
		{"codex", "gpt-5", Price{1.25, 10}},
		{"opencode", "ollama/qwen3-coder", Price{0, 0}},
		{"opencode", "anthropic/claude-opus-4-5", Price{5, 25}},
		// A backend's key is not a model prefix.
		{"claude", "codex-mini-latest", Price{1.5, 6}},
	} {
		p, ok := tab.Lookup(c.backend, c.model)
		if !ok || p != c.want {
			t.Errorf("Lookup(%q, %q) = %v, %v; want %v", c.backend, c.model, p, ok, c.want)
		}
	}
	if _, ok := tab["claude-sonnet-4-5"]; ok {
		t.Error("Merge kept the replaced key")
	}
	if _, ok := DefaultTable()["gpt-5.9"]; ok {
		t.Error("Merge changed the default table")
	}
}

func TestParseTableErrors(t *testing.T) {
	_, err := ParseTable(map[string]map[string]float64{
		"gpt-5":       {"input": 1.25, "ouptut": 10},
		"sonnet":      {"input": -3, "output": 15},
		"o3":          {"output": 8},
		"gpt-4o":      {"input": math.NaN(), "output": 10},
		"GPT-4.1":     {"input": 2, "output": 8},
		"gpt-4-1":     {"input": 2, "output": 8},
		" / ":         {"input": 1, "output": 1},
		"deepseek-ok": {"input": 1, "output": 1},
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`prices: "gpt-5": unknown key "ouptut"`,
		`prices: "gpt-5": output is missing`,
		`prices: "sonnet": input = -3: want a price of zero or more`,
		`prices: "o3": input is missing`,
		`prices: "gpt-4o": input = NaN`,
		`prices: "GPT-4.1" and "gpt-4-1" name the same model`,
		`prices: " / ": not a model name`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "deepseek-ok") {
		t.Errorf("error names a right key: %v", err)
	}
	if tab, err := ParseTable(nil); err != nil || len(tab) != 0 {
		t.Errorf("ParseTable(nil) = %v, %v", tab, err)
	}
}

func TestEstimate(t *testing.T) {
	tab := DefaultTable()
	for _, c := range []struct {
		name             string
		u                agent.Usage
		backend, model   string
		usd              float64
		estimated, known bool
	}{
		{"the CLI's cost", agent.Usage{InputTokens: 1e6, OutputTokens: 1e6, CostUSD: 0.42, CostKnown: true}, "claude", "opus", 0.42, false, true},
		{"the CLI's cost, unknown model", agent.Usage{CostUSD: 0.1, CostKnown: true}, "mycmd", "", 0.1, false, true},
		{"a reported zero cost", agent.Usage{InputTokens: 500, CostKnown: true}, "claude", "", 0, false, true},
		{"sonnet tokens", agent.Usage{InputTokens: 200_000, OutputTokens: 10_000}, "claude", "sonnet", 0.6 + 0.15, true, true},
		{"default model", agent.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}, "codex", "", 1.25 + 1, true, true},
		{"gemini flash", agent.Usage{InputTokens: 2_000_000, OutputTokens: 400_000}, "gemini", "gemini-2.5-flash", 0.6 + 1, true, true},
		{"unknown model", agent.Usage{InputTokens: 1000, OutputTokens: 1000}, "opencode", "ollama/qwen3", 0, false, false},
		{"nothing reported", agent.Usage{}, "claude", "sonnet", 0, false, false},
	} {
		usd, est, known := Estimate(c.u, c.backend, c.model, tab)
		if math.Abs(usd-c.usd) > 1e-9 || est != c.estimated || known != c.known {
			t.Errorf("%s: %v, %v, %v; want %v, %v, %v", c.name, usd, est, known, c.usd, c.estimated, c.known)
		}
	}
}

func TestLedger(t *testing.T) {
	var l Ledger
	if ok, why := l.CanStart("cheap", 1); !ok {
		t.Errorf("first attempt refused: %s", why)
	}
	if l.Exceeded(1) || l.Spent() != 0 || l.Estimated() {
		t.Error("empty ledger")
	}
	if _, ok := l.MeanAttempt("cheap"); ok {
		t.Error("mean of no attempt")
	}

	l.Add("cheap", 0.10, true)
	l.Add("cheap", 0.20, false)
	if m, ok := l.MeanAttempt("cheap"); !ok || math.Abs(m-0.15) > 1e-12 {
		t.Errorf("mean %v, %v", m, ok)
	}
	if !l.Estimated() || l.Attempts("cheap") != 2 || l.Attempts("smart") != 0 {
		t.Errorf("estimated %v, attempts %d", l.Estimated(), l.Attempts("cheap"))
	}

	for _, c := range []struct {
		tier   string
		budget float64
		ok     bool
		reason string
	}{
		{"cheap", 1, true, ""},
		{"cheap", 0.45, true, ""}, // 0.15 left = the mean
		{"cheap", 0.44, false, `$0.1400 left of the $0.4400 budget is less than the mean cost of tier "cheap"'s attempts ($0.1500 over 2)`},
		// A tier without attempts: the mean over all (0.15).
		{"smart", 0.46, true, ""},
		{"smart", 0.40, false, `$0.1000 left of the $0.4000 budget is less than the mean cost of all attempts ($0.1500 over 2)`},
		{"cheap", 0.30, false, "the budget of $0.3000 is spent ($0.3000)"},
		{"cheap", 0.25, false, "the budget of $0.2500 is spent ($0.3000)"},
		// No budget.
		{"cheap", 0, true, ""},
		{"cheap", -1, true, ""},
		{"cheap", math.NaN(), true, ""},
		{"cheap", math.Inf(1), true, ""},
	} {
		ok, reason := l.CanStart(c.tier, c.budget)
		if ok != c.ok || reason != c.reason {
			t.Errorf("CanStart(%q, %v) = %v, %q; want %v, %q", c.tier, c.budget, ok, reason, c.ok, c.reason)
		}
	}

	// The smart tier's own mean takes over once it has an attempt.
	l.Add("smart", 0.50, false)
	if ok, why := l.CanStart("smart", 1.2); ok || !strings.Contains(why, `tier "smart"'s attempts ($0.5000 over 1)`) {
		t.Errorf("smart after one attempt: %v, %q", ok, why)
	}
	if ok, _ := l.CanStart("cheap", 1.2); !ok {
		t.Error("cheap refused with 0.40 left and a mean of 0.15")
	}

	if l.Exceeded(0.81) || !l.Exceeded(0.80) || !l.Exceeded(0.5) || l.Exceeded(0) {
		t.Errorf("Exceeded wrong at spent %v", l.Spent())
	}
	if got := l.Left(1); math.Abs(got-0.2) > 1e-12 {
		t.Errorf("Left(1) = %v", got)
	}
	if !math.IsInf(l.Left(0), 1) {
		t.Error("Left without budget")
	}

	// Bad costs count as zero.
	l.Add("cheap", -1, false)
	l.Add("cheap", math.NaN(), false)
	l.Add("cheap", math.Inf(1), false)
	if math.Abs(l.Spent()-0.8) > 1e-12 {
		t.Errorf("spent %v after bad costs", l.Spent())
	}
}

func TestLedgerJSON(t *testing.T) {
	var l Ledger
	l.Add("cheap", 0.0123, true)
	l.Add("smart", 0.5, false)
	b, err := json.Marshal(&l)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"entries":[{"tier":"cheap","usd":0.0123,"estimated":true},{"tier":"smart","usd":0.5}]}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Ledger
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Spent() != l.Spent() || !back.Estimated() || len(back.Entries) != 2 {
		t.Errorf("round trip: %+v", back)
	}
	var empty Ledger
	if err := json.Unmarshal([]byte(`{}`), &empty); err != nil || empty.Spent() != 0 {
		t.Errorf("empty: %+v, %v", empty, err)
	}
}
