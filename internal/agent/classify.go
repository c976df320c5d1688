package agent

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Text patterns of the agent CLIs' failures (see agents.md). They are checked
// after any structured error field a CLI gives, never before.
var (
	authRE = regexp.MustCompile(`(?i)not logged in|invalid[ _]api[ _]key|\b401\b|\b403\b|unauthori[sz]ed|unauthenticated|authentication[_ ](?:error|failed)|no authentication information|missing environment variable|please set an auth method|api key not valid|not able to authenticate|incorrect api key|providerautherror`)
	rateRE = regexp.MustCompile(`(?i)\b429\b|rate[ _-]?limit|too many requests|usage limit|hit your limit|quota exceeded|exhausted your .{0,40}quota|terminalquotaerror|retryablequotaerror|resource_exhausted|resource (?:has been )?exhausted|please wait and try again later`)
	apiRE  = regexp.MustCompile(`(?i)\b5\d\d\b|overloaded|internal server error|internal error|bad gateway|service unavailable|gateway timeout|api error|high demand|temporary errors?|stream (?:error|disconnected)|connection (?:refused|reset|error)|(?:cannot|could not|unable to) connect|econnrefused|econnreset`)
	// statusRE finds an HTTP status code in an error message.
	statusRE = regexp.MustCompile(`(?:status(?: code)?[: ]+|\b)([45]\d\d)\b`)
)

// rootRE is Claude Code refusing to skip its permission prompts as root:
// "--dangerously-skip-permissions cannot be used with root/sudo privileges
// for security reasons".
var rootRE = regexp.MustCompile(`(?i)dangerously-skip-permissions cannot be used with root`)

// RootHint is the way out of Claude Code's refusal to run as root without
// its permission prompts.
const RootHint = "running as root: Claude Code refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1 is set; " +
	"in a container or VM you can throw away, set it for the agent with --env IS_SANDBOX=1 or IS_SANDBOX = \"1\" under [env] in jlgcli.toml (see docs/backends.md)"

// hintFor is the hint for a failure whose text is s, "" when it has none.
func hintFor(s string) string {
	if rootRE.MatchString(s) {
		return RootHint
	}
	return ""
}

// timeNow is the clock of the classification; tests replace it.
var timeNow = time.Now

// classifyText classifies a failure from the words a CLI printed, or returns
// nil when they match no known failure.
func classifyText(s string) *Failure { return classifyTextAt(s, timeNow()) }

// classifyTextAt is classifyText with a relative reset time ("try again in
// 20s") counted from now, e.g. the time stamp of the event that said it.
func classifyTextAt(s string, now time.Time) *Failure {
	msg := failureLine(s)
	switch {
	case authRE.MatchString(s):
		return &Failure{Kind: FailAuth, Message: msg, HTTPStatus: httpStatus(s)}
	case rateRE.MatchString(s):
		return &Failure{Kind: FailRateLimit, Message: msg, HTTPStatus: httpStatus(s), ResetAt: resetTime(s, now)}
	case contextRE.MatchString(s):
		return &Failure{Kind: FailContext, Message: msg, HTTPStatus: httpStatus(s)}
	case apiRE.MatchString(s):
		return &Failure{Kind: FailAPI, Message: msg, HTTPStatus: httpStatus(s)}
	}
	return nil
}

// contextRE: the session is full, a fresh one can go on (checked before
// apiRE: providers answer these with a 400).
var contextRE = regexp.MustCompile(`(?i)prompt is too long|context[ _](?:length|window)[ _](?:exceeded|is full|limit)|context_length_exceeded|maximum context length|exceeds? (?:the )?(?:model'?s? )?context|input is too long|reached (?:the |its )?(?:maximum|max) (?:number of )?turns|error_max_turns`)

// classifyStatus classifies a failure from a provider's HTTP status code.
func classifyStatus(code int, msg string) *Failure { return classifyStatusAt(code, msg, timeNow()) }

// classifyStatusAt is classifyStatus with relative reset times counted from now.
func classifyStatusAt(code int, msg string, now time.Time) *Failure {
	f := &Failure{Message: msg, HTTPStatus: code}
	switch {
	case code == 401 || code == 403:
		f.Kind = FailAuth
	case code == 429:
		f.Kind = FailRateLimit
		f.ResetAt = resetTime(msg, now)
	case contextRE.MatchString(msg):
		f.Kind = FailContext
	default:
		f.Kind = FailAPI
	}
	return f
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// failureLine picks the most telling line of a failure's text.
func failureLine(s string) string {
	s = ansiRE.ReplaceAllString(s, "")
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && (authRE.MatchString(line) || rateRE.MatchString(line) || apiRE.MatchString(line)) {
			return truncate(line, 300)
		}
	}
	return truncate(lastLine(s), 300)
}

