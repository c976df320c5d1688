package agent

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// opencodeSpec drives opencode:
//
//	opencode run --format json [-m PROVIDER/MODEL] [--session ID]
//
// with the prompt on standard input: "opencode run" reads a standard input
// that is not a terminal to its end and takes it as the message, so the
// prompt never goes on the command line.
//
// No permission flag: opencode allows edits and commands inside the working
// directory by default, and "run" rejects by itself whatever would ask
// (files outside the directory, .env files, doom loops), so a call never
// waits for an answer. The flags that approve those too changed name
// (--dangerously-skip-permissions, then --auto) and are refused as unknown
// arguments by the versions without them.
func opencodeSpec() cliSpec {
	return cliSpec{
		name: "opencode",
		bin:  "opencode",
		// 1.0 has "run --format json" with the step_start / text /
		// step_finish / error events and a piped standard input as message.
		minVersion: version{1, 0, 0},
		build: func(req Request, _ func() (string, error)) (invocation, error) {
			args := []string{"run", "--format", "json"}
			if req.Model != "" {
				args = append(args, "-m", req.Model)
			}
			if req.SessionID != "" {
				args = append(args, "--session", req.SessionID)
			}
			return invocation{Args: args, Stdin: &req.Prompt}, nil
		},
		newParser: func() streamParser { return &opencodeParser{text: newReply()} },
		activity:  opencodeActivity,
		// No probe: providers get their keys from "opencode auth", from
		// environment variables or from the config (OPENCODE_CONFIG_CONTENT,
		// opencode.json); "opencode auth list" sees only some of them.
	}
}

// opencodeParser reads the JSON lines of "opencode run --format json".
type opencodeParser struct {
	text    *reply
	newStep bool // a step started and has no text yet
	session string
	usage   Usage
	err     *opencodeError
	errAt   time.Time
	other   otherLines
}

type opencodeError struct {
	Name string `json:"name"`
	Data struct {
		Message         string         `json:"message"`
		StatusCode      int            `json:"statusCode"`
		ResponseHeaders map[string]any `json:"responseHeaders"`
	} `json:"data"`
}

