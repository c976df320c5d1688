package agent

import (
	"encoding/json"
	"time"
)

// Window is the use of one subscription window (the 5-hour or the weekly
// quota of a Claude Pro/Max or ChatGPT plan) as an agent CLI reported it
// during a call.
//
// Where each built-in CLI surfaces its windows in headless mode (checked
// against the builds in agents.md: claude 2.1.197, codex 0.169.0, copilot
// 1.0.102, gemini 0.61.0, opencode 1.18.33, qwen, kilo):
//
//   - claude: only when logged in with a subscription (claude.ai OAuth token,
//     e.g. CLAUDE_CODE_OAUTH_TOKEN); with an API key it reports none. It
//     reads the response headers anthropic-ratelimit-unified-status,
//     -unified-reset, -unified-representative-claim and, per window
//     (5h, 7d, 7d_oi, overage), -unified-<w>-utilization (0..1),
//     -unified-<w>-reset (Unix seconds) and -unified-<w>-surpassed-threshold,
//     and prints a stream-json event each time that information changes:
//     {"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning",
//     "resetsAt":<Unix s>,"rateLimitType":"five_hour","utilization":0.92,
//     "surpassedThreshold":0.75}}. Status "allowed_warning" comes with the
//     window's utilization, once a -surpassed-threshold header is sent, or
//     when the use runs ahead of the window's time (5h: 90% before 72% of
//     it; 7d: 75%/60%, 50%/35%, 25%/15%); "rejected" names the spent window
//     and its reset without a utilization: jlgcli records it as 100%. Plain
//     "allowed" carries no use and is not recorded.
//   - codex: reads the x-codex-primary-used-percent, -window-minutes,
//     -reset-at headers (and secondary), but "codex exec --json" prints none
//     of it (its events are thread.*, turn.*, item.*, error; turn.completed
//     holds the token usage only; measured against the scripted server
//     sending those headers, conformance case window-none): nothing is
//     recorded.
//   - copilot, gemini, opencode, qwen, kilo: no window use in their headless
//     output (gemini and qwen show quota in their interactive UI only);
//     command backends: none. Nothing is guessed for them.
type Window struct {
	// Kind names the window: "5h", "weekly", "weekly-opus",
	// "weekly-sonnet", "weekly-overage-included", "overage", or the CLI's
	// own name for one jlgcli does not know.
	Kind string `json:"kind"`
	// Used is the share of the window used, 0..1.
	Used float64 `json:"used"`
	// ResetsAt is when the window resets; zero when the CLI did not say.
	ResetsAt time.Time `json:"resetsAt,omitzero"`
	// Status is the CLI's word for it: "allowed_warning", "rejected".
	Status string `json:"status,omitempty"`
}

// claudeWindowKinds maps Claude Code's rateLimitType to a window kind.
var claudeWindowKinds = map[string]string{
	"five_hour":                  "5h",
	"seven_day":                  "weekly",
	"seven_day_opus":             "weekly-opus",
	"seven_day_sonnet":           "weekly-sonnet",
	"seven_day_overage_included": "weekly-overage-included",
	"overage":                    "overage",
}

// claudeWindow reads the window of one rate_limit_event's rate_limit_info;
// ok is false when it reports no use.
func claudeWindow(status, typ string, utilization *float64, resetsAt json.RawMessage) (Window, bool) {
	if typ == "" {
		return Window{}, false
	}
	kind, known := claudeWindowKinds[typ]
	if !known {
		kind = typ
	}
	w := Window{Kind: kind, ResetsAt: parseTime(resetsAt), Status: status}
	switch {
	case utilization != nil:
		w.Used = *utilization
	case status == "rejected":
		w.Used = 1
	default:
		return Window{}, false
	}
	return w, true
}

// SetWindow puts w in ws, replacing the window of the same kind, and returns
// the result.
func SetWindow(ws []Window, w Window) []Window {
	for i := range ws {
		if ws[i].Kind == w.Kind {
			out := append([]Window(nil), ws...)
			out[i] = w
			return out
		}
	}
	return append(append([]Window(nil), ws...), w)
}
