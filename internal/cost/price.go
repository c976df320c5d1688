// Package cost prices agent calls and keeps a task's spending against its
// budget: the cost a CLI reports when it reports one, else an estimate from
// the tokens it used and a table of prices per model.
package cost

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"inputPerMTok"`
	OutputPerMTok float64 `json:"outputPerMTok"`
}

// Cost is the price of a call that read in input tokens and wrote out.
func (p Price) Cost(in, out int64) float64 {
	return (float64(max(in, 0))*p.InputPerMTok + float64(max(out, 0))*p.OutputPerMTok) / 1e6
}

// Table prices models, by model name (see Lookup). A key that is a backend's
// name prices that backend's calls whose model is not named or not priced.
type Table map[string]Price

// DefaultTable returns the built-in prices: the providers' public list
// prices per million tokens, standard tier (no batch or cache discount;
// prompts within the base context tier, e.g. Gemini 2.5 Pro under 200k
// tokens), as published in January 2026. Prices change: the configuration's
// [prices] table overrides and extends these (Merge).
func DefaultTable() Table {
	return Table{
		// Anthropic. Opus went from $15/$75 to $5/$25 with Opus 4.5.
		"claude-opus-4-6":   {5, 25},
		"claude-opus-4-5":   {5, 25},
		"claude-opus-4-1":   {15, 75},
		"claude-opus-4-0":   {15, 75},
		"claude-opus-4":     {15, 75},
		"claude-sonnet-4-6": {3, 15},
		"claude-sonnet-4-5": {3, 15},
		"claude-sonnet-4-0": {3, 15},
		"claude-sonnet-4":   {3, 15},
		"claude-haiku-4-5":  {1, 5},
		"claude-3-7-sonnet": {3, 15},
		"claude-3-5-sonnet": {3, 15},
		"claude-3-5-haiku":  {0.80, 4},
		"claude-3-opus":     {15, 75},
		"claude-3-haiku":    {0.25, 1.25},

		// OpenAI. The -codex, -chat and dated variants share their base
		// model's price.
		"gpt-5-2":            {1.75, 14},
		"gpt-5-2-pro":        {21, 168},
		"gpt-5-1":            {1.25, 10},
		"gpt-5-1-codex-mini": {0.25, 2},
		"gpt-5":              {1.25, 10},
		"gpt-5-mini":         {0.25, 2},
		"gpt-5-nano":         {0.05, 0.40},
		"gpt-5-pro":          {15, 120},
		"gpt-5-codex-mini":   {0.25, 2},
		"codex-mini":         {1.50, 6},
		"gpt-4-1":            {2, 8},
		"gpt-4-1-mini":       {0.40, 1.60},
		"gpt-4-1-nano":       {0.10, 0.40},
		"gpt-4o":             {2.50, 10},
		"gpt-4o-mini":        {0.15, 0.60},
		"o1":                 {15, 60},
		"o1-mini":            {1.10, 4.40},
		"o1-pro":             {150, 600},
		"o3":                 {2, 8},
		"o3-mini":            {1.10, 4.40},
		"o3-pro":             {20, 80},
		"o4-mini":            {1.10, 4.40},

		// Google.
		"gemini-3-pro":          {2, 12},
		"gemini-3-flash":        {0.50, 3},
		"gemini-2-5-pro":        {1.25, 10},
		"gemini-2-5-flash":      {0.30, 2.50},
		"gemini-2-5-flash-lite": {0.10, 0.40},
		"gemini-2-0-flash":      {0.10, 0.40},
		"gemini-2-0-flash-lite": {0.075, 0.30},

		// DeepSeek (V3.2: chat and reasoner at one price; cache-miss input).
		"deepseek-chat":     {0.28, 0.42},
		"deepseek-reasoner": {0.28, 0.42},
	}
}

// DefaultModels is the model whose price a backend's call gets when it names
// none (the CLI then uses its own default, which changes between releases):
//   - claude: Sonnet, Claude Code's default for API accounts;
//   - codex: GPT-5, whose price the gpt-5, gpt-5.1 and -codex models share;
//   - gemini: Gemini 2.5 Pro, Gemini CLI's default;
//   - copilot: Claude Sonnet 4.5, its default model. Copilot bills premium
//     requests of a subscription, not tokens: this is what the same tokens
//     would cost at the API's list price.
//
// opencode has none: its model, "provider/model", comes from its own
// configuration. A table entry named after the backend ([prices.codex])
// replaces these.
var DefaultModels = map[string]string{
	"claude":  "sonnet",
	"codex":   "gpt-5",
	"gemini":  "gemini-2.5-pro",
	"copilot": "claude-sonnet-4.5",
}

// aliases are short model names that CLIs accept, and the table key they
// stand for.
var aliases = map[string]string{
	"sonnet":        "claude-sonnet-4-5",
	"opus":          "claude-opus-4-5",
	"haiku":         "claude-haiku-4-5",
	"opusplan":      "claude-opus-4-5", // Opus plans, Sonnet executes: the dearer
	"deepseek-v3":   "deepseek-chat",
	"deepseek-v3-2": "deepseek-chat",
	"deepseek-r1":   "deepseek-reasoner",
}

// families price a Claude model newer than the table by its family's latest
// price (Sonnet's has not changed since Claude 3).
var families = []string{"opus", "sonnet", "haiku"}

// NormalizeModel returns the form in which model names are compared: lower
// case, without a provider prefix ("anthropic/", "openrouter/anthropic/"),
// a variant suffix (":free", "[1m]") or a fine-tune prefix ("ft:"), with
// dots, underscores, "@" and blanks as dashes ("gpt-4.1" is "gpt-4-1",
// Vertex's "claude-sonnet-4-5@20250929" is "claude-sonnet-4-5-20250929").
func NormalizeModel(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "ft:")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexAny(s, ":["); i >= 0 {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		switch r {
		case '.', '_', '@', ' ', '\t':
			return '-'
		}
		return r
	}, s)
	return strings.Trim(s, "-")
}

// Lookup returns the price of a call of backend with model. The model is
// matched, after NormalizeModel, by
//  1. a key equal to it, or an alias equal to it ("sonnet", "opus", "haiku",
//     "opusplan");
//  2. the longest key it starts with, followed by a dash and anything but a
//     short number: "claude-sonnet-4-5-20250929" and "gpt-5-codex" match
//     "claude-sonnet-4-5" and "gpt-5", but "claude-opus-4-7" does not match
//     "claude-opus-4" (a minor version has its own price), nor "gpt-5-3"
//     "gpt-5";
//  3. the same, the key found inside it after a dash (Bedrock's
//     "us.anthropic.claude-sonnet-4-5-20250929-v1:0");
//  4. for Claude models, the family's latest price ("claude-opus-5" is
//     priced as "opus");
//  5. else, or when model is empty or "default", the key named after the
//     backend;
//  6. when model is empty or "default", the backend's DefaultModels entry.
//
// A model named but not priced is unknown (false) unless the table has a key
// for its backend: a default model's price would be a guess.
//
// Keys named after a built-in backend only match as backends.
func (t Table) Lookup(backend, model string) (Price, bool) {
	_, p, ok := t.Match(backend, model)
	return p, ok
}

// Match is Lookup, with the table key that priced the call.
func (t Table) Match(backend, model string) (key string, p Price, ok bool) {
	keys := t.normalized()
	m := NormalizeModel(model)
	if m == "default" {
		m = ""
	}
	if m != "" {
		if k, ok := matchModel(keys, m); ok {
			return keys[k], t[keys[k]], true
		}
	}
	b := NormalizeModel(backend)
	if k, ok := keys[b]; ok && b != "" {
		return k, t[k], true
	}
	if d := DefaultModels[backend]; d != "" && m == "" {
		if k, ok := matchModel(keys, NormalizeModel(d)); ok {
			return keys[k], t[keys[k]], true
		}
	}
	return "", Price{}, false
}

// normalized maps the table's normalized keys to its keys.
func (t Table) normalized() map[string]string {
	m := make(map[string]string, len(t))
	for k := range t {
		n := NormalizeModel(k)
		if prev, ok := m[n]; !ok || k < prev { // deterministic on duplicates
			m[n] = k
		}
	}
	return m
}

// matchModel finds the normalized key of m (see Lookup, steps 1 to 4).
func matchModel(keys map[string]string, m string) (string, bool) {
	if _, ok := keys[m]; ok {
		return m, true
	}
	if a, ok := aliases[m]; ok {
		if _, ok := keys[a]; ok {
			return a, true
		}
	}
	best := ""
	for k := range keys {
		if len(k) <= len(best) || agent.IsBuiltin(k) {
			continue
		}
		if strings.HasPrefix(m, k) && versionSafe(m[len(k):]) {
			best = k
		}
	}
	if best != "" {
		return best, true
	}
	for k := range keys {
		if len(k) <= len(best) || agent.IsBuiltin(k) {
			continue
		}
		for i := strings.Index(m, "-"+k); i >= 0; {
			if versionSafe(m[i+1+len(k):]) {
				best = k
				break
			}
			j := strings.Index(m[i+1:], "-"+k)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	if best != "" {
		return best, true
	}
	if strings.Contains(m, "claude") {
		parts := strings.Split(m, "-")
		for _, f := range families {
			if slices.Contains(parts, f) {
				if _, ok := keys[aliases[f]]; ok {
					return aliases[f], true
				}
			}
		}
	}
	return "", false
}

// versionSafe reports whether rest, what follows a key in a model name,
// leaves the model in the key's version: nothing, or a dash and a part that
// is not a number of one or two digits (a date, "codex", "latest", ...).
func versionSafe(rest string) bool {
	if rest == "" {
		return true
	}
	if rest[0] != '-' {
		return false
	}
	part, _, _ := strings.Cut(rest[1:], "-")
	if part == "" {
		return false
	}
	if len(part) <= 2 && strings.Trim(part, "0123456789") == "" {
		return false
	}
	return true
}

// Merge returns a copy of t with the entries of over added, replacing those
// of t with the same normalized key.
func (t Table) Merge(over Table) Table {
	out := make(Table, len(t)+len(over))
	for k, p := range t {
		out[k] = p
	}
	keys := out.normalized()
	for k, p := range over {
		if old, ok := keys[NormalizeModel(k)]; ok {
			delete(out, old)
		}
		out[k] = p
	}
	return out
}

// ParseTable reads the configuration's [prices] table: model name (as
// Lookup matches it, or a backend's name) to {input, output}, in US dollars
// per million tokens; both are required. The error names every wrong key.
//
//	[prices."gpt-5.2"]
//	input = 1.75
//	output = 14
func ParseTable(m map[string]map[string]float64) (Table, error) {
	t := make(Table, len(m))
	var errs []string
	seen := map[string]string{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fields := m[k]
		n := NormalizeModel(k)
		if n == "" {
			errs = append(errs, fmt.Sprintf("prices: %q: not a model name", k))
			continue
		}
		if prev, ok := seen[n]; ok {
			errs = append(errs, fmt.Sprintf("prices: %q and %q name the same model", prev, k))
			continue
		}
		seen[n] = k
		var p Price
		var has [2]bool
		bad := false
		fnames := make([]string, 0, len(fields))
		for f := range fields {
			fnames = append(fnames, f)
		}
		slices.Sort(fnames)
		for _, f := range fnames {
			v := fields[f]
			switch f {
			case "input":
				p.InputPerMTok, has[0] = v, true
			case "output":
				p.OutputPerMTok, has[1] = v, true
			default:
				errs = append(errs, fmt.Sprintf("prices: %q: unknown key %q (want input and output, US dollars per million tokens)", k, f))
				bad = true
				continue
			}
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				errs = append(errs, fmt.Sprintf("prices: %q: %s = %v: want a price of zero or more", k, f, v))
				bad = true
			}
		}
		for i, f := range []string{"input", "output"} {
			if !has[i] {
				errs = append(errs, fmt.Sprintf("prices: %q: %s is missing", k, f))
				bad = true
			}
		}
		if !bad {
			t[k] = p
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return t, nil
}