func (p *opencodeParser) Line(line []byte, cut bool) {
	typ, ok := eventType(line)
	if !ok {
		p.other.add(line)
		return
	}
	var ev struct {
		SessionID string          `json:"sessionID"`
		Timestamp json.RawMessage `json:"timestamp"`
		Part      struct {
			Text   string          `json:"text"`
			Cost   json.RawMessage `json:"cost"`
			Tokens *struct {
				Input     int64 `json:"input"`
				Output    int64 `json:"output"`
				Reasoning int64 `json:"reasoning"`
				Cache     struct {
					Read  int64 `json:"read"`
					Write int64 `json:"write"`
				} `json:"cache"`
			} `json:"tokens"`
		} `json:"part"`
		Error *opencodeError `json:"error"`
	}
	if !decode(line, &ev) {
		return
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch typ {
	case "step_start":
		p.newStep = true
	case "text":
		// The reply is the text of the last step that had any.
		if p.newStep || p.text.empty() {
			p.text.set(ev.Part.Text, cut)
			p.newStep = false
		} else {
			p.text.add("\n\n"+ev.Part.Text, cut)
		}
	case "step_finish":
		if t := ev.Part.Tokens; t != nil {
			// input excludes cache reads and writes, output excludes
			// reasoning: add them back.
			p.usage.InputTokens += t.Input + t.Cache.Read + t.Cache.Write
			p.usage.OutputTokens += t.Output + t.Reasoning
		}
		var cost float64
		if string(ev.Part.Cost) != "null" && json.Unmarshal(ev.Part.Cost, &cost) == nil {
			p.usage.CostUSD += cost
			p.usage.CostKnown = true
		}
	case "error":
		if ev.Error != nil {
			p.err, p.errAt = ev.Error, parseTime(ev.Timestamp)
		}
	}
}

func (p *opencodeParser) Finish(end callEnd) Response {
	r := Response{SessionID: p.session, Usage: p.usage}
	p.text.fill(&r)
	if end.Stopped {
		return r
	}
	if p.err == nil && end.ExitCode == 0 {
		return r
	}
	if e := p.err; e != nil {
		now := orNow(p.errAt)
		msg := e.Data.Message
		if msg == "" {
			msg = e.Name
		}
		switch {
		case e.Data.StatusCode >= 400:
			r.Failure = classifyStatusAt(e.Data.StatusCode, msg, now)
			r.Failure.Message = failureLine(msg)
			if r.Failure.Kind == FailRateLimit {
				if t := headerReset(e.Data.ResponseHeaders, now); !t.IsZero() {
					r.Failure.ResetAt = t
				}
			}
		case strings.Contains(e.Name, "Auth") || strings.Contains(e.Name, "APIKey"): // ProviderAuthError, LoadAPIKeyError
			r.Failure = &Failure{Kind: FailAuth, Message: failureLine(msg)}
		case e.Name == "APIError":
			r.Failure = textFailure(msg, now, FailAPI)
		default: // UnknownError, MessageAbortedError, ...
			r.Failure = textFailure(e.Name+": "+msg, now, FailCrash)
		}
		return r
	}
	r.Failure = fallbackFailure(end, p.other)
	return r
}

// headerReset reads when a rate limit resets from the response headers a
// provider sent: the rate-limit reset headers (x-ratelimit-reset-requests:
// "5328s", anthropic-ratelimit-tokens-reset: RFC 3339, ...) of the limits
// that are exhausted (all of them when none says), the latest one; else
// Retry-After / retry-after-ms, which may only be a retry pause. Relative
// values count from the Date header, else from now.
func headerReset(h map[string]any, now time.Time) time.Time {
	hdr := make(map[string]string, len(h))
	for k, v := range h {
		hdr[strings.ToLower(k)] = strings.TrimSpace(fmt.Sprint(v))
	}
	base := now
	if t, err := http.ParseTime(hdr["date"]); err == nil {
		base = t
	}
	var latest, latestExhausted time.Time
	for k, v := range hdr {
		if !strings.Contains(k, "ratelimit") || !strings.Contains(k, "reset") {
			continue
		}
		t := headerTime(v, base)
		if t.After(latest) {
			latest = t
		}
		if hdr[strings.Replace(k, "reset", "remaining", 1)] == "0" && t.After(latestExhausted) {
			latestExhausted = t
		}
	}
	switch {
	case !latestExhausted.IsZero():
		return latestExhausted
	case !latest.IsZero():
		return latest
	}
	if ms, err := strconv.ParseFloat(hdr["retry-after-ms"], 64); err == nil && ms > 0 {
		return base.Add(time.Duration(ms * float64(time.Millisecond))).Truncate(time.Second)
	}
	if v := hdr["retry-after"]; v != "" {
		if t, err := http.ParseTime(v); err == nil {
			return t
		}
		return headerTime(v, base)
	}
	return time.Time{}
}

// headerTime reads a reset header value: an RFC 3339 time, a Go-style
// duration ("5328s", "6m0s", "20ms"), or seconds (Unix seconds when large).
func headerTime(v string, base time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return base.Add(d).Truncate(time.Second)
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
		if n > 1e9 {
			return time.Unix(int64(n), 0)
		}
		return base.Add(time.Duration(n * float64(time.Second))).Truncate(time.Second)
	}
	return time.Time{}
}

// opencodeActivity reads an event of opencode run --format json (and of
// Kilo's): text parts, and tool_use parts, which it reports with their
// state (running, completed or error).
func opencodeActivity(a *activityReader, line []byte) {
	var ev struct {
		Type string `json:"type"`
		Part struct {
			ID     string `json:"id"`
			Text   string `json:"text"`
			Tool   string `json:"tool"`
			CallID string `json:"callID"`
			State  struct {
				Status string          `json:"status"`
				Input  json.RawMessage `json:"input"`
			} `json:"state"`
		} `json:"part"`
	}
	if !decode(line, &ev) {
		return
	}
	p := ev.Part
	switch ev.Type {
	case "text":
		if p.Text != "" {
			a.text(p.ID, p.Text)
		}
	case "tool_use":
		id := cmp.Or(p.CallID, p.ID)
		a.start(id, p.Tool, p.State.Input)
		if st := p.State.Status; st == "completed" || st == "error" {
			a.end(id, st == "error")
		}
	}
}
