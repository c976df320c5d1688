package agent

import (
	"strings"
	"testing"
	"time"
)

func TestResetTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	cases := []struct {
		in   string
		want time.Time
	}{
		{"no time here", time.Time{}},
		{"rate limited; resets at 2026-11-22T15:04:05Z", time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC)},
		{"Try again at 2026-11-23T01:00:00+01:00.", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{`{"resets_at": 1795320000}`, time.Unix(1795320000, 0)},
		{`"retryDelay": "37s"`, now.Add(37 * time.Second)},
		{"Please try again in 20s.", now.Add(20 * time.Second)},
		{"Suggested retry after 2s.", now.Add(2 * time.Second)},
		{"Please retry in 37.5s.", now.Add(37 * time.Second)}, // truncated to the second
		{"try again in 45 minutes", now.Add(45 * time.Minute)},
		{"wait 5 minutes", time.Time{}},
		{"try again in 3 days 6 hours 57 minutes.", now.Add(3*24*time.Hour + 6*time.Hour + 57*time.Minute)},
		{"retry after 1500ms", now.Add(time.Second)},
		// Codex: local clock time today, or a date.
		{"You've hit your usage limit. Try again at 3:28 PM.", time.Date(2026, 11, 22, 15, 28, 0, 0, time.UTC)},
		{"You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Nov 24th, 2026 9:05 AM.", time.Date(2026, 11, 24, 9, 5, 0, 0, time.UTC)},
		{"try again at Aug 8th, 2026 12:30 PM", time.Date(2026, 8, 8, 12, 30, 0, 0, time.UTC)},
		// Claude: clock time in a named zone, the next one to come.
		{"You've hit your limit · resets 1pm (Europe/Lisbon)", time.Date(2026, 11, 22, 13, 0, 0, 0, lisbon)},
		{"You've hit your limit · resets 9am (Europe/Lisbon)", time.Date(2026, 11, 23, 9, 0, 0, 0, lisbon)},
		{"resets 3:30pm (UTC)", time.Date(2026, 11, 22, 15, 30, 0, 0, time.UTC)},
		{"resets 12am", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"resets 1pm (Not/AZone)", time.Time{}},
	}
	for _, c := range cases {
		if got := resetTime(c.in, now); !got.Equal(c.want) {
			t.Errorf("resetTime(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseDelay(t *testing.T) {
	cases := map[string]time.Duration{
		"20s":                       20 * time.Second,
		"37.5s":                     37500 * time.Millisecond,
		"2 hours, 5 minutes":        2*time.Hour + 5*time.Minute,
		"1 day and 2 hrs":           26 * time.Hour,
		"250ms":                     250 * time.Millisecond,
		"3 fortnights":              0,
		"1h 30m 10s":                time.Hour + 30*time.Minute + 10*time.Second,
		"5 milliseconds 1 second":   time.Second + 5*time.Millisecond,
		"":                          0,
		"2 minutes 3 days 4 things": 3*24*time.Hour + 2*time.Minute,
	}
	for in, want := range cases {
		if got := parseDelay(in); got != want {
			t.Errorf("parseDelay(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestClassifyText(t *testing.T) {
	old := timeNow
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	timeNow = func() time.Time { return now }
	t.Cleanup(func() { timeNow = old })

	cases := []struct {
		in      string
		kind    FailureKind // "" for no failure recognised
		status  int
		resetAt time.Time
		message string
	}{
		{"all good", "", 0, time.Time{}, ""},
		{"Not logged in · Please run /login", FailAuth, 0, time.Time{}, "Not logged in · Please run /login"},
		{"Error: No authentication information found.\n\nCopilot can be authenticated with GitHub", FailAuth, 0, time.Time{}, "Error: No authentication information found."},
		{"unexpected status 401 Unauthorized: Incorrect API key provided", FailAuth, 401, time.Time{}, ""},
		{"Missing environment variable: `FAKE_API_KEY`.", FailAuth, 0, time.Time{}, ""},
		{"Please set an Auth method in your settings.json", FailAuth, 0, time.Time{}, ""},
		{`[API Error: {"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}]`, FailAuth, 401, time.Time{}, ""},
		{"exceeded retry limit, last status: 429 Too Many Requests", FailRateLimit, 429, time.Time{}, ""},
		{"Rate limit reached for requests. Please try again in 20s.", FailRateLimit, 0, now.Add(20 * time.Second), ""},
		{"You've hit your usage limit. Try again at 3:28 PM.", FailRateLimit, 0, time.Date(2026, 11, 22, 15, 28, 0, 0, time.UTC), ""},
		{"[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later.", FailRateLimit, 0, time.Time{}, "[API Error: You have exhausted your daily quota on this model.]"},
		{"TerminalQuotaError: You have exhausted your capacity", FailRateLimit, 0, time.Time{}, ""},
		{"We’re currently experiencing high demand, which may cause temporary errors.", FailAPI, 0, time.Time{}, ""},
		{"API Error: 529 Overloaded", FailAPI, 529, time.Time{}, ""},
		{"Cannot connect to API: Unable to connect. Is the computer able to access the url?", FailAPI, 0, time.Time{}, ""},
		{"stream disconnected before completion: connection reset", FailAPI, 0, time.Time{}, ""},
		{"line 1\nsome noise\nlast line", "", 0, time.Time{}, ""},
	}
	for _, c := range cases {
		f := classifyText(c.in)
		if c.kind == "" {
			if f != nil {
				t.Errorf("classifyText(%q) = %+v, want none", c.in, f)
			}
			continue
		}
		if f == nil {
			t.Errorf("classifyText(%q) = nil, want %s", c.in, c.kind)
			continue
		}
		if f.Kind != c.kind || f.HTTPStatus != c.status || !f.ResetAt.Equal(c.resetAt) {
			t.Errorf("classifyText(%q) = %s/%d/%v, want %s/%d/%v", c.in, f.Kind, f.HTTPStatus, f.ResetAt, c.kind, c.status, c.resetAt)
		}
		if c.message != "" && f.Message != c.message {
			t.Errorf("classifyText(%q).Message = %q, want %q", c.in, f.Message, c.message)
		}
	}
}

func TestClassifyStatus(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		code int
		kind FailureKind
	}{{401, FailAuth}, {403, FailAuth}, {429, FailRateLimit}, {500, FailAPI}, {529, FailAPI}, {400, FailAPI}}
	for _, c := range cases {
		f := classifyStatusAt(c.code, "Please try again in 1m", now)
		if f.Kind != c.kind || f.HTTPStatus != c.code {
			t.Errorf("classifyStatus(%d) = %+v, want %s", c.code, f, c.kind)
		}
		if wantReset := c.kind == FailRateLimit; wantReset != !f.ResetAt.IsZero() {
			t.Errorf("classifyStatus(%d): ResetAt %v", c.code, f.ResetAt)
		}
	}
	if f := classifyStatusAt(429, "try again in 1m", now); !f.ResetAt.Equal(now.Add(time.Minute)) {
		t.Errorf("429 reset %v, want %v", f.ResetAt, now.Add(time.Minute))
	}
}

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in   string
		want version
		ok   bool
	}{
		{"2.1.197 (Claude Code)", version{2, 1, 197}, true},
		{"codex-cli 0.169.0", version{0, 169, 0}, true},
		{"GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.", version{1, 0, 102}, true},
		{"0.61.0", version{0, 61, 0}, true},
		{"1.18.33", version{1, 18, 33}, true},
		{"v1.2", version{1, 2, 0}, true},
		{"0.62.0-nightly.20261120.abc", version{0, 62, 0}, true},
		{"WARNING: proceeding, even though we could not create PATH aliases\ncodex-cli 0.169.0", version{0, 169, 0}, true},
		{"no version", version{}, false},
		{"", version{}, false},
	}
	for _, c := range cases {
		got, ok := parseVersion(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("parseVersion(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if !(version{0, 58, 0}).Less(version{0, 169, 0}) || (version{1, 0, 0}).Less(version{0, 99, 99}) || (version{1, 2, 3}).Less(version{1, 2, 3}) {
		t.Error("version.Less is wrong")
	}
}

func TestTruncateKeepsCharacters(t *testing.T) {
	s := strings.Repeat("é", 10) // 2 bytes each
	if got := truncate(s, 5); got != "éé…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("short", 10); got != "short" {
		t.Errorf("truncate = %q", got)
	}
}

func TestContextExhaustion(t *testing.T) {
	for _, msg := range []string{
		"API Error: 400 prompt is too long: 210000 tokens > 200000 maximum",
		"This model's maximum context length is 128000 tokens",
		`{"code":"context_length_exceeded"}`,
		"Your input exceeds the context window of this model",
	} {
		if f := classifyText(msg); f == nil || f.Kind != FailContext {
			t.Errorf("%q: %+v", msg, f)
		}
	}
	if f := classifyStatus(400, "prompt is too long"); f.Kind != FailContext {
		t.Errorf("400 prompt too long: %+v", f)
	}
	if f := classifyStatus(400, "invalid request"); f.Kind != FailAPI {
		t.Errorf("400 other: %+v", f)
	}
}
