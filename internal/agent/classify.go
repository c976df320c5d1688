package agent

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Text patterns of the agent CLIs' failures (see agents.md). They are checked
// after any structured error field a CLI gives, never before.
var (
	authRE = regexp.MustCompile(`(?i)not logged in|invalid api key|\b401\b|\b403\b|unauthori[sz]ed|authentication[_ ](?:error|failed)|no authentication information|missing environment variable|please set an auth method|api key not valid|not able to authenticate|incorrect api key`)
	rateRE = regexp.MustCompile(`(?i)\b429\b|rate[ _-]?limit|too many requests|usage limit|hit your limit|quota exceeded|terminalquotaerror|retryablequotaerror|resource_exhausted|resource exhausted`)
	apiRE  = regexp.MustCompile(`(?i)\b5\d\d\b|overloaded|internal server error|bad gateway|service unavailable|api error|stream (?:error|disconnected)|connection (?:refused|reset|error)`)
	// statusRE finds an HTTP status code in an error message.
	statusRE = regexp.MustCompile(`(?:status(?: code)?[: ]+|\b)([45]\d\d)\b`)
)

// classifyText classifies a failure from the words a CLI printed, or returns
// nil when they match no known failure.
func classifyText(s string) *Failure {
	msg := failureLine(s)
	switch {
	case authRE.MatchString(s):
		return &Failure{Kind: FailAuth, Message: msg, HTTPStatus: httpStatus(s)}
	case rateRE.MatchString(s):
		return &Failure{Kind: FailRateLimit, Message: msg, HTTPStatus: httpStatus(s), ResetAt: resetTime(s, time.Now())}
	case apiRE.MatchString(s):
		return &Failure{Kind: FailAPI, Message: msg, HTTPStatus: httpStatus(s)}
	}
	return nil
}

// classifyStatus classifies a failure from a provider's HTTP status code.
func classifyStatus(code int, msg string) *Failure {
	f := &Failure{Message: msg, HTTPStatus: code}
	switch {
	case code == 401 || code == 403:
		f.Kind = FailAuth
	case code == 429:
		f.Kind = FailRateLimit
		f.ResetAt = resetTime(msg, time.Now())
	default:
		f.Kind = FailAPI
	}
	return f
}

// failureLine picks the most telling line of a failure's text.
func failureLine(s string) string {
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var (
	resetsAtRE   = regexp.MustCompile(`(?i)(?:resets?(?: at)?|try again at|retry after|reset(?:s)? on)\s*:?\s*(\d{4}-\d{2}-\d{2}T[0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)`)
	retryInRE    = regexp.MustCompile(`(?i)(?:retry|try again|reset|resets|wait)\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec(?:ond)?s?|m|min(?:ute)?s?|h|hours?)\b`)
	retryDelayRE = regexp.MustCompile(`(?i)"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"`)
	epochRE      = regexp.MustCompile(`(?i)"?resets_?at"?\s*[:=]\s*(\d{10})\b`)
)

// resetTime finds when a rate limit resets in a CLI's message: an RFC 3339
// time, a Unix time, or a delay ("try again in 20s"). Zero when none is given.
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
	if m := retryInRE.FindStringSubmatch(s); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		unit := time.Second
		switch u := strings.ToLower(m[2]); {
		case strings.HasPrefix(u, "ms") || strings.HasPrefix(u, "milli"):
			unit = time.Millisecond
		case strings.HasPrefix(u, "h"):
			unit = time.Hour
		case strings.HasPrefix(u, "m"):
			unit = time.Minute
		}
		return now.Add(time.Duration(f * float64(unit))).Truncate(time.Second)
	}
	return time.Time{}
}