func httpStatus(s string) int {
	if m := statusRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// truncate cuts s to at most n bytes, on a character boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

var (
	resetsAtRE   = regexp.MustCompile(`(?i)(?:resets?(?: at)?|try again at|retry after|reset(?:s)? on)\s*:?\s*(\d{4}-\d{2}-\d{2}T[0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)`)
	retryDelayRE = regexp.MustCompile(`(?i)"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"`)
	epochRE      = regexp.MustCompile(`(?i)"?resets_?at"?\s*[:=]\s*(\d{10})\b`)
	// retryInRE finds a delay, possibly compound: "try again in 20s",
	// "retry after 2s", "try again in 3 days 6 hours 57 minutes".
	// goDelayRE finds a delay written as a Go duration, as OpenAI does
	// ("Please try again in 7m12s.").
	goDelayRE = regexp.MustCompile(`(?i)(?:retry|try again|reset|resets|wait)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)\b`)
	retryInRE = regexp.MustCompile(`(?i)(?:retry|try again|reset|resets|wait)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|d|days?|h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?)\b[\s,]*(?:and\s+)?)+)`)
	durPartRE = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*([a-z]+)`)
	// tryAgainAtRE is Codex's "Try again at 3:28 PM." or "Try again at Aug
	// 8th, 2026 12:30 PM." (local time).
	tryAgainAtRE = regexp.MustCompile(`(?i)try again at\s+(?:([a-z]{3})[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? )?(\d{1,2}):(\d{2})\s*([ap]m)\b`)
	// resetsClockRE is Claude's "resets 1pm (Europe/Lisbon)" or "resets at
	// 3:30pm (UTC)".
	resetsClockRE = regexp.MustCompile(`(?i)resets?\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*([ap]m)\b(?:\s*\(([^)]+)\))?`)
)

// resetTime finds when a rate limit resets in a CLI's message: an RFC 3339
// time, a Unix time, a date and clock time, a delay ("try again in 20s") or a
// clock time ("resets 1pm (Europe/Lisbon)"). Delays and clock times are
// counted from now. Zero when none is given.
func resetTime(s string, now time.Time) time.Time {
	if m := resetsAtRE.FindStringSubmatch(s); m != nil {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05"} {
			if t, err := time.Parse(layout, m[1]); err == nil {
				return t
			}
		}
	}
	if m := epochRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return time.Unix(n, 0)
	}
	if m := retryDelayRE.FindStringSubmatch(s); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		return now.Add(time.Duration(f * float64(time.Second))).Truncate(time.Second)
	}
	if m := goDelayRE.FindStringSubmatch(s); m != nil {
		if d, err := time.ParseDuration(strings.ToLower(m[1])); err == nil && d > 0 {
			return now.Add(d).Truncate(time.Second)
		}
	}
	if m := retryInRE.FindStringSubmatch(s); m != nil {
		if d := parseDelay(m[1]); d > 0 {
			return now.Add(d).Truncate(time.Second)
		}
	}
	if m := tryAgainAtRE.FindStringSubmatch(s); m != nil {
		hour, min := clock(m[4], m[5], m[6])
		if m[1] != "" {
			mon, err := time.Parse("Jan", strings.ToUpper(m[1][:1])+strings.ToLower(m[1][1:]))
			if err == nil {
				day, _ := strconv.Atoi(m[2])
				year, _ := strconv.Atoi(m[3])
				return time.Date(year, mon.Month(), day, hour, min, 0, 0, now.Location())
			}
		} else {
			return nextClock(now, now.Location(), hour, min)
		}
	}
	if m := resetsClockRE.FindStringSubmatch(s); m != nil {
		hour, min := clock(m[1], m[2], m[3])
		loc := now.Location()
		if m[4] != "" {
			l, err := time.LoadLocation(strings.TrimSpace(m[4]))
			if err != nil {
				return time.Time{}
			}
			loc = l
		}
		return nextClock(now, loc, hour, min)
	}
	return time.Time{}
}

// parseDelay reads "20s", "37.5s", "3 days 6 hours 57 minutes", "500ms".
func parseDelay(s string) time.Duration {
	var d time.Duration
	for _, m := range durPartRE.FindAllStringSubmatch(s, -1) {
		f, _ := strconv.ParseFloat(m[1], 64)
		var unit time.Duration
		switch u := strings.ToLower(m[2]); {
		case u == "ms" || strings.HasPrefix(u, "milli"):
			unit = time.Millisecond
		case u == "d" || strings.HasPrefix(u, "day"):
			unit = 24 * time.Hour
		case u == "h" || strings.HasPrefix(u, "hr") || strings.HasPrefix(u, "hour"):
			unit = time.Hour
		case u == "m" || strings.HasPrefix(u, "min"):
			unit = time.Minute
		case u == "s" || strings.HasPrefix(u, "sec"):
			unit = time.Second
		default:
			continue
		}
		d += time.Duration(f * float64(unit))
	}
	return d
}

// clock converts "3", "28", "PM" to 15, 28.
func clock(h, m, ampm string) (int, int) {
	hour, _ := strconv.Atoi(h)
	min, _ := strconv.Atoi(m)
	hour %= 12
	if strings.EqualFold(ampm, "pm") {
		hour += 12
	}
	return hour, min
}

// nextClock is the first time at hour:min in loc that is not before now.
func nextClock(now time.Time, loc *time.Location, hour, min int) time.Time {
	n := now.In(loc)
	t := time.Date(n.Year(), n.Month(), n.Day(), hour, min, 0, 0, loc)
	if t.Before(n) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}
