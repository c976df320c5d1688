package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// noticeWords are the words of a line of an agent CLI's standard error
// that says it retries or fails: a network error, a provider down, a rate
// limit. Such lines are shown on the live line as they come (Request.Notice).
var noticeWords = regexp.MustCompile(`(?i)(retr(y|ying|ies)|reconnect|stream error|error|fail|timed? ?out|rate.?limit|overloaded|unavailable|refused|ECONN|ENOTFOUND|EAI_AGAIN|network|\b429\b|\b5\d\d\b)`)

// noticeMax bounds a notice.
const noticeMax = 300

// stderrNotice is line, a line of an agent's standard error, when it says
// the agent retries or fails.
func stderrNotice(line string) (string, bool) {
	line = strings.TrimSpace(line)
	if line == "" || !noticeWords.MatchString(line) {
		return "", false
	}
	return truncate(line, noticeMax), true
}

// eventNotice reads one line of a JSON event stream: a retry or an error the
// CLI reports while the call goes on (Claude Code's system event of subtype
// api_retry, Codex's error events) gives a notice.
func eventNotice(line []byte) (string, bool) {
	if len(line) == 0 || line[0] != '{' {
		return "", false
	}
	var ev struct {
		Type       string          `json:"type"`
		Subtype    string          `json:"subtype"`
		Attempt    int             `json:"attempt"`
		MaxRetries int             `json:"max_retries"`
		DelayMs    float64         `json:"retry_delay_ms"`
		Status     json.RawMessage `json:"error_status"`
		Error      json.RawMessage `json:"error"`
		Message    string          `json:"message"`
		Item       struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"item"`
	}
	if !decode(line, &ev) {
		return "", false
	}
	var s string
	switch {
	case ev.Type == "system" && strings.Contains(ev.Subtype, "retry"):
		s = "API retry"
		if ev.Attempt > 0 {
			s += fmt.Sprintf(" %d", ev.Attempt)
			if ev.MaxRetries > 0 {
				s += fmt.Sprintf("/%d", ev.MaxRetries)
			}
		}
		if ev.DelayMs > 0 {
			s += " in " + (time.Duration(ev.DelayMs) * time.Millisecond).Round(100*time.Millisecond).String()
		}
		var why []string
		for _, raw := range []json.RawMessage{ev.Status, ev.Error} {
			if t := rawText(raw); t != "" {
				why = append(why, t)
			}
		}
		if len(why) > 0 {
			s += ": " + strings.Join(why, " ")
		}
	case ev.Type == "error" && ev.Message != "":
		s = ev.Message
	case strings.HasPrefix(ev.Type, "item.") && ev.Item.Type == "error" && ev.Item.Message != "":
		s = ev.Item.Message
	default:
		return "", false
	}
	return truncate(strings.Join(strings.Fields(s), " "), noticeMax), true
}

// rawText is a JSON value as text: a string's content, a number, or an
// object's "message" or "type".
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	if json.Unmarshal(raw, &o) == nil {
		if o.Message != "" {
			return o.Message
		}
		return o.Type
	}
	return string(raw)
}
